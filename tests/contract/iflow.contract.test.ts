/**
 * iFlow: the parser on streams constructed from documented output (no iFlow CLI can be installed here) — including
 * authentication failures, whose stdout `[API Error: …]` line is the turn's failure named by the server's code —
 * and a missing binary as ENGINE_EXECUTABLE_MISSING, refused before a run directory exists. Its goldens and error
 * table are rows of engine-goldens.contract.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { iflowEngine } from '../../src/engines/iflow/index.js';
import { describeIflowApiError } from '../../src/engines/iflow/parse.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { translateRecorded } from '../../src/translate/recorded.js';

const STREAMS = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams', 'iflow');

function recorded(name: string) {
  const read = (ext: string): Buffer | undefined =>
    fs.existsSync(path.join(STREAMS, `${name}.${ext}.log`))
      ? fs.readFileSync(path.join(STREAMS, `${name}.${ext}.log`))
      : undefined;
  const stdout = read('stdout');
  const stderr = read('stderr');
  return translateRecorded(
    iflowEngine,
    { ...(stdout ? { stdout } : {}), ...(stderr ? { stderr } : {}) },
    { runId: 'golden' },
  );
}

describe('iflow parser (documented 0.5.x output)', () => {
  it('reads the session, usage and final text, skipping bootstrap noise; the closing tag ends the turn', () => {
    const { summary, judgement, rasp } = recorded('done');
    expect(summary).toMatchObject({
      session_id: 'session-9353ed2b-4655-43d8-b41a-cc7bfe1a97a6',
      completed: true,
      error: null,
    });
    expect(summary.final_message).toBe('I wrote hello.txt in the current directory.\n__SKILL_DONE__');
    expect(judgement.state).toBe('completed');
    expect(rasp.find((e) => e.data.type === 'engine.usage')?.data).toMatchObject({
      usage: { input_tokens: 1834, output_tokens: 57 },
    });
    expect(summary.diagnostics.map((d) => d.code)).toEqual(['IFLOW_STDOUT_NOISE', 'IFLOW_STDOUT_NOISE']);
  });

  it('waits for input without the done marker (CRLF, one-line block)', () => {
    const { summary, judgement } = recorded('question');
    expect(summary).toMatchObject({
      session_id: 'session-q1',
      final_message: 'Which file should I write to?',
      completed: true,
    });
    expect(judgement.state).toBe('awaiting_input');
  });

  it('fails a truncated run and an API error, never throwing', () => {
    const truncated = recorded('truncated');
    expect(truncated.summary.completed).toBe(false);
    expect(truncated.summary.diagnostics.map((d) => d.code)).toContain('IFLOW_EXECUTION_INFO_TRUNCATED');
    const apiError = recorded('api-error');
    expect(apiError.summary).toMatchObject({ completed: false, final_message: null });
    expect(apiError.judgement.failure?.category).toBe('rate_limit');
  });

  it('builds documented start and resume commands', () => {
    expect(iflowEngine.buildStartArgs({ prompt: 'hi', passthrough: [] })).toEqual(['--yolo', '-p', 'hi']);
    expect(iflowEngine.buildResumeArgs?.({ sessionId: 'session-1', message: 'next' })).toEqual([
      '--yolo',
      '--resume=session-1',
      '-p',
      'next',
    ]);
  });
});

describe('iflow authentication failures', () => {
  it('expired OAuth token: failed as auth, the error names the server code, the execution info does not complete it', () => {
    const { summary, judgement, fcmp } = recorded('auth-expired');
    expect(summary.session_id).toBe('session-0c1d2e3f-4a5b-4c6d-8e7f-90a1b2c3d4e5');
    expect(summary.error).toBe('iFlow API error (server code 401): token has expired, please login again');
    expect(judgement).toMatchObject({ state: 'failed', failure: { category: 'auth', code: 'ENGINE_AUTH_FAILED' } });
    expect(fcmp.some((e) => e.type === 'assistant.message.final')).toBe(false);
  });

  it('invalid API key without execution info: failed as auth', () => {
    const { summary, judgement } = recorded('invalid-api-key');
    expect(summary.error).toContain('Invalid API key provided');
    expect(judgement).toMatchObject({ state: 'failed', failure: { category: 'auth', code: 'ENGINE_AUTH_FAILED' } });
  });

  it('names the server code from either JSON body shape or an HTTP status', () => {
    expect(describeIflowApiError('x {"error":{"code":"invalid_token","message":"expired"}}')).toBe(
      'iFlow API error (server code invalid_token): expired',
    );
    expect(describeIflowApiError('Request failed with status 403')).toBe(
      'iFlow API error (server code 403): Request failed with status 403',
    );
    expect(describeIflowApiError('{broken')).toBe('iFlow API error: {broken');
  });
});

describe('iflow without a binary', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-iflow-'));
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('refuses the attempt with ENGINE_EXECUTABLE_MISSING listing the paths searched, before a run or any trust exists', async () => {
    const emptyBin = path.join(tmp, 'empty-bin');
    fs.mkdirSync(emptyBin);
    const paths = resolveHarnessPaths({ env: {}, projectRoot: tmp, skillRoots: [] });
    const error = await runAttempt({
      paths,
      engine: 'iflow',
      launch: 'start',
      prompt: 'hi',
      hostEnv: { PATH: emptyBin, HOME: path.join(tmp, 'home') },
    }).catch((caught: unknown) => caught);
    expect(isAgentHarnessError(error, 'ENGINE_EXECUTABLE_MISSING')).toBe(true);
    expect((error as Error).message).toContain(path.join(emptyBin, 'iflow'));
    // A usage mistake leaves no failed run behind (no run directory), and no trust was granted.
    expect(fs.existsSync(paths.runRoot) ? fs.readdirSync(paths.runRoot) : []).toEqual([]);
    const trustFile = path.join(paths.agentHome, '.iflow', 'trustedFolders.json');
    expect(fs.existsSync(trustFile)).toBe(false);
  });

  it('writes its settings into the run directory (Decision 11), never into the shared managed HOME', async () => {
    const paths = resolveHarnessPaths({ env: {}, projectRoot: tmp, skillRoots: [] });
    const runA = path.join(tmp, 'run-a');
    const runB = path.join(tmp, 'run-b');
    const a = await iflowEngine.prepare({
      runDir: runA,
      agentHome: paths.agentHome,
      modelMode: 'scripted',
      modelBaseUrl: 'http://127.0.0.1:1111',
      profile: 'x',
      interactive: false,
    });
    const b = await iflowEngine.prepare({
      runDir: runB,
      agentHome: paths.agentHome,
      modelMode: 'scripted',
      modelBaseUrl: 'http://127.0.0.1:2222',
      profile: 'x',
      interactive: false,
    });
    expect(a.configInjection?.config_path).toBe(path.join(runA, '.iflow', 'settings.json'));
    // Concurrent runs keep their own model URL.
    expect(JSON.parse(fs.readFileSync(path.join(runA, '.iflow', 'settings.json'), 'utf8'))).toMatchObject({
      baseUrl: 'http://127.0.0.1:1111/v1',
      selectedAuthType: 'openai-compatible',
    });
    expect(JSON.parse(fs.readFileSync(path.join(runB, '.iflow', 'settings.json'), 'utf8'))).toMatchObject({
      baseUrl: 'http://127.0.0.1:2222/v1',
    });
    expect(fs.existsSync(path.join(paths.agentHome, '.iflow', 'settings.json'))).toBe(false);
    await a.cleanup();
    await b.cleanup();
  });
});
