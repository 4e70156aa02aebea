/**
 * The providers (seed 003) over the real CLIs on the scripted model: events stream while the engine runs, a
 * session resumes by id, and an abort ends the stream with an error event and a complete audit.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getProvider } from '../../src/providers/index.js';
import { AgentEventSchema, type AgentEvent, type EngineId } from '../../src/protocol/index.js';
import { expectCompleteAudit } from '../helpers/audit.js';
import { attemptAuditPaths } from '../../src/core/audit-files.js';

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-providers-'));
afterAll(() => fs.rmSync(runRoot, { recursive: true, force: true }));

const ENGINES: readonly EngineId[] = ['codex', 'claude', 'gemini', 'opencode'];
const script = (...turns: object[]) => ({ version: 1, turns });

describe.for(ENGINES)('%s provider', (engine) => {
  it('streams session, tool_use, tool_result and text while the engine runs, then complete with success; resumes by session id', async () => {
    const events: AgentEvent[] = [];
    let statusAtFirstMessage: string | null = null;
    const extra = { runRoot, script: script({ type: 'shell', command: "printf 'one\\n' > one.txt" }, { type: 'final', text: 'Wrote one.txt.' }, { type: 'final', text: 'Second turn.' }) };
    for await (const event of getProvider(engine).query({ provider: engine, prompt: 'Write one.txt.', extra })) {
      AgentEventSchema.parse(event);
      if (event.type === 'message' && statusAtFirstMessage === null) {
        // The first message arrives before the attempt is over: its meta still says running.
        const runDir = fs.readdirSync(runRoot).map((d) => path.join(runRoot, d)).find((d) => fs.existsSync(path.join(d, '.audit', 'meta.1.json')) && d.includes(`-${engine}-`));
        statusAtFirstMessage = runDir ? JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8')).status : 'no run dir';
      }
      events.push(event);
    }
    expect(statusAtFirstMessage).toBe('running');
    expect(events[0]?.type).toBe('session');
    const kinds = events.filter((e) => e.type === 'message').map((e) => e.content?.kind);
    expect(kinds).toEqual(expect.arrayContaining(['tool_use', 'tool_result', 'text']));
    expect(kinds.indexOf('tool_use')).toBeLessThan(kinds.indexOf('tool_result'));
    const complete = events.at(-1)!;
    expect(complete).toMatchObject({ type: 'complete', result: { success: true } });
    const sessionId = events[0]!.sessionId!;
    const { runDir } = complete.diagnostics as { runDir: string };
    expect(fs.readFileSync(path.join(runDir, 'one.txt'), 'utf8')).toBe('one\n');
    expectCompleteAudit(attemptAuditPaths(runDir, 1));

    const resumed: AgentEvent[] = [];
    for await (const event of getProvider(engine).query({ provider: engine, prompt: 'And now?', resumeSessionId: sessionId, extra: { runRoot } })) resumed.push(event);
    expect(resumed.at(-1)).toMatchObject({ type: 'complete', sessionId, result: { success: true } });
    expect((resumed.at(-1)!.diagnostics as { runDir: string }).runDir).toBe(runDir);
    expectCompleteAudit(attemptAuditPaths(runDir, 2));
  });

  it('an abort during a tool call ends the stream with an error event, the audit complete', async () => {
    const controller = new AbortController();
    const events: AgentEvent[] = [];
    const extra = { runRoot, script: script({ type: 'shell', command: 'sleep 30' }, { type: 'final', text: 'done' }) };
    for await (const event of getProvider(engine).query({ provider: engine, prompt: 'Sleep.', signal: controller.signal, extra })) {
      events.push(event);
      if (event.type === 'message' && event.content?.kind === 'tool_use') controller.abort();
    }
    expect(events.at(-1)).toMatchObject({ type: 'error' });
    expect(events.some((e) => e.type === 'complete')).toBe(false);
    const { runId } = events.at(-1)!.diagnostics as { runId: string };
    const meta = expectCompleteAudit(attemptAuditPaths(path.join(runRoot, runId), 1));
    expect(meta.completion).toMatchObject({ state: 'failed', code: 'ENGINE_CANCELED' });
  });
});
