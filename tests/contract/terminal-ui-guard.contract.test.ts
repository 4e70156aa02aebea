/**
 * An engine that draws its full-screen terminal UI into a pipe (split io) is ended at once with ENGINE_NEEDS_TERMINAL,
 * instead of waiting for keys until the attempt's timeout, silently (`agent-harness start opencode --prompt x` hands
 * `--prompt` to opencode, whose UI then waits). What counts: the alternate-screen switch and the cursor-position
 * query, also cut between two chunks; never a JSON-escaped one in an event, nor colours.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTerminalUiGuard, terminalUiSequence } from '../../src/core/terminal-ui-guard.js';
import type { RaspEvent } from '../../src/protocol/index.js';
import { judgeCompletion } from '../../src/translate/completion.js';
import { createCliSandbox, installFakeEngine, runCliProcess } from '../helpers/cli.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('terminalUiSequence', () => {
  it('sees the alternate screen and the cursor-position query, alone or after the end of the last chunk', () => {
    expect(terminalUiSequence(bytes('\u001b[?2031h\u001b[?1049h\u001b[?25l'))).toMatch(/alternate screen/);
    expect(terminalUiSequence(bytes('x\u001b[6n'))).toMatch(/cursor position/);
    expect(terminalUiSequence(bytes('049h rest'), bytes('drawn \u001b[?1'))).toMatch(/alternate screen/);
    expect(terminalUiSequence(bytes('n'), bytes('\u001b[6'))).toMatch(/cursor position/);
  });

  it('sees nothing in events, colours or other escapes', () => {
    // A JSON event holds an ESC escaped, never raw.
    expect(
      terminalUiSequence(bytes(`${JSON.stringify({ type: 'item', text: '\u001b[6n \u001b[?1049h' })}\n`)),
    ).toBeNull();
    expect(terminalUiSequence(bytes('\u001b[31mred\u001b[0m \u001b[?25l \u001b[2J'))).toBeNull();
    expect(terminalUiSequence(bytes('6n'), bytes('[?1049h'))).toBeNull();
  });

  it('a guard fires once, with the error that names the engine, the stream and the way out', () => {
    const found: string[] = [];
    const guard = startTerminalUiGuard('opencode', (error) => found.push(error.code));
    guard.output('stdout', bytes('{"type":"step_start"}\n\u001b[?10'));
    expect(guard.error).toBeNull();
    expect(guard.signal.aborted).toBe(false);
    guard.output('stdout', bytes('49h'));
    guard.output('stderr', bytes('\u001b[6n'));
    expect(found).toEqual(['ENGINE_NEEDS_TERMINAL']);
    expect(guard.signal.aborted).toBe(true);
    expect(guard.signal.reason).toBe(guard.error);
    expect(guard.error?.message).toMatch(
      /^opencode started its terminal UI without a terminal: its stdout \(a pipe\) switched to the alternate screen/,
    );
    expect(guard.error?.message).toContain('agent-harness start --prompt "…" opencode');
  });

  it("the guard's diagnostic is the verdict once the engine exited: failed, needs_terminal, category protocol", () => {
    const ref = { stream: 'stdout', from: 0, to: 0 } as const;
    const events = [
      { seq: 1, data: { type: 'engine.turn.started' } },
      {
        seq: 2,
        data: {
          type: 'diagnostic',
          diagnostic: { code: 'ENGINE_NEEDS_TERMINAL', message: 'drew its UI', level: 'error' },
        },
      },
      {
        seq: 3,
        data: {
          type: 'lifecycle.exited',
          exit_code: null,
          signal: 'SIGKILL',
          timed_out: false,
          canceled: false,
          duration_ms: 5,
        },
      },
    ].map((event) => ({ ...event, ts: '2026-11-30T00:00:00.000Z', raw_ref: ref }) as unknown as RaspEvent);
    expect(judgeCompletion(events, { errorPatterns: [] })).toMatchObject({
      state: 'failed',
      reason: 'needs_terminal',
      failure: { category: 'protocol', code: 'ENGINE_NEEDS_TERMINAL', message: 'drew its UI' },
      evidenceSeq: 2,
    });
  });
});

describe('agent-harness start with an engine that draws its UI into the pipe', () => {
  const sandbox = createCliSandbox();
  afterAll(() => sandbox.cleanup());

  it('ends the attempt with ENGINE_NEEDS_TERMINAL long before its timeout, and says how to run it headless', () => {
    const screen = path.join(sandbox.root, 'tui.out');
    fs.writeFileSync(screen, '\u001b[?2031h\u001b[s\u001b[?1049h\u001b[?25l\u001b[Hopencode\r\n');
    // A UI that waits for keys (SIGTERM ignored, as a busy one may): without the guard it runs to the timeout.
    installFakeEngine(sandbox, 'opencode', { stdoutFile: screen, hangAfterOutput: true });
    const run = runCliProcess(sandbox, [
      'start',
      '--timeout-ms',
      '600000',
      '--translate',
      '2',
      'opencode',
      '--prompt',
      'x',
    ]);
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toMatch(
      /agent-harness: error ENGINE_NEEDS_TERMINAL: opencode started its terminal UI without a terminal/,
    );
    const runs = path.join(sandbox.root, '.agent-harness', 'harness_runs');
    const [runId] = fs.readdirSync(runs);
    const meta = JSON.parse(fs.readFileSync(path.join(runs, runId!, '.audit', 'meta.1.json'), 'utf8'));
    expect(meta.completion).toMatchObject({ state: 'failed', reason: 'needs_terminal', code: 'ENGINE_NEEDS_TERMINAL' });
    // The UI's bytes are kept in the audit, as every engine output is.
    expect(fs.readFileSync(path.join(runs, runId!, '.audit', 'stdout.1.log'), 'utf8')).toContain('\u001b[?1049h');
  });
});
