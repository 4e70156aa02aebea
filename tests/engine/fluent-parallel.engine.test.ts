/**
 * Attempts that share one scripted model server stay apart: five `attemptAgent` calls run together by the fluent
 * `parallel`, each with its own script on the same server, each write their own file and finish with their own
 * message, and each attempt's audit holds only its own model requests (every call runs on its own lane). Every wire
 * API (Responses, Messages, Gemini, Chat) goes through lanes, and two calls share codex's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptAuditPaths } from '../../src/core/audit-files.js';
import { attemptAgent, defineHarness, type AttemptAgentDefaults } from '../../src/public/fluent.js';
import { turns, type ModelServer } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { scaled } from '../helpers/load-scaled.js';

/**
 * Five calls: one of each engine, so every wire API goes through lanes, and a second codex call, so two calls on one
 * wire run at once (the case lanes exist for). A second call of every engine would add its cost and prove nothing more.
 */
const ENGINES = ['codex', 'claude', 'gemini', 'opencode', 'codex'] as const;
const COUNT = ENGINES.length;
let tmp: string;
let server: ModelServer;
let defaults: AttemptAgentDefaults;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-fluent-parallel-'));
  server = await startModelServer({});
  defaults = {
    paths: resolveHarnessPaths({ env: {}, projectRoot: tmp, runRoot: path.join(tmp, 'runs') }),
    modelServer: server,
    hostEnv: { ...process.env, HOME: path.join(tmp, 'host-home') },
    timeoutMs: scaled(300_000),
  };
});

afterAll(async () => {
  await server.close();
  if (!process.env.KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('parallel attempts on one model server', () => {
  it(
    `${COUNT} attempts (one per engine, two on codex) run by parallel() each follow their own script`,
    async () => {
      const harness = defineHarness({
        name: 'parallel-writers',
        recording: path.join(tmp, 'recording.json'),
        agents: {
          codex: attemptAgent('codex', () => defaults),
          claude: attemptAgent('claude', () => defaults),
          gemini: attemptAgent('gemini', () => defaults),
          opencode: attemptAgent('opencode', () => defaults),
        },
        run: async ({ agents, parallel }) =>
          parallel(
            'write',
            Array.from(
              { length: COUNT },
              (_, i) => () =>
                agents[ENGINES[i]!].execute(`Write f${i}.txt`, {
                  version: 1,
                  turns: [turns.writeFile(`f${i}.txt`, `file ${i}\n`), turns.final(`Wrote f${i}.txt.`)],
                }),
            ),
            { concurrency: COUNT },
          ),
      });
      const { result } = await harness.create(undefined).run();
      expect(result).toHaveLength(COUNT);
      const runRoot = path.join(tmp, 'runs');
      const runs = fs.readdirSync(runRoot).filter((d) => !d.startsWith('.') && d.includes('-'));
      expect(runs).toHaveLength(COUNT);
      const lanes = new Set<string>();
      result.forEach((call, i) => {
        const runDir = path.join(runRoot, runs.find((d) => d.endsWith(`-${ENGINES[i]}-${call.handle}`))!);
        const why = () => {
          const audit = attemptAuditPaths(runDir, 1);
          const meta = fs.existsSync(audit.meta) ? fs.readFileSync(audit.meta, 'utf8').slice(0, 3000) : '(no meta)';
          const stderr = fs.existsSync(audit.stderr) ? fs.readFileSync(audit.stderr, 'utf8').slice(-2000) : '';
          return `attempt ${i} (${ENGINES[i]}): ${JSON.stringify(call.error)}\nmeta: ${meta}\nstderr: ${stderr}`;
        };
        expect(call.completion, why()).toBe('completed');
        expect(call.finalMessage).toContain(`Wrote f${i}.txt.`);
        expect(call.engine).toBe(ENGINES[i]);
        // Its own file and no other attempt's.
        expect(fs.readFileSync(path.join(runDir, `f${i}.txt`), 'utf8')).toBe(`file ${i}\n`);
        for (let j = 0; j < COUNT; j += 1)
          if (j !== i) expect(fs.existsSync(path.join(runDir, `f${j}.txt`))).toBe(false);
        // Its audit's model requests all came through one lane, used by no other attempt.
        const rows = fs
          .readFileSync(attemptAuditPaths(runDir, 1).modelRequests, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { lane?: string; body?: unknown });
        const own = new Set(rows.map((row) => row.lane));
        expect(own.size).toBe(1);
        const [lane] = [...own];
        expect(lane).toBeDefined();
        expect(lanes.has(lane!)).toBe(false);
        lanes.add(lane!);
        expect(JSON.stringify(rows.map((row) => row.body))).not.toMatch(new RegExp(`Write f(?!${i}\\.txt)\\d\\.txt`));
      });
    },
    scaled(900_000),
  );
});
