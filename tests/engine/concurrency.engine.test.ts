/**
 * Many attempts at once with the real codex CLI on one run root: 16 starts together, then 8 concurrent resumes of
 * one run. Handles and attempt numbers are unique, run.json's count and the FCMP `seq` are consistent, nothing is
 * lost. (The same with fake engines is in tests/contract/store-robustness.contract.test.ts.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attemptAuditPaths } from '../../src/core/audit-files.js';
import { runAttempt } from '../../src/core/run-attempt.js';
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
    '8 resumes of one run at once: attempts 2..9, run.json says 9, FCMP seq strictly increasing across attempts',
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
      const resumes = await Promise.all(
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
      expect(resumes.map((r) => r.attempt).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
      for (const result of resumes) expect(result.error, result.error?.message).toBeNull();
      expect((await readRunRecord(first.runDir))?.attempts).toBe(9);
      let last = 0;
      for (let attempt = 1; attempt <= 9; attempt += 1) {
        const seqs = fs
          .readFileSync(attemptAuditPaths(first.runDir, attempt).fcmp, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line).seq as number);
        expect(seqs.length).toBeGreaterThan(0);
        expect(seqs[0]).toBeGreaterThan(last);
        last = seqs.at(-1)!;
      }
      // Every message reached the engine: each resume's stdin log holds its own message.
      const messages = resumes.map((r) => fs.readFileSync(r.audit.stdin, 'utf8').trim()).sort();
      expect(messages).toEqual(Array.from({ length: 8 }, (_, i) => `message ${i}`).sort());
    },
    scaled(600_000),
  );
});
