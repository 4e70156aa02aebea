/**
 * The real codex CLI (pinned @openai/codex) against the scripted model server on 127.0.0.1, through the
 * agent-harness Vitest fixtures (`model`, `agent`) like a user's tests.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { test, turns } from '../../src/public/vitest.js';
import { resolveRunSelector } from '../../src/runtime/run-store.js';
import { expectCompleteAudit } from '../helpers/audit.js';

/** Names in the real HOME and the mtime of its `.codex` (engine config a leak would create or touch). */
function realHomeState(): { names: string[]; codexMtime: number | null } {
  const home = os.homedir();
  const names = fs.existsSync(home) ? fs.readdirSync(home).sort() : [];
  const codex = path.join(home, '.codex');
  return { names, codexMtime: fs.existsSync(codex) ? fs.statSync(codex).mtimeMs : null };
}

describe('codex engine (real binary, scripted model)', () => {
  test('starts, runs a shell tool call, completes with the done marker, then resumes by handle in the same run', async ({ model, agent, harness }) => {
    const realHomeBefore = realHomeState();
    model.script(
      turns.shell("printf 'hello from agent-harness\\n' > hello.txt"),
      turns.final('Wrote hello.txt.'),
      turns.shell("printf 'again\\n' >> hello.txt"),
      turns.final('Appended to hello.txt.'),
    );
    const run = await agent.start('codex', { prompt: 'Use the demo-hello skill.', translateMode: 3 });
    const first = run.last;
    expect(first.error).toBeNull();
    expect(first.completion).toEqual({ state: 'completed', reason: 'done_marker' });
    expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.attempt).toBe(1);
    expect(first.toolCalls).toHaveLength(1);
    expect(first.toolCalls[0]).toMatchObject({ kind: 'shell', exitCode: 0 });
    expect(run).toHaveFinalMessage('Wrote hello.txt.');
    expect(run).toHaveChangedFiles(['hello.txt']);
    expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\n');
    const meta1 = expectCompleteAudit(first.audit);
    expect(meta1.skill_injection.skills.map((s) => s.name)).toContain('demo-hello');
    expect(meta1.config_injection).toMatchObject({ engine: 'codex', profile: 'agent-harness' });
    expect(meta1.trust?.removed_at).not.toBeNull();
    expect(meta1.env.HOME).toBe(harness.paths.agentHome);
    expect(Object.keys(meta1.env)).not.toContain('OPENAI_API_KEY');

    // The injected skill reached the model: codex lists skills in a developer message of its request.
    expect(JSON.stringify(model.requests.find((r) => r.wire === 'openai-responses')?.body)).toContain('demo-hello');
    expect(model.egress).toEqual([]);

    // Resume by handle: attempt 2 in the same run dir, same thread id.
    expect((await resolveRunSelector(harness.paths.runRoot, first.handle)).run_dir).toBe(first.runDir);
    await run.resume('Append another line.');
    const second = run.last;
    expect(second.error).toBeNull();
    expect(second.runDir).toBe(first.runDir);
    expect(second.attempt).toBe(2);
    expect(second.sessionId).toBe(first.sessionId);
    expect(run).toHaveCompleted();
    expect(second.fsDiff?.modified).toContain('hello.txt');
    expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\nagain\n');
    expectCompleteAudit(second.audit);
    expect(second.fcmp[0]!.seq).toBeGreaterThan(first.fcmp.at(-1)!.seq);
    expect(run).toHaveFcmpSequence(['conversation.started', 'user.input.replied', 'assistant.message.final', 'conversation.completed']);
    // Attempt 1's files are untouched by attempt 2.
    expect(JSON.parse(fs.readFileSync(first.audit.meta, 'utf8')).attempt).toBe(1);
    // The real host HOME got no engine config.
    expect(realHomeState()).toEqual(realHomeBefore);
  });

  test('waits for input when the turn ends without the done marker', async ({ model, agent }) => {
    model.script(turns.text('Which file should I write?'));
    const run = await agent.start('codex', { prompt: 'do something' });
    expect(run.completion).toEqual({ state: 'awaiting_input', reason: 'turn_end_without_done_marker' });
    expect(run.fcmp.at(-1)?.type).toBe('user.input.required');
    expectCompleteAudit(run.audit);
  });

  test('fails the attempt on a model error and still writes every audit file', async ({ model, agent }) => {
    model.script(turns.error(500, 'scripted upstream failure'));
    const run = await agent.start('codex', { prompt: 'hi', timeoutMs: 120_000 });
    expect(run.completion.state).toBe('failed');
    expect(run.fcmp.at(-1)?.type).toBe('conversation.failed');
    const meta = expectCompleteAudit(run.audit);
    expect(meta.completion?.state).toBe('failed');
    expect(meta.exit).not.toBeNull();
    expect(fs.statSync(run.audit.stdout).size).toBeGreaterThan(0);
  });

  test('loads a skill and writes a file through the script intents', async ({ model, agent }) => {
    model.script(turns.useSkill('demo-hello'), turns.writeFile('hello.txt', 'hello from the skill\n'), turns.final('Done with demo-hello.'));
    const run = await agent.start('codex', { prompt: 'Use the demo-hello skill.' });
    expect(run).toHaveCompleted();
    expect(run).toHaveUsedSkill('demo-hello');
    expect(run.toolCalls[0]?.output).toContain('demo-hello');
    expect(run).toHaveChangedFiles(['hello.txt']);
    expect(fs.readFileSync(path.join(run.runDir, 'hello.txt'), 'utf8')).toBe('hello from the skill\n');
  });
});
