/**
 * An engine that cannot be started is judged as one: the verdict is `ENGINE_SPAWN_FAILED` (in the completion, FCMP's
 * `conversation.failed` and the provider's events), not `ENGINE_EXITED_WITHOUT_TURN_END` with `exit {code: null}`.
 * Forced with a prompt too big for argv (10 MB: Linux refuses an argument over 128 KiB with E2BIG), through the
 * provider API. The engine never starts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/protocol/index.js';
import { getProvider } from '../../src/providers/index.js';

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-spawn-failed-'));
afterAll(() => fs.rmSync(runRoot, { recursive: true, force: true }));

describe('an engine that cannot start', () => {
  it('a 10 MB prompt through the provider fails with ENGINE_SPAWN_FAILED, in the events and the audit', async () => {
    const events: AgentEvent[] = [];
    for await (const event of getProvider('codex').query({
      provider: 'codex',
      prompt: 'x'.repeat(10 * 1024 * 1024),
      extra: { runRoot },
    }))
      events.push(event);
    const complete = events.at(-1)!;
    expect(complete).toMatchObject({
      type: 'complete',
      result: { success: false },
      diagnostics: { completion: { state: 'failed', reason: 'spawn_failed', code: 'ENGINE_SPAWN_FAILED' } },
    });
    expect(events.find((e) => e.type === 'error')?.error).toMatch(/Could not start .*E2BIG/);
    const { runDir } = complete.diagnostics as { runDir: string };
    const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
    expect(meta.completion).toMatchObject({ state: 'failed', code: 'ENGINE_SPAWN_FAILED' });
    const fcmp = fs
      .readFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(fcmp.at(-1)).toMatchObject({
      type: 'conversation.failed',
      data: { category: 'engine_crash', code: 'ENGINE_SPAWN_FAILED' },
    });
  });
});
