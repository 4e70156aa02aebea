/**
 * Vitest fixtures of agent-harness: `harness` (managed paths), `model` (a scripted model server per test) and
 * `agent` (`agent.start(engine, { prompt })` → {@link HarnessRun}). Importing this module also installs the
 * matchers. Without the `agentHarness()` plugin, paths resolve from the working directory with a temporary
 * run root (one per worker process).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject, test as base } from 'vitest';
import type { ModelLane, ModelScript, ModelServer, ModelTurn } from '../model/index.js';
import { startModelServer } from '../engines/model-server.js';
import { resolveHarnessPaths, type HarnessPaths } from '../runtime/paths.js';
import { runAgentFixture, type AgentFixture } from './agent.js';
import { installMatchers } from './matchers.js';
import { installEvalMatchers } from './eval-matchers.js';
import { createWorkflowFixture, installWorkflowMatchers, type WorkflowFixture } from './workflow.js';
import { parseAgentHarnessOptions, toAgentHarnessConfig, type AgentHarnessConfig } from './options.js';

export type { AgentFixture, AgentStartOptions } from './agent.js';

// Import side effect: the matchers are available in every file that imports the fixtures.
try {
  installMatchers();
  installEvalMatchers();
} catch {
  // Imported outside a test run (e.g. from vitest.config.ts through the public entry): installed on first use.
}

/** The `harness` fixture: the config in effect and the managed paths of this test. */
export interface HarnessFixture {
  /** Plugin config (or the defaults when the plugin is not configured). */
  config: AgentHarnessConfig;
  /** Resolved harness paths (run root per config). */
  paths: HarnessPaths;
  /** Host environment the engines' allowlist is taken from (default `process.env`). */
  hostEnv: NodeJS.ProcessEnv;
}

/** The `model` fixture: a scripted model server on 127.0.0.1 for this test, closed after it. */
export interface ModelFixture {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** Every request so far (live). */
  readonly requests: ModelServer['requests'];
  /** Refused outbound attempts (live). */
  readonly egress: ModelServer['egress'];
  /** The underlying server. */
  readonly server: ModelServer;
  /** Sets the script to these turns. */
  script(...turns: ModelTurn[]): void;
  /** Sets a whole script (null = default replies). */
  setScript(script: ModelScript | null): void;
  /**
   * Adds turns after the current script's last one. Turns are numbered across a session, so this (or
   * `run.resume(message, { turns })`) is how a test scripts the next turn of a resumed session.
   */
  append(...turns: ModelTurn[]): void;
  /**
   * A lane of this test's server for one attempt (`agent.start` opens one per attempt): its own requests, and its own
   * script when one is given; without one it follows the test's script (`script`, `setScript` and `append` reach it).
   * Attempts that run at once in one test never answer each other's requests. Close it when the attempt ends.
   */
  openLane(script?: ModelScript | null): ModelLane;
}

/** Fixture types of {@link test}. */
export interface AgentHarnessFixtures {
  harness: HarnessFixture;
  model: ModelFixture;
  agent: AgentFixture;
  /** Runs a fluent harness (record/replay under __recordings__), attaching its event log. */
  workflow: WorkflowFixture;
  /** One scripted model server per test file, behind `model` for the file's sequential tests. */
  fileModelServer: ModelServer;
}

let defaultRunRoot: string | null = null;

/** The config used when `inject('agentHarness')` is undefined: cwd-based paths, a temporary run root. */
export function defaultAgentHarnessConfig(): AgentHarnessConfig {
  defaultRunRoot ??= fs.mkdtempSync(path.join(os.tmpdir(), 'agent-harness-vitest-'));
  const config = toAgentHarnessConfig(parseAgentHarnessOptions({}), process.cwd());
  return { ...config, runRoot: defaultRunRoot };
}

/**
 * The `model` fixture over `server`, seeing only what arrived from this test on (offsets into the server's
 * logs), so a file's tests can share one server.
 */
function modelFixture(server: ModelServer, from = { requests: 0, egress: 0 }): ModelFixture {
  /** Open lanes without a script of their own: they follow the test's script. */
  const following = new Set<ModelLane>();
  const setScript = (script: ModelScript | null): void => {
    server.setScript(script);
    for (const lane of following) lane.setScript(script);
  };
  return {
    get url() {
      return server.url;
    },
    get requests() {
      return from.requests === 0 ? server.requests : server.requests.slice(from.requests);
    },
    get egress() {
      return from.egress === 0 ? server.egress : server.egress.slice(from.egress);
    },
    server,
    script: (...turns: ModelTurn[]) => setScript({ version: 1, turns }),
    setScript,
    append: (...turns: ModelTurn[]) => {
      server.appendTurns(turns);
      for (const lane of following) lane.appendTurns(turns);
    },
    openLane(script) {
      const lane = server.openLane(script);
      if (script !== undefined) return lane;
      following.add(lane);
      return {
        key: lane.key,
        url: lane.url,
        requests: lane.requests,
        get script() {
          return lane.script;
        },
        setScript: (next) => lane.setScript(next),
        appendTurns: (more) => lane.appendTurns(more),
        close() {
          following.delete(lane);
          lane.close();
        },
      };
    },
  };
}

async function withPrivateServer(use: (model: ModelFixture) => Promise<void>): Promise<void> {
  const server = await startModelServer({});
  try {
    await use(modelFixture(server));
  } finally {
    await server.close();
  }
}

function createAgentTest() {
  installMatchers();
  installEvalMatchers();
  installWorkflowMatchers();
  return base.extend<AgentHarnessFixtures>({
    // biome-ignore lint/correctness/noEmptyPattern: Vitest reads a fixture's dependencies from its first parameter
    harness: async ({}, use) => {
      const config = inject('agentHarness') ?? defaultAgentHarnessConfig();
      const paths = resolveHarnessPaths({
        cwd: config.root,
        ...(config.runRoot ? { runRoot: config.runRoot } : {}),
        ...(config.skillRoots ? { skillRoots: config.skillRoots } : {}),
        ...(config.codexProfile ? { codexProfile: config.codexProfile } : {}),
      });
      await use({ config, paths, hostEnv: process.env });
    },
    fileModelServer: [
      // biome-ignore lint/correctness/noEmptyPattern: Vitest reads a fixture's dependencies from its first parameter
      async ({}, use) => {
        const server = await startModelServer({});
        try {
          await use(server);
        } finally {
          await server.close();
        }
      },
      { scope: 'file' },
    ],
    // Sequential tests of a file share one server (turn selection is stateless; the script is reset and the
    // logs are viewed from this test on). A concurrent test gets its own server: sharing would mix scripts.
    model: async ({ fileModelServer, task }, use) => {
      if ((task as { concurrent?: boolean }).concurrent) {
        await withPrivateServer(use);
        return;
      }
      fileModelServer.setScript(null);
      try {
        await use(
          modelFixture(fileModelServer, {
            requests: fileModelServer.requests.length,
            egress: fileModelServer.egress.length,
          }),
        );
      } finally {
        fileModelServer.setScript(null);
      }
    },
    agent: async ({ harness, model, task, signal, skip, annotate }, use) => {
      await runAgentFixture({ harness, model, task, signal, skip, annotate }, use);
    },
    workflow: async ({ task, annotate }, use) => {
      await use(createWorkflowFixture({ task, annotate }));
    },
  });
}

/** The type of {@link test}: Vitest's `test` extended with {@link AgentHarnessFixtures}. */
export type AgentTestAPI = ReturnType<typeof createAgentTest>;

let realTest: AgentTestAPI | undefined;

/**
 * The agent-harness test function (fixtures `harness`, `model`, `agent`). Created on first use: `test.extend`
 * needs a running test file, and this module is also reachable from `vitest.config.ts` via the public entry.
 */
export const test: AgentTestAPI = new Proxy((() => undefined) as unknown as AgentTestAPI, {
  apply: (_target, thisArg, args) =>
    Reflect.apply((realTest ??= createAgentTest()) as unknown as (...a: unknown[]) => unknown, thisArg, args),
  get: (_target, prop) => {
    const real = (realTest ??= createAgentTest());
    return Reflect.get(real, prop, real);
  },
  has: (_target, prop) => Reflect.has((realTest ??= createAgentTest()), prop),
});

// In a test worker the fixtures are created at import, i.e. at the top level of the test file: Vitest only
// accepts file-scoped fixtures defined there. From vitest.config.ts (no worker) creation stays lazy.
if (process.env.VITEST_WORKER_ID !== undefined) {
  try {
    realTest ??= createAgentTest();
  } catch {
    // not inside a test file after all: created on first use
  }
}

/** Alias of {@link test}. */
export const agentTest = test;
