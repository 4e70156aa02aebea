/**
 * Many attempts at once with the real codex CLI on one run root: 16 starts together, then 8 resumes of one run at
 * once (one at a time runs; the others are ENGINE_SESSION_BUSY). Handles and attempt numbers are unique, run.json's
 * count and the FCMP `seq` are consistent, nothing is lost. (The same with fake engines is in
 * tests/contract/store-robustness.contract.test.ts.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attemptAuditPaths } from '../../src/core/audit-files.js';
import { runAttempt } from '../../src/core/run-attempt.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { turns } from '../../src/model/index.js';
import { readRunRecord } from '../../src/runtime/run-store.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { scaled } from '../helpers/load-scaled.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-concurrency-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
const paths = resolveHarnessPaths({
  env: { SKILL_RUNNER_DATA_DIR: dataDir },
  projectRoot: process.cwd(),
  skillRoots: [],
});
const done = turns.final('Done.');
// Turns are picked by the number of model outputs in the session's history: every later turn is a final answer.
const script = { version: 1 as const, turns: Array.from({ length: 12 }, () => done) };

describe('codex, many attempts at once', () => {
  it(
    '16 starts together: unique handles and run dirs, every attempt completed and indexed',
    async () => {
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          runAttempt({
            paths,
            engine: 'codex',
            launch: 'start',
            prompt: `parallel ${i}`,
            script,
            timeoutMs: scaled(240_000),
          }),
        ),
      );
      expect(new Set(results.map((r) => r.handle)).size).toBe(16);
      expect(new Set(results.map((r) => r.runDir)).size).toBe(16);
      for (const result of results)
        expect(result.completion, result.error?.message).toEqual({ state: 'completed', reason: 'done_marker' });
    },
    scaled(600_000),
  );

  it(
    '8 resumes of one run at once: one at a time runs (the others ENGINE_SESSION_BUSY), FCMP seq strictly increasing',
    async () => {
      const first = await runAttempt({
        paths,
        engine: 'codex',
        launch: 'start',
        prompt: 'resume me',
        script,
        timeoutMs: scaled(120_000),
      });
      expect(first.completion.state).toBe('completed');
      const run = (await readRunRecord(first.runDir))!;
      const settled = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) =>
          runAttempt({
            paths,
            engine: 'codex',
            launch: 'resume',
            run,
            message: `message ${i}`,
            script,
            timeoutMs: scaled(240_000),
          }),
        ),
      );
      // A resume holds the run's session lock for its whole attempt: the others are refused before making one.
      const resumes = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      for (const s of settled)
        if (s.status === 'rejected') expect(isAgentHarnessError(s.reason, 'ENGINE_SESSION_BUSY')).toBe(true);
      expect(resumes.length).toBeGreaterThanOrEqual(1);
      const total = 1 + resumes.length;
      expect(resumes.map((r) => r.attempt).sort((a, b) => a - b)).toEqual(
        Array.from({ length: resumes.length }, (_, i) => i + 2),
      );
      for (const result of resumes) expect(result.error, result.error?.message).toBeNull();
      expect((await readRunRecord(first.runDir))?.attempts).toBe(total);
      let last = 0;
      for (let attempt = 1; attempt <= total; attempt += 1) {
        const seqs = fs
          .readFileSync(attemptAuditPaths(first.runDir, attempt).fcmp, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line).seq as number);
        expect(seqs.length).toBeGreaterThan(0);
        expect(seqs[0]).toBeGreaterThan(last);
        last = seqs.at(-1)!;
      }
      // Every message of a resume that ran reached the engine: each one's stdin log holds its own message.
      const messages = resumes.map((r) => fs.readFileSync(r.audit.stdin, 'utf8').trim());
      expect(new Set(messages).size).toBe(resumes.length);
    },
    scaled(600_000),
  );
});
