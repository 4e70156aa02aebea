/**
 * A tool call whose process outlived the turn is visible as such: `running` while the attempt runs, `abandoned`
 * when it ended with no result — in FCMP (a `tool.result` with status `abandoned` and a `TOOL_CALL_ABANDONED`
 * warning), in the attempt's tool calls (what a Vitest test reads) and in the report's timeline. The RASP is the
 * shape of codex 0.169's stream when a scripted final turn ended the turn while `sleep 45` still ran (its
 * `command_execution` started, never completed). No engine is started.
 */
import { describe, expect, it } from 'vitest';
import type { RaspData, RaspEvent } from '../../src/protocol/index.js';
import { raspEvents } from '../helpers/rasp-events.js';
import { TimelineBuilder } from '../../src/report/rasp-timeline.js';
import { createFcmpTranslator, translateRaspToFcmp } from '../../src/translate/fcmp.js';
import { toolCallsOf } from '../../src/translate/fcmp-tool-calls.js';
import type { AttemptEvent } from '../../src/translate/attempt-events.js';

const rasp = (...data: RaspData[]): RaspEvent[] => raspEvents('codex', ...data);

const slow: RaspData = {
  type: 'engine.tool.call',
  call_id: 'item_0#1',
  kind: 'shell',
  name: 'command_execution',
  input: { command: "/bin/bash -lc 'sleep 45; echo done > slow.txt'" },
};
const quick: RaspData = {
  type: 'engine.tool.call',
  call_id: 'item_1#1',
  kind: 'shell',
  name: 'command_execution',
  input: { command: "/bin/bash -lc 'true'" },
};
const quickResult: RaspData = {
  type: 'engine.tool.result',
  call_id: 'item_1#1',
  status: 'completed',
  output: '',
  exit_code: 0,
};
const events = rasp(
  { type: 'lifecycle.started', launch: 'start', argv: [], cwd: '/', pid: null, io: 'split' },
  { type: 'engine.session', session_id: 's1' },
  { type: 'engine.turn.started' },
  slow,
  quick,
  quickResult,
  { type: 'engine.assistant.message', message_id: 'm1', text: 'ok\n__SKILL_DONE__', final: true },
  { type: 'engine.turn.end', status: 'completed', error: null },
  {
    type: 'lifecycle.exited',
    exit_code: 0,
    signal: null,
    timed_out: false,
    canceled: false,
    duration_ms: 10_000,
  },
);

describe('a tool call whose process outlived the turn', () => {
  it('FCMP ends it with an abandoned tool.result and a TOOL_CALL_ABANDONED warning; the verdict stands', () => {
    const fcmp = translateRaspToFcmp(events, {
      runId: 'r',
      engine: 'codex',
      attempt: 1,
      seqStart: 0,
      launch: 'start',
      errorPatterns: [],
    });
    const results = fcmp.filter((e) => e.type === 'tool.result').map((e) => e.data);
    expect(results).toEqual([
      { call_id: 'item_1#1', status: 'completed', exit_code: 0, output_excerpt: '' },
      { call_id: 'item_0#1', status: 'abandoned', exit_code: null, output_excerpt: null },
    ]);
    const warnings = fcmp.filter((e) => e.type === 'diagnostic.warning').map((e) => e.data);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: 'TOOL_CALL_ABANDONED', level: 'warning' });
    expect(warnings[0]!.message).toContain('sleep 45; echo done > slow.txt');
    // Before the terminal event, which is still the verdict's.
    expect(fcmp.at(-1)).toMatchObject({ type: 'conversation.completed', data: { reason: 'done_marker' } });
  });

  /** The attempt's events in their live order, up to (not including) RASP event `upTo`, then its end when `end`. */
  const live = (upTo: number, end: boolean): AttemptEvent[] => {
    const translator = createFcmpTranslator({
      runId: 'r',
      engine: 'codex',
      attempt: 1,
      seqStart: 0,
      launch: 'start',
      errorPatterns: [],
    });
    const out: AttemptEvent[] = [];
    for (const event of events.slice(0, upTo)) out.push(event, ...translator.push(event));
    if (end) out.push(...translator.finish());
    return out;
  };
  const fcmpOf = (list: AttemptEvent[]) => list.filter((e) => 'type' in e);

  it('is running in the tool calls while the attempt runs and abandoned once it ended', () => {
    const running = toolCallsOf(fcmpOf(live(events.length - 1, false)));
    expect(running.map((c) => [c.command, c.status])).toEqual([
      ['sleep 45; echo done > slow.txt', 'running'],
      ['true', 'completed'],
    ]);
    const ended = toolCallsOf(fcmpOf(live(events.length, true)), events);
    expect(ended.map((c) => [c.command, c.status, c.exitCode])).toEqual([
      ['sleep 45; echo done > slow.txt', 'abandoned', null],
      ['true', 'completed', 0],
    ]);
  });

  it("is running in the report's timeline until the attempt ends, then abandoned", () => {
    const timeline = new TimelineBuilder();
    for (const event of live(events.length, false)) timeline.push(event);
    const statuses = () => timeline.items.flatMap((item) => (item.tool ? [[item.tool.command, item.tool.status]] : []));
    expect(statuses()).toEqual([
      ['sleep 45; echo done > slow.txt', 'running'],
      ['true', 'completed'],
    ]);
    for (const event of live(events.length, true).slice(live(events.length, false).length)) timeline.push(event);
    expect(statuses()).toEqual([
      ['sleep 45; echo done > slow.txt', 'abandoned'],
      ['true', 'completed'],
    ]);
  });
});
