/**
 * The drift report's comparison (src/report/engine-drift.ts, used by `npm run test:engines -- --latest`): the same
 * probe case on the pinned and the newest release of an engine, compared on the normalized stream, tool names,
 * unknown events and the flags the CLI lists. Fed with audit records shaped as the harness writes them.
 */
import { describe, expect, it } from 'vitest';
import {
  compareDriftCase,
  helpFlags,
  lineDiff,
  normalizeFcmpEvent,
  unknownEvents,
} from '../../src/report/engine-drift.js';

const fcmp = (seq: number, type: string, data: Record<string, unknown>) => ({
  protocol_version: 'fcmp/1.0',
  run_id: `run-${seq}`,
  seq,
  ts: `2026-11-29T07:00:0${seq}.000Z`,
  engine: 'claude',
  type,
  data,
});
const unknown = (code: string, message: string) => ({
  data: { type: 'diagnostic', diagnostic: { code, message, level: 'info' } },
});

describe('engine drift: pinned against newest on the same case', () => {
  it('ignores ids and times, and reports a changed tool name, a new event and the unknown events of the newest', () => {
    const pinned = {
      exit: 0,
      meta: { engine_version: '2.1.197', completion: { state: 'completed', reason: 'done_marker' } },
      fcmp: [
        fcmp(1, 'conversation.started', { launch: 'start' }),
        fcmp(2, 'tool.call', { call_id: 'toolu_1', kind: 'shell', name: 'Bash', command: 'echo hi' }),
        fcmp(3, 'tool.result', { call_id: 'toolu_1', status: 'completed', exit_code: 0, output_excerpt: 'a' }),
        fcmp(4, 'assistant.message.final', { message_id: 'm1#0', text: 'done' }),
        fcmp(5, 'conversation.completed', { reason: 'done_marker' }),
      ],
      rasp: [],
    };
    const latest = {
      exit: 0,
      meta: { engine_version: '2.1.332', completion: { state: 'completed', reason: 'done_marker' } },
      fcmp: [
        fcmp(1, 'conversation.started', { launch: 'start' }),
        fcmp(2, 'tool.call', { call_id: 'toolu_9', kind: 'shell', name: 'Shell', command: 'echo hi' }),
        fcmp(3, 'tool.result', { call_id: 'toolu_9', status: 'completed', exit_code: 0, output_excerpt: 'b' }),
        fcmp(4, 'assistant.message.final', { message_id: 'm7#0', text: 'done' }),
        fcmp(5, 'conversation.completed', { reason: 'done_marker' }),
      ],
      rasp: [
        unknown('CLAUDE_UNKNOWN_EVENT', 'unknown claude system subtype "plan_update"'),
        unknown('CLAUDE_UNKNOWN_EVENT', 'unknown claude system subtype "plan_update"'),
        unknown('ENGINE_STDERR', 'not an unknown event'),
      ],
    };
    const same = compareDriftCase(pinned, {
      ...pinned,
      fcmp: pinned.fcmp.map((e) => ({ ...e, run_id: 'other', ts: 'x' })),
    });
    expect(same.fcmp_changes).toEqual([]);
    const drift = compareDriftCase(pinned, latest);
    expect(drift.pinned).toMatchObject({
      verdict: 'completed',
      engine_version: '2.1.197',
      tools: ['Bash'],
      unknown: [],
    });
    expect(drift.latest).toMatchObject({ engine_version: '2.1.332', tools: ['Shell'] });
    expect(drift.latest.unknown).toEqual(['CLAUDE_UNKNOWN_EVENT: unknown claude system subtype "plan_update"']);
    expect(drift.fcmp_changes).toEqual([
      '- tool.call {"kind":"shell","name":"Bash","command":"echo hi"}',
      '+ tool.call {"kind":"shell","name":"Shell","command":"echo hi"}',
    ]);
  });

  it('says no_run for a probe that wrote no audit', () => {
    const drift = compareDriftCase({ exit: 1, error: 'spawn failed' }, { exit: 0, fcmp: [], meta: {} });
    expect(drift.pinned.verdict).toBe('no_run');
    expect(drift.latest.verdict).toBe('unknown');
  });

  it('diffs lines in order, and normalizes events it has no stable keys for to their type', () => {
    expect(lineDiff(['a', 'b', 'c'], ['a', 'c', 'd'])).toEqual(['- b', '+ d']);
    expect(lineDiff([], [])).toEqual([]);
    expect(normalizeFcmpEvent(fcmp(1, 'diagnostic.warning', { code: 'X', message: 'changes every run' }))).toBe(
      'diagnostic.warning',
    );
    expect(unknownEvents([unknown('STREAM_PARSE_ERROR', 'stdout line is not JSON: x')])).toHaveLength(1);
  });

  it('reads the flags a --help text lists', () => {
    const help = 'Usage: qwen [options]\n  -m, --model  Model\n      --max-session-turns  N\n  see e-mail or a-b';
    expect(helpFlags(help)).toEqual(['--max-session-turns', '--model', '-m']);
  });
});
