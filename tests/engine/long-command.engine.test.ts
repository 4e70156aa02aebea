/**
 * A shell command that outlives codex's exec yield (10 s): `turns.shell(...)` runs it to its end — the scripted model
 * polls it with codex's own `write_stdin` until it exits — and with `wait: false` the turn ends while it runs, the
 * call ends up `abandoned` with a TOOL_CALL_ABANDONED warning. codex only: claude's Bash, gemini's
 * run_shell_command and opencode's bash return only when the command ended. `sleep 12` is the shortest command
 * that always outlives the yield.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { test, turns } from '../../src/public/vitest.js';

const COMMAND = 'sleep 12; echo done > slow.txt';

describe('codex: a command longer than the exec yield', () => {
  test('turns.shell waits for it: the command finished, its result is in, no warning', async ({ model, agent }) => {
    model.script(turns.shell(COMMAND), turns.final('ok'));
    const run = await agent.start('codex', { prompt: 'Run the slow command.' });
    expect(run.error).toBeNull();
    expect(run).toHaveCompleted();
    expect(fs.readFileSync(path.join(run.runDir, 'slow.txt'), 'utf8')).toBe('done\n');
    expect(run.toolCalls.map((c) => [c.command, c.status, c.exitCode])).toEqual([[COMMAND, 'completed', 0]]);
    expect(model.requests.map((r) => r.response_kind)).toContain('poll');
    const fcmp = run.fcmp;
    expect(fcmp.some((e) => e.type === 'diagnostic.warning' && e.data.code === 'TOOL_CALL_ABANDONED')).toBe(false);
  });

  test('with wait: false the turn ends while it runs: the call is abandoned, with a warning', async ({
    model,
    agent,
  }) => {
    model.script(turns.shell(COMMAND, { wait: false }), turns.final('ok'));
    const run = await agent.start('codex', { prompt: 'Run the slow command.' });
    expect(run.error).toBeNull();
    expect(model.requests.map((r) => r.response_kind)).not.toContain('poll');
    expect(run.toolCalls.map((c) => [c.command, c.status, c.exitCode])).toEqual([[COMMAND, 'abandoned', null]]);
    const callId = run.toolCalls[0]!.callId;
    expect(run.fcmp.filter((e) => e.type === 'tool.result').map((e) => e.data)).toEqual([
      { call_id: callId, status: 'abandoned', exit_code: null, output_excerpt: null },
    ]);
    const warning = run.fcmp.find((e) => e.type === 'diagnostic.warning' && e.data.code === 'TOOL_CALL_ABANDONED');
    expect(warning?.data).toMatchObject({ level: 'warning' });
    expect(JSON.stringify(warning?.data)).toContain(COMMAND);
  });
});
