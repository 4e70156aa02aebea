/**
 * The engine matrix: every real CLI (pinned devDependencies) against the scripted model server on 127.0.0.1,
 * through the agent-harness Vitest fixtures exactly as a user's tests run them. One `describe.for` over the
 * engines, so this repo's own consistency report covers every engine; engine-specific checks stay in
 * `<engine>.engine.test.ts`. iflow has no CLI in the registry reachable here: its row is a skip naming why.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { test, turns } from '../../src/public/vitest.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import type { EngineId } from '../../src/protocol/index.js';
import { resolveExecutable } from '../../src/runtime/executables.js';
import { readRunRecord, resolveRunSelector } from '../../src/runtime/run-store.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { expectCompleteAudit } from '../helpers/audit.js';
import { NETWORK_PROBE, pidsWithMarker, uniqueSleepSeconds } from '../helpers/processes.js';

const ENGINES: readonly EngineId[] = ['codex', 'claude', 'gemini', 'opencode', 'iflow'];

/**
 * The bookkeeping call each engine makes on every turn in scripted mode (gemini's model router, opencode's session
 * title); claude's are off with nonessential traffic disabled and codex makes none.
 */
const SIDE_REQUEST: Partial<Record<EngineId, string>> = { gemini: 'structured_output', opencode: 'title' };

/** The tools the `use_skill` and `write_file` intents become on each engine: its own where it has one, else shell. */
const INTENT_TOOLS: Partial<Record<EngineId, [string, string]>> = {
  codex: ['command_execution', 'command_execution'],
  claude: ['Skill', 'Write'],
  gemini: ['activate_skill', 'write_file'],
  opencode: ['bash', 'write'],
};

/**
 * A user-written start argv per engine that sets a model (and gemini a non-default output format): a resume
 * must keep both. `model` is what the engine then sends on the wire.
 */
const FLAGGED_START: Partial<Record<EngineId, { args: (prompt: string) => string[]; carried: string[]; model: string }>> = {
  codex: { args: (p) => ['exec', '--json', '--skip-git-repo-check', '-m', 'gpt-5.4', p], carried: ['-m', 'gpt-5.4'], model: 'gpt-5.4' },
  claude: { args: (p) => ['-p', p, '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', '--model', 'claude-sonnet-4-5'], carried: ['--model', 'claude-sonnet-4-5'], model: 'claude-sonnet-4-5' },
  gemini: { args: (p) => ['-p', p, '--output-format', 'json', '--yolo', '-m', 'gemini-2.5-flash'], carried: ['--output-format', 'json', '--yolo', '-m', 'gemini-2.5-flash'], model: 'gemini-2.5-flash' },
  opencode: { args: (p) => ['run', '--format', 'json', '-m', 'agent-harness/scripted', p], carried: ['-m', 'agent-harness/scripted'], model: 'scripted' },
};

/** The model a recorded request asked for (in the body, or in gemini's path). */
function requestedModel(request: { path: string; body: unknown }): string | null {
  const inBody = (request.body as { model?: unknown } | null)?.model;
  if (typeof inBody === 'string') return inBody;
  return /\/models\/([^/:]+):/.exec(request.path)?.[1] ?? null;
}

/** Why an engine cannot run here (its executable is missing), or null. */
function missingReason(engine: EngineId): string | null {
  try {
    resolveExecutable(engine, resolveHarnessPaths({ env: {}, projectRoot: process.cwd(), skillRoots: [] }));
    return null;
  } catch (error) {
    if (!isAgentHarnessError(error, 'ENGINE_EXECUTABLE_MISSING')) throw error;
    return `no ${engine} executable (the npm registry reachable here does not serve its CLI)`;
  }
}

/** Names in the real HOME (a leak would add engine config there). */
function realHomeNames(): string[] {
  const home = os.homedir();
  return fs.existsSync(home) ? fs.readdirSync(home).sort() : [];
}

describe.for(ENGINES)('%s engine (real binary, scripted model)', (engine) => {
  // An engine that cannot run here is skipped at run time with its reason, under the same test names as the
  // others, so its cells appear in the report's engine matrix as skipped.
  const missing = missingReason(engine);
  const it = test;
  const ready = (skip: (note?: string) => never): void => {
    if (missing) skip(missing);
  };

  it(`starts, runs a shell tool call, completes with the done marker, then resumes by handle`, async ({ model, agent, harness, skip }) => {
    ready(skip);
    const homeBefore = realHomeNames();
    model.script(turns.shell("printf 'hello from agent-harness\\n' > hello.txt"), turns.final('Wrote hello.txt.'));
    const run = await agent.start(engine, { prompt: 'Use the demo-hello skill.', translateMode: 3, onlySkills: ['demo-hello'] });
    const first = run.last;
    // Only the skill asked for is injected, and the engine offered it to the model.
    expect(run.skillsInjected).toEqual(['demo-hello']);
    expect(run).toHaveOfferedSkill('demo-hello');
    expect(run).not.toHaveOfferedSkill('csv-stats');
    expect(run.finalText).toBe('Wrote hello.txt.');
    expect(first.error).toBeNull();
    expect(first.completion).toEqual({ state: 'completed', reason: 'done_marker' });
    expect(first.sessionId).toBeTruthy();
    expect(first.toolCalls).toHaveLength(1);
    expect(first.toolCalls[0]).toMatchObject({ kind: 'shell' });
    expect(run).toHaveChangedFiles(['hello.txt']);
    expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\n');
    const meta1 = expectCompleteAudit(first.audit);
    expect(meta1.skill_injection.skills.map((s) => s.name)).toContain('demo-hello');
    expect(meta1.env.HOME).toBe(harness.paths.agentHome);
    if (meta1.trust) expect(meta1.trust.removed_at).not.toBeNull();
    expect(model.egress).toEqual([]);

    expect((await resolveRunSelector(harness.paths.runRoot, first.handle)).run_dir).toBe(first.runDir);
    // The resumed turn is scripted with the resume: it goes after the turns the session already used.
    await run.resume('Append another line.', { turns: [turns.shell("printf 'again\\n' >> hello.txt"), turns.final('Appended to hello.txt.')] });
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
    expect(JSON.parse(fs.readFileSync(first.audit.meta, 'utf8')).attempt).toBe(1);
    // run.json keeps the whole script inline, so `agent-harness resume <handle>` from a terminal gets it too.
    expect((await readRunRecord(first.runDir))?.script).toEqual(model.server.script);
    expect(realHomeNames()).toEqual(homeBefore);
  });

  it(`waits for input when the turn ends without the done marker`, async ({ model, agent, skip }) => {
    ready(skip);
    model.script(turns.text('Which file should I write?'));
    const run = await agent.start(engine, { prompt: 'do something' });
    expect(run.completion).toEqual({ state: 'awaiting_input', reason: 'turn_end_without_done_marker' });
    expect(run.fcmp.at(-1)?.type).toBe('user.input.required');
    expectCompleteAudit(run.audit);
  });

  it(`fails promptly on a scripted 429 with ENGINE_RATE_LIMITED; side requests never take the error turn`, async ({ model, agent, skip }) => {
    ready(skip);
    model.script(turns.error(429, 'Rate limit reached for the scripted model; resource exhausted'));
    // 30 s is far above the few seconds a prompt failure takes, and far below a backoff loop (opencode retried a
    // scripted 429 five times over 60 s before the server answered `retry-after-ms: 0`).
    const run = await agent.start(engine, { prompt: 'hi', timeoutMs: 30_000 });
    // Not ENGINE_TIMEOUT: the engine gave up on its own.
    expect(run.error).toBeNull();
    expect(run.last.timedOut).toBe(false);
    expect(run.completion).toMatchObject({ state: 'failed', code: 'ENGINE_RATE_LIMITED' });
    expect(run.fcmp.at(-1)).toMatchObject({ type: 'conversation.failed', data: { category: 'rate_limit', code: 'ENGINE_RATE_LIMITED' } });
    const meta = expectCompleteAudit(run.audit);
    expect(meta.completion).toEqual(run.completion);
    // Bookkeeping calls (token counts, titles, routers) are answered 200 outside the script.
    const side = model.requests.filter((r) => r.response_kind === 'side');
    expect(side.every((r) => r.status === 200 && r.turn_index === null)).toBe(true);
    if (SIDE_REQUEST[engine]) expect(side.map((r) => r.side_kind)).toContain(SIDE_REQUEST[engine]);
    const calls = model.requests.filter((r) => r.wire !== null && r.response_kind !== 'side');
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((r) => r.status === 429 && r.turn_index === 0)).toBe(true);
    // The attempt's own request log holds exactly these requests.
    const logged = fs.readFileSync(run.audit.modelRequests, 'utf8').split('\n').filter(Boolean);
    expect(logged).toHaveLength(model.requests.length);
    expect(model.egress).toEqual([]);
  });

  it(`fails with ENGINE_TIMEOUT when the harness kills it, even if the engine reaches a final turn; contained: only loopback, nothing survives`, async ({ model, agent, skip }) => {
    ready(skip);
    // The agent's shell lists its network (probe.cjs writes net.json), leaves a setsid'd sleep behind and then
    // sleeps itself. The killed tool returns 137 and an engine may go on to the next scripted turn (with the
    // done marker) before it dies: the timeout still decides the verdict.
    const sleeper = `sleep ${uniqueSleepSeconds()}`;
    model.script(turns.shell(`node probe.cjs; setsid ${sleeper} >/dev/null 2>&1 </dev/null & sleep 60`), turns.final('Finished after the sleep.'));
    // The probe must have run before the harness kills the attempt: opencode alone needs ~4 s before its first model
    // request, twice that on a loaded 2-core machine, so 15 s; codex ends a shell command itself after 10 s (and
    // would then finish the scripted turns), so 8 s for codex, which asks the model within a second.
    const run = await agent.start(engine, { prompt: 'sleep a while', timeoutMs: engine === 'codex' ? 8_000 : 15_000, files: { 'probe.cjs': NETWORK_PROBE } });
    expect(run.last.timedOut).toBe(true);
    expect(run.error?.code).toBe('ENGINE_TIMEOUT');
    expect(run.completion).toEqual({ state: 'failed', reason: 'timed_out', code: 'ENGINE_TIMEOUT' });
    expect(run.fcmp.at(-1)).toMatchObject({ type: 'conversation.failed', data: { category: 'timeout', code: 'ENGINE_TIMEOUT' } });
    const meta = expectCompleteAudit(run.audit);
    expect(meta.exit?.timed_out).toBe(true);
    expect(meta.error?.code).toBe('ENGINE_TIMEOUT');
    expect(meta.isolation).toEqual({ mode: 'auto', network: 'namespace', processes: 'pid-namespace', reason: null });
    // Inside: only `lo`, no route, and a connect to a non-loopback address fails at once, before any packet
    // (ENETUNREACH: no route in the namespace; codex's own sandbox refuses it even earlier with EPERM).
    const netFile = path.join(run.runDir, 'net.json');
    expect(fs.existsSync(netFile), `the agent's shell never ran the probe before the timeout (${model.requests.length} model requests)`).toBe(true);
    const net = JSON.parse(fs.readFileSync(netFile, 'utf8'));
    expect(net).toMatchObject({ interfaces: ['lo'], routes: 0 });
    expect(['ENETUNREACH', 'EPERM']).toContain(net.connect);
    // Nothing of the attempt is left: the setsid'd sleep went with the PID namespace.
    expect(pidsWithMarker(sleeper)).toEqual([]);
  });

  it(`records a call that starts no session (\`${engine} --version\`) as no_session, not a failure`, async ({ agent, skip }) => {
    ready(skip);
    const run = await agent.start(engine, { args: ['--version'] });
    expect(run.exitCode).toBe(0);
    expect(run.completion).toEqual({ state: 'no_session', reason: 'exited_without_session' });
    expect(run.sessionId).toBeNull();
    expect(run.fcmp.map((e) => e.type)).not.toContain('conversation.failed');
    expect(fs.readFileSync(run.audit.stdout, 'utf8')).toMatch(/\d+\.\d+\.\d+/);
    expect(expectCompleteAudit(run.audit, 'split', { terminal: 0 }).completion?.state).toBe('no_session');
  });

  it(`resumes with the start's model and output flags, and says which start flags were carried`, async ({ model, agent, skip }) => {
    ready(skip);
    const flagged = FLAGGED_START[engine]!;
    model.script(turns.shell("printf 'one\\n' > one.txt"), turns.final('Wrote one.txt.'), turns.final('Second turn.'));
    const run = await agent.start(engine, { args: flagged.args('Write one.txt.') });
    expect(run.completion.state).toBe('completed');
    const startRequests = model.requests.length;
    await run.resume('And now?');
    expect(run.completion).toEqual({ state: 'completed', reason: 'done_marker' });
    expect(run.sessionId).toBe(run.attempts[0]!.sessionId);
    const meta = expectCompleteAudit(run.audit);
    expect(meta.resume_flags?.carried).toEqual(expect.arrayContaining(flagged.carried));
    expect(meta.command?.argv.join(' ')).toContain(flagged.carried.join(' '));
    const resumeCalls = model.requests.slice(startRequests).filter((r) => r.wire !== null && r.response_kind !== 'side');
    expect(resumeCalls.length).toBeGreaterThan(0);
    expect(resumeCalls.map(requestedModel)).toContain(flagged.model);
  });

  it(`normalizes a failing shell call: the command without a wrapper, exit code 3, status failed`, async ({ model, agent, skip }) => {
    ready(skip);
    model.script(turns.shell("printf 'partial' > stats.json; exit 3"), turns.final('The command failed.'));
    const run = await agent.start(engine, { prompt: 'Write stats.json.' });
    expect(run).toHaveCompleted();
    expect(run).toHaveCalledTool({ kind: 'shell', command: "printf 'partial' > stats.json; exit 3", exitCode: 3, status: 'failed' });
    expect(run).not.toHaveCalledTool({ command: /stats\.json/, exitCode: 0 });
    const types = run.fcmp.map((e) => e.type);
    expect(types.indexOf('tool.call')).toBeLessThan(types.indexOf('tool.result'));
    expect(run.fcmp.find((e) => e.type === 'tool.result')?.data).toMatchObject({ status: 'failed', exit_code: 3 });
  });

  it.for([
    ['malformed', 'ENGINE_PROTOCOL_ERROR'],
    ['drop', 'ENGINE_NETWORK_ERROR|ENGINE_TIMEOUT'],
    ['stall', 'ENGINE_TIMEOUT'],
  ] as const)(`a model-side fault (%s) fails the attempt with a stable code in bounded time, audit complete`, async ([fault, codes], { model, agent, skip }) => {
    ready(skip);
    model.script(fault === 'malformed' ? turns.malformed() : fault === 'drop' ? turns.drop() : turns.stall());
    // The harness's timeout bounds what the engine does not end itself (a stall; opencode retries a dropped stream).
    const run = await agent.start(engine, { prompt: 'hi', timeoutMs: 15_000 });
    expect(run.completion.state).toBe('failed');
    expect(run.completion.code).toMatch(new RegExp(`^(?:${codes})$`));
    expect(run.fcmp.at(-1)).toMatchObject({ type: 'conversation.failed', data: { code: run.completion.code } });
    expectCompleteAudit(run.audit);
    expect(model.requests.some((r) => r.response_kind === fault)).toBe(true);
  });

  it(`starts from a seeded workspace: the diff shows only the agent's work, the audit has a git diff`, async ({ model, agent, skip }) => {
    ready(skip);
    model.script(turns.shell("printf -- '- Seeded change.\\n' >> CHANGELOG.md && printf '{\"rows\": 2}' > stats.json"), turns.final('Updated.'));
    const run = await agent.start(engine, { prompt: 'Update the changelog.', template: 'fixtures/repos/changelog', files: { 'notes/todo.txt': 'seeded inline\n' } });
    expect(run).toHaveCompleted();
    // Seeded files existed before fs-before: the agent's edit is "modified", not "created".
    expect(run).toHaveChangedExactly(['CHANGELOG.md', 'stats.json']);
    expect(run).toHaveLeftUnchanged(['data.csv', 'notes/todo.txt']);
    expect(run.fsDiff?.modified).toEqual(['CHANGELOG.md']);
    expect(fs.readFileSync(path.join(run.runDir, 'notes', 'todo.txt'), 'utf8')).toBe('seeded inline\n');
    const meta = expectCompleteAudit(run.audit);
    expect(meta.workspace).toMatchObject({ files: ['notes/todo.txt'], git_commit: expect.stringMatching(/^[0-9a-f]{40}$/) });
    const patch = fs.readFileSync(path.join(run.runDir, meta.files.gitDiff!), 'utf8');
    expect(patch).toContain('+- Seeded change.');
    expect(patch).toContain('b/stats.json');
    // The harness's skill root is excluded from git: the patch holds the agent's work only.
    expect(patch).not.toMatch(/SKILL\.md/);
  });

  it(`loads a skill and writes a file through the script intents`, async ({ model, agent, skip }) => {
    ready(skip);
    model.script(turns.useSkill('demo-hello'), turns.writeFile('hello.txt', 'hello from the skill\n'), turns.final('Done with demo-hello.'));
    const run = await agent.start(engine, { prompt: 'Use the demo-hello skill.' });
    expect(run).toHaveCompleted();
    expect(run).toHaveUsedSkill('demo-hello');
    expect(run.toolCalls.map((c) => c.name)).toEqual(INTENT_TOOLS[engine]);
    expect(run.toolCalls[0]?.output).toContain('demo-hello');
    expect(run).toHaveChangedFiles(['hello.txt']);
    expect(fs.readFileSync(path.join(run.runDir, 'hello.txt'), 'utf8')).toBe('hello from the skill\n');
  });
});
