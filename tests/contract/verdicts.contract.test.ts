/**
 * The completion judge's verdicts on the cases a hostile audit found wrong: a harness kill always fails, a done
 * marker needs a turn that ended, a user-written call that starts no session is not a failure, and a run never
 * takes another engine's attempt. No engine process is started.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { loadEngine } from '../../src/engines/registry.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import type { RaspData, RaspEvent } from '../../src/protocol/index.js';
import { raspEvents } from '../helpers/rasp-events.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { createRun } from '../../src/runtime/run-store.js';
import { judgeCompletion } from '../../src/translate/completion.js';
import { translateRaspToFcmp } from '../../src/translate/fcmp.js';
import { translateRecorded } from '../../src/translate/recorded.js';

const codex = await loadEngine('codex');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-verdicts-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const rasp = (...data: RaspData[]): RaspEvent[] => raspEvents('claude', ...data);

const started: RaspData = { type: 'lifecycle.started', launch: 'start', argv: [], cwd: '/', pid: null, io: 'split' };
const exited = (over: Partial<Extract<RaspData, { type: 'lifecycle.exited' }>> = {}): RaspData => ({
  type: 'lifecycle.exited',
  exit_code: 0,
  signal: null,
  timed_out: false,
  canceled: false,
  duration_ms: 5000,
  ...over,
});
const doneMessage: RaspData = {
  type: 'engine.assistant.message',
  message_id: 'm1',
  text: 'Finished.\n__SKILL_DONE__',
  final: true,
};
const turnEnd: RaspData = { type: 'engine.turn.end', status: 'completed', error: null };
const judge = (events: RaspEvent[], expectSession?: boolean) =>
  judgeCompletion(events, { errorPatterns: [], ...(expectSession === undefined ? {} : { expectSession }) });

describe('completion verdicts', () => {
  it('a timeout fails the attempt with ENGINE_TIMEOUT even when the engine reached the done marker and a turn end', () => {
    const verdict = judge(
      rasp(
        started,
        { type: 'engine.tool.result', call_id: 'c', status: 'failed', output: null, exit_code: 137 },
        doneMessage,
        turnEnd,
        exited({ exit_code: null, signal: 'SIGKILL', timed_out: true }),
      ),
    );
    expect(verdict).toMatchObject({
      state: 'failed',
      reason: 'timed_out',
      failure: { category: 'timeout', code: 'ENGINE_TIMEOUT' },
    });
  });

  it('a cancel fails the attempt with ENGINE_CANCELED, whatever the stream says', () => {
    const verdict = judge(
      rasp(started, doneMessage, turnEnd, exited({ exit_code: null, signal: 'SIGTERM', canceled: true })),
    );
    expect(verdict).toMatchObject({
      state: 'failed',
      reason: 'canceled',
      failure: { category: 'canceled', code: 'ENGINE_CANCELED' },
    });
    const fcmp = translateRaspToFcmp(rasp(started, doneMessage, turnEnd, exited({ canceled: true })), {
      runId: 'r',
      engine: 'claude',
      attempt: 1,
      seqStart: 0,
      launch: 'start',
      errorPatterns: [],
    });
    expect(fcmp.at(-1)).toMatchObject({ type: 'conversation.failed', data: { code: 'ENGINE_CANCELED' } });
    expect(fcmp.map((e) => e.type)).not.toContain('conversation.completed');
  });

  it('a done marker without a turn end is not completion', () => {
    expect(judge(rasp(started, doneMessage, exited()))).toMatchObject({
      state: 'failed',
      reason: 'exited_without_turn_end',
      failure: { code: 'ENGINE_EXITED_WITHOUT_TURN_END' },
    });
    expect(judge(rasp(started, doneMessage, exited())).failure?.message).toContain(
      'a done marker was seen, but the turn never ended',
    );
    expect(judge(rasp(started, doneMessage, turnEnd, exited()))).toMatchObject({
      state: 'completed',
      reason: 'done_marker',
    });
  });

  it('a truncated codex stream with an inline __SKILL_DONE__ is not completed', () => {
    const stdout = [
      { type: 'thread.started', thread_id: '0199a213-81c0-7800-8aa1-bbab2a035a53' },
      { type: 'turn.started' },
      { type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: 'All done.\n__SKILL_DONE__' } },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n');
    const result = translateRecorded(
      codex,
      { stdout: Buffer.from(`${stdout}\n`) },
      { exit: { exit_code: 0, signal: null, timed_out: false, canceled: false, duration_ms: 10 } },
    );
    expect(result.summary.diagnostics.map((d) => d.code)).toContain('CODEX_TURN_NOT_ENDED');
    expect(result.summary.completed).toBe(false);
    expect(result.judgement.state).toBe('failed');
    expect(result.fcmp.at(-1)?.type).toBe('conversation.failed');
  });

  it('codex refusing a resume whose session another attempt writes is ENGINE_SESSION_BUSY, other exits keep their code', () => {
    // codex 0.169's stderr when a second `resume` of the run starts while the first is running (it exits 1 at once).
    const stderr = fs.readFileSync(
      new URL('../../fixtures/streams/codex/resume-active-writer.stderr.log', import.meta.url),
    );
    const exit = { exit_code: 1, signal: null, timed_out: false, canceled: false, duration_ms: 10 };
    const busy = translateRecorded(codex, { stdout: Buffer.alloc(0), stderr }, { launch: 'resume', exit });
    expect(busy.judgement).toMatchObject({
      state: 'failed',
      reason: 'exited_without_turn_end',
      failure: { category: 'engine_crash', code: 'ENGINE_SESSION_BUSY' },
    });
    expect(busy.judgement.failure?.message).toContain('already has an active writer');
    const other = translateRecorded(
      codex,
      { stdout: Buffer.alloc(0), stderr: Buffer.from('Error: something else broke\n') },
      { launch: 'resume', exit },
    );
    expect(other.judgement.failure?.code).toBe('ENGINE_EXITED_WITHOUT_TURN_END');
  });

  it('a user-written call that exits 0 with no engine event is no_session; a harness-built one is a failure', () => {
    const events = rasp(started, { type: 'raw.line', text: 'codex-cli 0.169.0' }, exited());
    expect(judge(events, false)).toEqual({ state: 'no_session', reason: 'exited_without_session', evidenceSeq: 3 });
    expect(judge(events)).toMatchObject({ state: 'failed', reason: 'exited_without_turn_end' });
    // A failing user-written call stays a failure.
    expect(judge(rasp(started, exited({ exit_code: 2 })), false)).toMatchObject({ state: 'failed' });
    // No terminal FCMP event: there was no conversation to complete or fail.
    const fcmp = translateRaspToFcmp(events, {
      runId: 'r',
      engine: 'codex',
      attempt: 1,
      seqStart: 0,
      launch: 'start',
      errorPatterns: [],
      expectSession: false,
    });
    expect(fcmp.map((e) => e.type)).toEqual(['conversation.started']);
  });
});

describe('a run takes attempts of its own engine only', () => {
  it('start --run-dir <a codex run> with claude is USAGE_ERROR before anything is written', async () => {
    const paths = resolveHarnessPaths({ env: {}, projectRoot: tmp, skillRoots: [] });
    const run = await createRun(paths.runRoot, {
      engine: 'codex',
      translateMode: 0,
      modelMode: 'scripted',
      script: null,
    });
    const error = await runAttempt({ paths, engine: 'claude', launch: 'start', run, prompt: 'hi' }).catch(
      (e: unknown) => e,
    );
    expect(isAgentHarnessError(error, 'USAGE_ERROR')).toBe(true);
    expect((error as Error).message).toMatch(/is a codex run; it cannot take a claude attempt/);
    expect(fs.existsSync(path.join(run.run_dir, '.audit', 'meta.1.json'))).toBe(false);
  });
});

describe('skills offered and the final text', () => {
  it('finds the injected skills named in the first real model request, ignoring side requests', async () => {
    const { offeredSkills } = await import('../../src/core/offered-skills.js');
    const requests = [
      {
        wire: 'openai-chat' as const,
        response_kind: 'side' as const,
        body: { messages: [{ role: 'system', content: 'csv-stats demo-hello' }] },
      },
      {
        wire: 'openai-chat' as const,
        response_kind: 'shell' as const,
        body: { messages: [{ role: 'system', content: 'Skills: demo-hello — greets. demo-hello-extra' }] },
      },
    ];
    expect(offeredSkills(['demo-hello', 'csv-stats'], requests)).toEqual(['demo-hello']);
    expect(offeredSkills(['demo-hello'], [])).toEqual([]);
  });

  it('strips the done marker in both forms from the final text', async () => {
    const { stripDoneMarker } = await import('../../src/translate/completion.js');
    expect(stripDoneMarker('Wrote it.\n__SKILL_DONE__')).toBe('Wrote it.');
    expect(stripDoneMarker('Wrote it.\n\n```json\n{"__skill_done__": true}\n```')).toBe('Wrote it.');
    expect(stripDoneMarker('No marker')).toBe('No marker');
    expect(stripDoneMarker(null)).toBeNull();
  });

  it('onlySkills injects just those skills; an unknown name is SKILL_INVALID listing what exists', async () => {
    const { injectSkills } = await import('../../src/runtime/skills.js');
    const roots = [path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'skills')];
    const summary = await injectSkills({
      sourceRoots: roots,
      targetRoot: path.join(tmp, 'only', '.codex', 'skills'),
      only: ['csv-stats'],
    });
    expect(summary.skills.map((s) => s.name)).toEqual(['csv-stats']);
    const error = await injectSkills({ sourceRoots: roots, targetRoot: path.join(tmp, 'only2'), only: ['nope'] }).catch(
      (e: unknown) => e,
    );
    expect(isAgentHarnessError(error, 'SKILL_INVALID')).toBe(true);
    expect((error as Error).message).toContain('found: csv-stats, demo-hello');
  });
});
