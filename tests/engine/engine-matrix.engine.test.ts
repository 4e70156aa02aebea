/**
 * The engine matrix: every engine of the registry (`availableEngines()`) runs the same cases with its real CLI (the
 * pinned devDependency) against the scripted model server on 127.0.0.1, through the agent-harness Vitest fixtures
 * exactly as a user's tests run them. One `describe.for` over the engines, so test names carry the engine and this
 * repo's consistency report covers every engine. What differs between engines is data, not code: what the adapter
 * declares (its argv, init message, tool table) is read from the adapter itself, and what only a real run shows
 * (config and trust files, env, how a skill is offered, side requests) is its row in {@link FACTS}.
 *
 * An engine whose executable the registry cannot resolve here (iflow: the npm registry reachable here does not serve
 * its CLI) is skipped at run time with that reason, under the same test names as the others. An engine that can run
 * but has no row in {@link FACTS} fails: a new engine brings its facts.
 *
 * No case asserts a duration. Where the verdict under test IS the harness's timeout, the attempt is repeated with a
 * doubled timeout (bounded) while the engine had not yet reached the point under test when it was killed (a slow
 * start on a loaded machine), see `withGrowingTimeout`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runHome } from '../../src/runtime/paths.js';
import { describe, expect } from 'vitest';
import { test, turns, type HarnessRun } from '../../src/public/vitest.js';
import { isClaudeTrusted } from '../../src/engines/claude/config.js';
import { codexTrustOverride, isCodexTrusted } from '../../src/engines/codex/config.js';
import { isGeminiTrusted } from '../../src/engines/gemini/config.js';
import { isCopilotTrusted } from '../../src/engines/copilot/config.js';
import { isQwenTrusted } from '../../src/engines/qwen/config.js';
import type { EngineId } from '../../src/protocol/index.js';
import type { RecordedRequest } from '../../src/model/server.js';
import { readRunRecord, resolveRunSelector } from '../../src/runtime/run-store.js';
import { snapshotTree } from '../../src/runtime/fs-snapshot.js';
import { expectCompleteAudit, expectFullIsolation } from '../helpers/audit.js';
import { engineAdapters, engineWireApi, liveEnvKeys, missingReasons, registryEngines } from '../helpers/engines.js';
import { NETWORK_PROBE, pidsWithMarker, uniqueSleepSeconds, withGrowingTimeout } from '../helpers/processes.js';
import { isHomeCanary } from '../helpers/home-canary.js';
import { scaled } from '../helpers/load-scaled.js';

const ENGINES = registryEngines();
const MISSING = await missingReasons();
const LIVE_ENV_KEYS = await liveEnvKeys();
/** The registry's adapters: what an engine declares (argv, init message, tool table) is read from them. */
const ADAPTERS = await engineAdapters();

/** What the facts of an attempt depend on. */
interface AttemptContext {
  agentHome: string;
  runDir: string;
  modelUrl: string;
}

/** What one engine does in a real run, as the matrix checks it (what its adapter declares is read from the adapter). */
interface EngineFacts {
  /** A session id the engine reports. */
  sessionId: RegExp;
  /**
   * The stdout event that names the session: its shape (the adapter's `initMessage` where it has one), the key holding
   * the id, the key listing skills (if any).
   */
  sessionEvent: { match?: Record<string, unknown>; idKey: string; skillsKey?: string };
  /** The harness's leading global arguments before the adapter's default argv of a start or a resume. */
  leadingArgs?: (ctx: AttemptContext) => string[];
  /** The recorded `config_injection` (a subset). */
  config: (ctx: AttemptContext) => Record<string, unknown>;
  /** Files the harness writes with content it enforces (a subset of their JSON), and files it must not write. */
  configFiles?: { json?: (ctx: AttemptContext) => Record<string, unknown>; absent?: (ctx: AttemptContext) => string[] };
  /** The trust registration: where, and how to ask whether the run dir is still trusted there. Null: no trust concept. */
  trust: {
    configPath: (ctx: AttemptContext) => string;
    isTrusted: (configPath: string, dir: string) => Promise<boolean>;
  } | null;
  /** Variables the engine process gets (a subset), and host variables it must not get. */
  env: (ctx: AttemptContext) => Record<string, string>;
  absentEnv?: string[];
  /** The shell tool call of the first turn as recorded (a subset). */
  shellCall: { name: string } & Record<string, unknown>;
  /** The path of the agent's model calls on its wire API. */
  requestPath: RegExp;
  /** Tools offered in the first request, and what of an injected `demo-hello` skill the first request carries. */
  offered: { tools: string[]; skillEvidence: (ctx: AttemptContext) => Array<string | RegExp> };
  /** What the `use_skill` call's output holds of the `demo-hello` skill, where it is not the skill's name. */
  skillOutput?: string;
  /** The bookkeeping call it makes on every turn in scripted mode, answered outside the script; null: none. */
  sideRequest: string | null;
  /**
   * A user-written start argv that sets a model (and gemini a non-default output format): a resume must keep both.
   * `model` is what the engine then sends on the wire.
   */
  flaggedStart: { args: (prompt: string) => string[]; carried: string[]; model: string };
  /** A scripted 401 fails the attempt as ENGINE_AUTH_FAILED; `requests`: how many model calls (no retries), if fixed. */
  authFailure: { requests: number | null } | null;
  /** A user-written argv that turns on the engine's model router, whose side request is answered outside the script. */
  router: { args: (prompt: string) => string[]; sideKind: string; stderrMustNotContain: string } | null;
  /** The code of a model-side fault where it differs from {@link FAULT_CODES}. */
  faultCodes?: Partial<Record<keyof typeof FAULT_CODES, string>>;
  /** A config file of the engine in a host HOME, which the attempt must neither read nor change. */
  hostConfig: { file: string; text: string };
}

/** The stable code each model-side fault fails an attempt with: the engine ends itself, except on a stall. */
const FAULT_CODES = {
  malformed: 'ENGINE_PROTOCOL_ERROR',
  drop: 'ENGINE_NETWORK_ERROR',
  stall: 'ENGINE_TIMEOUT',
} as const;

const COPILOT_FLAGS = ['--output-format', 'json', '--allow-all-tools', '--no-auto-update'];
const QWEN_FLAGS = ['--yolo', '--output-format', 'stream-json'];
const CLAUDE_FLAGS = ['--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'];
/** How claude and codex list the injected fixture skill to the model (its SKILL.md description). */
const SKILL_LINE = '- demo-hello: Greets the world by writing hello.txt';
/**
 * What the harness runs gemini's bundle and qwen's `cli.js` with (Node and V8's `--liftoff-only`, see
 * `src/engines/gemini/native-launch.ts`), before their argv; nothing with `AGENT_HARNESS_NPM_LAUNCHERS=1`.
 */
const AS_INSTALLED = process.env.AGENT_HARNESS_NPM_LAUNCHERS === '1';
const GEMINI_NODE_ARGS = AS_INSTALLED
  ? []
  : ['--liftoff-only', fs.realpathSync(path.resolve('node_modules/@google/gemini-cli/bundle/gemini.js'))];
const QWEN_NODE_ARGS = AS_INSTALLED
  ? []
  : [
      '--expose-gc',
      '--liftoff-only',
      path.join(fs.realpathSync(path.resolve('node_modules/@qwen-code/qwen-code')), 'cli.js'),
    ];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const FACTS: Readonly<Record<EngineId, EngineFacts>> = {
  codex: {
    requestPath: /^\/v1\/responses$/,
    sessionId: UUID,
    sessionEvent: { match: { type: 'thread.started' }, idKey: 'thread_id' },
    // The harness profile, the scripted model's URL, and trust for the run dir on the command line (never written).
    leadingArgs: ({ modelUrl, runDir }) => [
      '--profile',
      'agent-harness',
      '-c',
      `model_providers.agent-harness.base_url=${JSON.stringify(`${modelUrl}/v1`)}`,
      '-c',
      codexTrustOverride(runDir),
    ],
    config: ({ agentHome }) => ({
      engine: 'codex',
      profile: 'agent-harness',
      config_path: expect.stringContaining(path.join(agentHome, '.codex')),
    }),
    trust: { configPath: ({ agentHome }) => path.join(agentHome, '.codex', 'config.toml'), isTrusted: isCodexTrusted },
    env: ({ agentHome }) => ({ HOME: agentHome, CODEX_HOME: path.join(agentHome, '.codex') }),
    absentEnv: ['OPENAI_API_KEY'],
    shellCall: { kind: 'shell', name: 'command_execution', exitCode: 0 },
    // codex offers no tools in the request body; it lists skills in `<skills_instructions>` of a developer message.
    offered: { tools: [], skillEvidence: () => [SKILL_LINE, 'demo-hello/SKILL.md'] },
    sideRequest: null,
    flaggedStart: {
      args: (p) => ['exec', '--json', '--skip-git-repo-check', '-m', 'gpt-5.4', p],
      carried: ['-m', 'gpt-5.4'],
      model: 'gpt-5.4',
    },
    authFailure: null,
    router: null,
    hostConfig: { file: '.codex/config.toml', text: 'model = "host/must-not-be-used"\n' },
  },
  claude: {
    requestPath: /^\/v1\/messages$/,
    sessionId: UUID,
    sessionEvent: { idKey: 'session_id', skillsKey: 'skills' },
    config: ({ agentHome }) => ({ engine: 'claude', config_path: path.join(agentHome, '.claude'), profile: null }),
    trust: {
      configPath: ({ agentHome }) => path.join(agentHome, '.claude', '.claude.json'),
      isTrusted: isClaudeTrusted,
    },
    env: ({ agentHome, modelUrl }) => ({
      HOME: agentHome,
      CLAUDE_CONFIG_DIR: path.join(agentHome, '.claude'),
      ANTHROPIC_BASE_URL: modelUrl,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      IS_SANDBOX: '1',
    }),
    shellCall: { kind: 'shell', name: 'Bash', exitCode: 0 },
    // claude lists the skills for its Skill tool in a system message.
    offered: { tools: ['Bash', 'Skill'], skillEvidence: () => [SKILL_LINE] },
    sideRequest: null,
    flaggedStart: {
      args: (p) => ['-p', p, ...CLAUDE_FLAGS, '--model', 'claude-sonnet-4-5'],
      carried: ['--model', 'claude-sonnet-4-5'],
      model: 'claude-sonnet-4-5',
    },
    // CLAUDE_CODE_MAX_RETRIES=0: one request, not claude's default 10 retries with backoff.
    authFailure: { requests: 1 },
    router: null,
    hostConfig: { file: '.claude/settings.json', text: '{"model":"host/must-not-be-used"}\n' },
  },
  gemini: {
    requestPath: /^\/v1beta\/models\/[^/:]+:streamGenerateContent$/,
    leadingArgs: () => GEMINI_NODE_ARGS,
    sessionId: UUID,
    sessionEvent: { idKey: 'session_id' },
    // Decision 11: the enforced settings live in the run directory; the shared managed HOME has none.
    config: ({ runDir }) => ({ engine: 'gemini', config_path: path.join(runDir, '.gemini', 'settings.json') }),
    configFiles: {
      json: ({ runDir }) => ({
        [path.join(runDir, '.gemini', 'settings.json')]: {
          security: { auth: { selectedType: 'gemini-api-key' } },
          telemetry: { enabled: false },
        },
      }),
      absent: ({ agentHome }) => [path.join(agentHome, '.gemini', 'settings.json')],
    },
    trust: {
      configPath: ({ agentHome }) => path.join(agentHome, '.gemini', 'trustedFolders.json'),
      isTrusted: isGeminiTrusted,
    },
    env: ({ agentHome }) => ({ HOME: agentHome }),
    shellCall: { kind: 'shell', name: 'run_shell_command', status: 'completed' },
    // gemini offers an injected skill in activate_skill's enum (and its description).
    offered: { tools: ['run_shell_command', 'activate_skill'], skillEvidence: () => [/"enum":\[[^\]]*"demo-hello"/] },
    sideRequest: 'structured_output',
    flaggedStart: {
      args: (p) => ['-p', p, '--output-format', 'json', '--yolo', '-m', 'gemini-2.5-flash'],
      carried: ['--output-format', 'json', '--yolo', '-m', 'gemini-2.5-flash'],
      model: 'gemini-2.5-flash',
    },
    authFailure: null,
    // The router accepted the side answer (a complexity_score below 1 makes it log a ZodError and fall back).
    router: {
      args: (p) => ['-p', p, '--output-format', 'stream-json', '--yolo', '-m', 'auto'],
      sideKind: 'structured_output',
      stderrMustNotContain: 'NumericalClassifierStrategy failed',
    },
    hostConfig: { file: '.gemini/settings.json', text: '{"model":{"name":"host/must-not-be-used"}}\n' },
  },
  opencode: {
    requestPath: /^\/v1\/chat\/completions$/,
    sessionId: /^ses_[A-Za-z0-9]+$/,
    sessionEvent: { match: { type: 'step_start' }, idKey: 'sessionID' },
    config: ({ agentHome }) => ({
      engine: 'opencode',
      config_path: path.join(agentHome, '.config', 'opencode', 'opencode.json'),
    }),
    trust: null,
    // Scripted: its Bun runtime stops at the baseline JIT (src/engines/opencode/index.ts), tool calls and turns as ever.
    env: ({ agentHome }) => ({ HOME: agentHome, BUN_JSC_useDFGJIT: '0' }),
    shellCall: { kind: 'shell', name: 'bash', exitCode: 0 },
    // opencode lists skills (name, description, SKILL.md location) in `<available_skills>` of the system prompt of
    // every request, and offers the `skill` tool to load one.
    offered: {
      tools: ['bash', 'skill'],
      skillEvidence: ({ runDir }) => [
        '<name>demo-hello</name>',
        path.join(runDir, '.opencode', 'skills', 'demo-hello', 'SKILL.md'),
      ],
    },
    sideRequest: 'title',
    flaggedStart: {
      args: (p) => ['run', '--format', 'json', '-m', 'agent-harness/scripted', p],
      carried: ['-m', 'agent-harness/scripted'],
      model: 'scripted',
    },
    // 401 is not retried by opencode; a 500 is retried with backoff for about a minute before the error event.
    authFailure: { requests: null },
    // opencode retries a dropped stream until the harness's timeout ends it.
    faultCodes: { drop: 'ENGINE_TIMEOUT' },
    router: null,
    hostConfig: { file: '.config/opencode/opencode.json', text: '{"model":"host/must-not-be-used"}\n' },
  },
  copilot: {
    requestPath: /^\/v1\/chat\/completions$/,
    sessionId: UUID,
    // The session id comes only with the closing `result` line.
    sessionEvent: { match: { type: 'result' }, idKey: 'sessionId' },
    config: ({ agentHome }) => ({
      engine: 'copilot',
      config_path: path.join(agentHome, '.copilot', 'settings.json'),
    }),
    configFiles: {
      json: ({ agentHome }) => ({ [path.join(agentHome, '.copilot', 'settings.json')]: { autoUpdate: false } }),
    },
    trust: {
      configPath: ({ agentHome }) => path.join(agentHome, '.copilot', 'settings.json'),
      isTrusted: isCopilotTrusted,
    },
    env: ({ agentHome }) => ({
      HOME: agentHome,
      COPILOT_HOME: path.join(agentHome, '.copilot'),
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_TYPE: 'openai',
      COPILOT_MODEL: 'scripted',
    }),
    shellCall: { kind: 'shell', name: 'bash', exitCode: 0 },
    // copilot lists skills (name, description, location) in `<available_skills>` of its `skill` tool's context.
    offered: { tools: ['bash', 'skill', 'create'], skillEvidence: () => ['<name>demo-hello</name>'] },
    sideRequest: null,
    flaggedStart: {
      args: (p) => ['-p', p, ...COPILOT_FLAGS, '--model', 'scripted'],
      carried: ['--model', 'scripted'],
      model: 'scripted',
    },
    authFailure: { requests: null },
    router: null,
    hostConfig: { file: '.copilot/settings.json', text: '{"model":"host/must-not-be-used"}\n' },
  },
  qwen: {
    requestPath: /^\/v1\/chat\/completions$/,
    leadingArgs: () => QWEN_NODE_ARGS,
    sessionId: UUID,
    sessionEvent: { match: { type: 'system', subtype: 'init' }, idKey: 'session_id' },
    // Decision 11: the enforced settings live in the run directory; the shared managed HOME has none.
    config: ({ runDir }) => ({ engine: 'qwen', config_path: path.join(runDir, '.qwen', 'settings.json') }),
    configFiles: {
      json: ({ runDir }) => ({
        [path.join(runDir, '.qwen', 'settings.json')]: {
          security: { auth: { selectedType: 'openai' } },
          telemetry: { enabled: false },
          privacy: { usageStatisticsEnabled: false },
          model: { generationConfig: { maxRetries: 0 } },
          memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
        },
      }),
      absent: ({ agentHome }) => [path.join(agentHome, '.qwen', 'settings.json')],
    },
    trust: {
      configPath: ({ agentHome }) => path.join(agentHome, '.qwen', 'trustedFolders.json'),
      isTrusted: isQwenTrusted,
    },
    env: ({ agentHome, modelUrl }) => ({ HOME: agentHome, OPENAI_BASE_URL: `${modelUrl}/v1` }),
    shellCall: { kind: 'shell', name: 'run_shell_command', exitCode: 0 },
    // qwen lists the skills of its `skill` tool (name, description) in that tool's description.
    offered: {
      tools: ['run_shell_command', 'skill', 'write_file'],
      skillEvidence: () => [/demo-hello\\n<\/name>\\n<description>\\nGreets the world/],
    },
    // qwen's `skill` tool answers with the SKILL.md body, without the skill's name.
    skillOutput: 'Greets the world by writing hello.txt',
    sideRequest: null,
    flaggedStart: {
      args: (p) => ['-p', p, ...QWEN_FLAGS, '-m', 'qwen3-coder-plus'],
      carried: ['-m', 'qwen3-coder-plus'],
      model: 'qwen3-coder-plus',
    },
    // A 401 is not retried.
    authFailure: { requests: 1 },
    router: null,
    hostConfig: { file: '.qwen/settings.json', text: '{"model":{"name":"host/must-not-be-used"}}\n' },
  },
};

/** A value in the host environment that must reach no engine. */
const HOST_SECRET = 'host-secret-must-not-leak';

/** The model a recorded request asked for (in the body, or in gemini's path). */
function requestedModel(request: { path: string; body: unknown }): string | null {
  const inBody = (request.body as { model?: unknown } | null)?.model;
  if (typeof inBody === 'string') return inBody;
  return /\/models\/([^/:]+):/.exec(request.path)?.[1] ?? null;
}

/** The tool names a request offers, whatever its wire (`name`, `function.name`, gemini's `functionDeclarations`). */
function offeredTools(request: RecordedRequest | undefined): string[] {
  const tools = (request?.body as { tools?: Array<Record<string, any>> } | null)?.tools ?? [];
  return tools.flatMap((t) =>
    Array.isArray(t.functionDeclarations)
      ? t.functionDeclarations.map((d: { name: string }) => d.name)
      : [t.function?.name ?? t.name ?? t.type],
  );
}

/** The agent's own model calls (not the side requests an engine makes for bookkeeping). */
function agentCalls(requests: readonly RecordedRequest[]): RecordedRequest[] {
  return requests.filter((r) => r.wire !== null && r.response_kind !== 'side');
}

/**
 * Names in the real HOME (a leak would add engine config there). The canaries other test files plant in the real
 * HOME while this one runs (`homeCanaryPath`) come and go on their own and are left out.
 */
function realHomeNames(): string[] {
  const home = os.homedir();
  return fs.existsSync(home)
    ? fs
        .readdirSync(home)
        .filter((name) => !isHomeCanary(name))
        .sort()
    : [];
}

/**
 * A host HOME holding every engine's config, and a host env with that HOME and every engine's live-mode variable
 * (keys, base URLs) set to a secret.
 */
function hostWithConfigs(): { home: string; env: NodeJS.ProcessEnv } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-engine-matrix-host-'));
  for (const facts of Object.values(FACTS)) {
    fs.mkdirSync(path.dirname(path.join(home, facts.hostConfig.file)), { recursive: true });
    fs.writeFileSync(path.join(home, facts.hostConfig.file), facts.hostConfig.text);
  }
  return {
    home,
    env: { ...process.env, HOME: home, ...Object.fromEntries(LIVE_ENV_KEYS.map((k) => [k, `${k}-${HOST_SECRET}`])) },
  };
}

describe.for(ENGINES)('%s engine (real binary, scripted model)', (engine) => {
  // An engine that cannot run here is skipped at run time with its reason, under the same test names as the
  // others, so its cells appear in the report's engine matrix as skipped.
  const missing = MISSING[engine];
  const it = test;
  const ready = (skip: (note?: string) => never): EngineFacts => {
    if (missing) skip(missing);
    const facts = FACTS[engine];
    if (!facts)
      throw new Error(
        `the engine matrix has no facts for ${engine}: add its row to FACTS in ${path.basename(import.meta.filename)}`,
      );
    return facts;
  };

  it(`engine specifics across start and resume: tool call, files, completion, session, argv, config, trust, env, skills offered, host HOME untouched`, async ({
    model,
    agent,
    harness,
    skip,
  }) => {
    const facts = ready(skip);
    const adapter = ADAPTERS[engine]!;
    // A host HOME with every engine's config and a host env with every vendor key: none may reach the engine.
    const host = hostWithConfigs();
    harness.hostEnv = host.env;
    try {
      const hostBefore = await snapshotTree(host.home, { exclude: [] });
      const homeBefore = realHomeNames();
      model.script(turns.shell("printf 'hello from agent-harness\\n' > hello.txt"), turns.final('Wrote hello.txt.'));
      // The prompt does not name the skill: what the request says of it, the harness injected.
      const run = await agent.start(engine, {
        prompt: 'Write hello.txt.',
        translateMode: 3,
        onlySkills: ['demo-hello'],
      });
      const first = run.last;
      // The run's lane of the test's server (`<model.url>/__attempt/<key>`): its attempts' base URL.
      const modelUrl = JSON.parse(fs.readFileSync(first.audit.meta, 'utf8')).model.base_url as string;
      expect(modelUrl.startsWith(`${model.url}/__attempt/`)).toBe(true);
      const ctx: AttemptContext = {
        agentHome: runHome(harness.paths, first.runId).home,
        runDir: first.runDir,
        modelUrl,
      };
      expect(first.error).toBeNull();
      expect(first.completion).toEqual({ state: 'completed', reason: 'done_marker' });
      expect(first.attempt).toBe(1);
      expect(run.finalText).toBe('Wrote hello.txt.');
      expect(first.finalMessage).toContain('Wrote hello.txt.');

      // The session id, as the engine's own stdout names it.
      expect(first.sessionId).toMatch(facts.sessionId);
      const stdout = fs
        .readFileSync(first.audit.stdout, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const sessionMatch = adapter.initMessage ?? facts.sessionEvent.match ?? {};
      expect(Object.keys(sessionMatch), `${engine}: name its session event`).not.toEqual([]);
      const sessionEvent = stdout.find((e) => Object.entries(sessionMatch).every(([k, v]) => e[k] === v));
      expect(sessionEvent, `no ${JSON.stringify(sessionMatch)} event on stdout`).toBeDefined();
      expect(sessionEvent![facts.sessionEvent.idKey]).toBe(first.sessionId);
      if (facts.sessionEvent.skillsKey) expect(sessionEvent![facts.sessionEvent.skillsKey]).toContain('demo-hello');

      // The tool call ran and wrote the file.
      expect(first.toolCalls).toHaveLength(1);
      expect(first.toolCalls[0]).toMatchObject(facts.shellCall);
      expect(run).toHaveChangedFiles(['hello.txt']);
      expect(first.fsDiff?.created).toContain('hello.txt');
      expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\n');

      // Only the skill asked for is injected, and the engine offered it to the model.
      expect(run.skillsInjected).toEqual(['demo-hello']);
      expect(run).toHaveOfferedSkill('demo-hello');
      expect(run).not.toHaveOfferedSkill('csv-stats');
      // Every request came on the engine's wire API, the agent's first to its path.
      const wireApi = await engineWireApi(engine);
      expect(model.requests.map((r) => r.wire)).toEqual(model.requests.map(() => wireApi));
      const [firstCall] = agentCalls(model.requests);
      expect(firstCall?.path).toMatch(facts.requestPath);
      expect(offeredTools(firstCall)).toEqual(expect.arrayContaining(facts.offered.tools));
      const firstBody = JSON.stringify(firstCall?.body);
      for (const evidence of facts.offered.skillEvidence(ctx)) expect(firstBody).toMatch(evidence);
      expect(firstBody).not.toContain('csv-stats');

      // Bookkeeping calls are answered 200 outside the script.
      const side = model.requests.filter((r) => r.response_kind === 'side');
      expect(side.every((r) => r.status === 200 && r.turn_index === null)).toBe(true);
      if (facts.sideRequest) expect(side.map((r) => r.side_kind)).toContain(facts.sideRequest);
      expect(model.egress).toEqual([]);

      // The audit: argv, config, trust, env.
      const meta1 = expectCompleteAudit(first.audit);
      const leading = facts.leadingArgs?.(ctx) ?? [];
      const startArgs = adapter.buildStartArgs({ prompt: 'Write hello.txt.', passthrough: [] });
      expect(meta1.command?.argv).toEqual([...leading, ...startArgs]);
      expect(meta1.skill_injection.skills.map((s) => s.name)).toEqual(['demo-hello']);
      expect(meta1.config_injection).toMatchObject(facts.config(ctx));
      for (const [file, json] of Object.entries(facts.configFiles?.json?.(ctx) ?? {}))
        expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject(json as object);
      for (const file of facts.configFiles?.absent?.(ctx) ?? []) expect(fs.existsSync(file), file).toBe(false);
      if (facts.trust) {
        const trustPath = facts.trust.configPath(ctx);
        expect(meta1.trust).toMatchObject({ path: first.runDir, config_path: trustPath });
        expect(meta1.trust?.removed_at).not.toBeNull();
        expect(await facts.trust.isTrusted(trustPath, first.runDir)).toBe(false);
      } else {
        expect(meta1.trust).toBeNull();
      }
      expect(meta1.env).toMatchObject(facts.env(ctx));
      expect(JSON.stringify(meta1.env)).not.toContain(HOST_SECRET);
      for (const key of facts.absentEnv ?? []) expect(Object.keys(meta1.env)).not.toContain(key);

      // Resume by handle: attempt 2 in the same run dir, same session; its turns go after the ones already used.
      const record = await resolveRunSelector(harness.paths.runRoot, first.handle);
      expect(record.run_dir).toBe(first.runDir);
      expect(record.engine).toBe(engine);
      await run.resume('Append another line.', {
        turns: [turns.shell("printf 'again\\n' >> hello.txt"), turns.final('Appended to hello.txt.')],
      });
      const second = run.last;
      expect(second.error).toBeNull();
      expect(second.runDir).toBe(first.runDir);
      expect(second.attempt).toBe(2);
      expect(second.sessionId).toBe(first.sessionId);
      expect(second.completion).toEqual({ state: 'completed', reason: 'done_marker' });
      expect(run).toHaveCompleted();
      expect(run).toHaveFcmpSequence([
        'conversation.started',
        'user.input.replied',
        'assistant.message.final',
        'conversation.completed',
      ]);
      expect(second.fsDiff?.modified).toContain('hello.txt');
      expect(fs.readFileSync(path.join(first.runDir, 'hello.txt'), 'utf8')).toBe('hello from agent-harness\nagain\n');
      const meta2 = expectCompleteAudit(second.audit);
      const resumeArgs = adapter.buildResumeArgs!({ sessionId: first.sessionId!, message: 'Append another line.' });
      expect(meta2.command?.argv).toEqual([...leading, ...resumeArgs]);
      expect(second.fcmp[0]!.seq).toBeGreaterThan(first.fcmp.at(-1)!.seq);
      if (facts.trust) expect(await facts.trust.isTrusted(facts.trust.configPath(ctx), first.runDir)).toBe(false);
      expect(JSON.stringify(meta2.env)).not.toContain(HOST_SECRET);
      // Attempt 1's files are untouched by attempt 2.
      expect(JSON.parse(fs.readFileSync(first.audit.meta, 'utf8')).attempt).toBe(1);
      // run.json keeps the whole script inline, so `agent-harness resume <handle>` from a terminal gets it too.
      expect((await readRunRecord(first.runDir))?.script).toEqual(model.server.script);
      expect(model.egress).toEqual([]);

      // Neither the host HOME given nor the real one got anything.
      expect((await snapshotTree(host.home, { exclude: [] })).entries).toEqual(hostBefore.entries);
      expect(realHomeNames()).toEqual(homeBefore);
    } finally {
      fs.rmSync(host.home, { recursive: true, force: true });
    }
  });

  it(`waits for input when the turn ends without the done marker`, async ({ model, agent, skip }) => {
    ready(skip);
    model.script(turns.text('Which file should I write?'));
    const run = await agent.start(engine, { prompt: 'do something' });
    expect(run.completion).toEqual({ state: 'awaiting_input', reason: 'turn_end_without_done_marker' });
    expect(run.fcmp.at(-1)?.type).toBe('user.input.required');
    expectCompleteAudit(run.audit);
  });

  it(`fails promptly on a scripted 429 with ENGINE_RATE_LIMITED; side requests never take the error turn`, async ({
    model,
    agent,
    skip,
  }) => {
    const facts = ready(skip);
    model.script(turns.error(429, 'Rate limit reached for the scripted model; resource exhausted'));
    // The engine must give up on its own (not retry with backoff until the harness kills it): 60 s is far above the
    // few seconds a prompt failure takes even on a loaded machine, and far below a backoff loop (opencode retried a
    // scripted 429 five times over 60 s, and qwen 0.24.4 seven times over about 80 s, before the server answered
    // `retry-after-ms: 1`, which both honour; no qwen setting bounds its main chat path's retries).
    const run = await agent.start(engine, { prompt: 'hi', timeoutMs: 60_000 });
    // Not ENGINE_TIMEOUT: the engine gave up on its own.
    expect(run.error).toBeNull();
    expect(run.last.timedOut).toBe(false);
    expect(run.completion).toMatchObject({ state: 'failed', code: 'ENGINE_RATE_LIMITED' });
    expect(run.fcmp.at(-1)).toMatchObject({
      type: 'conversation.failed',
      data: { category: 'rate_limit', code: 'ENGINE_RATE_LIMITED' },
    });
    const meta = expectCompleteAudit(run.audit);
    expect(meta.completion).toEqual(run.completion);
    // Bookkeeping calls (token counts, titles, routers) are answered 200 outside the script.
    const side = model.requests.filter((r) => r.response_kind === 'side');
    expect(side.every((r) => r.status === 200 && r.turn_index === null)).toBe(true);
    if (facts.sideRequest) expect(side.map((r) => r.side_kind)).toContain(facts.sideRequest);
    const calls = agentCalls(model.requests);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((r) => r.status === 429 && r.turn_index === 0)).toBe(true);
    // The attempt's own request log holds exactly these requests.
    const logged = fs.readFileSync(run.audit.modelRequests, 'utf8').split('\n').filter(Boolean);
    expect(logged).toHaveLength(model.requests.length);
    expect(model.egress).toEqual([]);
  });

  it(`fails the attempt on a scripted 401 as ENGINE_AUTH_FAILED (no retries) and still writes every audit file`, async ({
    model,
    agent,
    skip,
  }) => {
    const { authFailure } = ready(skip);
    if (!authFailure) return skip(`${engine}'s answer to a 401 is covered by the 429 and fault cases only`);
    model.script(turns.error(401, 'scripted bad key'));
    const run = await agent.start(engine, { prompt: 'hi', timeoutMs: scaled(120_000) });
    expect(run.last.timedOut).toBe(false);
    expect(run.completion.state).toBe('failed');
    expect(run.fcmp.at(-1)?.type).toBe('conversation.failed');
    expect(run.fcmp.at(-1)?.data).toMatchObject({ category: 'auth', code: 'ENGINE_AUTH_FAILED' });
    const meta = expectCompleteAudit(run.audit);
    expect(meta.completion?.state).toBe('failed');
    expect(meta.exit).not.toBeNull();
    expect(fs.statSync(run.audit.stdout).size).toBeGreaterThan(0);
    if (authFailure.requests !== null) expect(agentCalls(model.requests)).toHaveLength(authFailure.requests);
    expect(model.egress).toEqual([]);
  });

  it(`answers the model-router side request of a user-written argv outside the script`, async ({
    model,
    agent,
    skip,
  }) => {
    const { router } = ready(skip);
    if (!router) return skip(`${engine} has no model router`);
    model.script(turns.writeFile('a.txt', 'x'), turns.final('Wrote a.txt.'));
    const run = await agent.start(engine, { args: router.args('write a.txt') });
    expect(run.completion).toEqual({ state: 'completed', reason: 'done_marker' });
    const side = model.requests.filter((r) => r.side_kind === router.sideKind);
    expect(side.length).toBeGreaterThan(0);
    expect(side.every((r) => r.status === 200 && r.response_kind === 'side' && r.turn_index === null)).toBe(true);
    expect(fs.readFileSync(run.audit.stderr, 'utf8')).not.toContain(router.stderrMustNotContain);
    expect(fs.readFileSync(path.join(run.runDir, 'a.txt'), 'utf8')).toBe('x');
    expect(model.egress).toEqual([]);
  });

  it(
    `fails with ENGINE_TIMEOUT when the harness kills it; contained: only loopback, nothing survives`,
    async ({ model, agent, skip }) => {
      ready(skip);
      // The agent's shell lists its network (probe.cjs writes net.json), leaves a setsid'd sleep behind and then
      // sleeps itself; whatever the engine does next (codex hands a shell command back after 10 s and asks the model
      // again), the model stalls, so only the harness's timeout ends the attempt. That a timeout fails the attempt even
      // after a done marker is verdicts.contract's (a deterministic case; here it would be a race).
      const sleeper = `sleep ${uniqueSleepSeconds()}`;
      model.script(
        turns.shell(`node probe.cjs; setsid ${sleeper} >/dev/null 2>&1 </dev/null & sleep 600`),
        turns.stall(),
      );
      const netFile = (run: HarnessRun): string => path.join(run.runDir, 'net.json');
      // The probe must have run before the harness killed the attempt.
      const run = await withGrowingTimeout(
        (timeoutMs) =>
          agent.start(engine, { prompt: 'sleep a while', timeoutMs, files: { 'probe.cjs': NETWORK_PROBE } }),
        (r) => fs.existsSync(netFile(r)) || !r.last.timedOut,
        5_000,
        80_000,
      );
      expect(run.last.timedOut).toBe(true);
      expect(run.error?.code).toBe('ENGINE_TIMEOUT');
      expect(run.completion).toEqual({ state: 'failed', reason: 'timed_out', code: 'ENGINE_TIMEOUT' });
      expect(run.fcmp.at(-1)).toMatchObject({
        type: 'conversation.failed',
        data: { category: 'timeout', code: 'ENGINE_TIMEOUT' },
      });
      const meta = expectCompleteAudit(run.audit);
      expect(meta.exit?.timed_out).toBe(true);
      expect(meta.error?.code).toBe('ENGINE_TIMEOUT');
      expectFullIsolation(meta, run.runDir);
      // Inside: only `lo`, no route, and a connect to a non-loopback address fails at once, before any packet
      // (ENETUNREACH: no route in the namespace; codex's own sandbox refuses it even earlier with EPERM).
      expect(
        fs.existsSync(netFile(run)),
        `the agent's shell never ran the probe before the timeout (${model.requests.length} model requests)`,
      ).toBe(true);
      const net = JSON.parse(fs.readFileSync(netFile(run), 'utf8'));
      expect(net).toMatchObject({ interfaces: ['lo'], routes: 0 });
      expect(['ENETUNREACH', 'EPERM']).toContain(net.connect);
      // Nothing of the attempt is left: the setsid'd sleep went with the PID namespace.
      expect(pidsWithMarker(sleeper)).toEqual([]);
    },
    scaled(300_000),
  );

  it(`records a call that starts no session (\`${engine} --version\`) as no_session, not a failure`, async ({
    agent,
    skip,
  }) => {
    ready(skip);
    const run = await agent.start(engine, { args: ['--version'] });
    expect(run.exitCode).toBe(0);
    expect(run.completion).toEqual({ state: 'no_session', reason: 'exited_without_session' });
    expect(run.sessionId).toBeNull();
    expect(run.fcmp.map((e) => e.type)).not.toContain('conversation.failed');
    expect(fs.readFileSync(run.audit.stdout, 'utf8')).toMatch(/\d+\.\d+\.\d+/);
    expect(expectCompleteAudit(run.audit, 'split', { terminal: 0 }).completion?.state).toBe('no_session');
  });

  it(`resumes with the start's model and output flags, and says which start flags were carried`, async ({
    model,
    agent,
    skip,
  }) => {
    const { flaggedStart } = ready(skip);
    model.script(turns.shell("printf 'one\\n' > one.txt"), turns.final('Wrote one.txt.'), turns.final('Second turn.'));
    const run = await agent.start(engine, { args: flaggedStart.args('Write one.txt.') });
    expect(run.completion.state).toBe('completed');
    const startRequests = model.requests.length;
    await run.resume('And now?');
    expect(run.completion).toEqual({ state: 'completed', reason: 'done_marker' });
    expect(run.sessionId).toBe(run.attempts[0]!.sessionId);
    const meta = expectCompleteAudit(run.audit);
    expect(meta.resume_flags?.carried).toEqual(expect.arrayContaining(flaggedStart.carried));
    expect(meta.command?.argv.join(' ')).toContain(flaggedStart.carried.join(' '));
    const resumeCalls = agentCalls(model.requests.slice(startRequests));
    expect(resumeCalls.length).toBeGreaterThan(0);
    expect(resumeCalls.map(requestedModel)).toContain(flaggedStart.model);
  });

  it(`normalizes a failing shell call: the command without a wrapper, exit code 3, status failed`, async ({
    model,
    agent,
    skip,
  }) => {
    ready(skip);
    model.script(turns.shell("printf 'partial' > stats.json; exit 3"), turns.final('The command failed.'));
    const run = await agent.start(engine, { prompt: 'Write stats.json.' });
    expect(run).toHaveCompleted();
    expect(run).toHaveCalledTool({
      kind: 'shell',
      command: "printf 'partial' > stats.json; exit 3",
      exitCode: 3,
      status: 'failed',
    });
    expect(run).not.toHaveCalledTool({ command: /stats\.json/, exitCode: 0 });
    const types = run.fcmp.map((e) => e.type);
    expect(types.indexOf('tool.call')).toBeLessThan(types.indexOf('tool.result'));
    expect(run.fcmp.find((e) => e.type === 'tool.result')?.data).toMatchObject({ status: 'failed', exit_code: 3 });
  });

  it.for(['malformed', 'drop', 'stall'] as const)(
    `a model-side fault (%s) fails the attempt with its stable code, audit complete`,
    { timeout: scaled(300_000) },
    async (fault, { model, agent, skip }) => {
      const facts = ready(skip);
      const code = facts.faultCodes?.[fault] ?? FAULT_CODES[fault];
      model.script(fault === 'malformed' ? turns.malformed() : fault === 'drop' ? turns.drop() : turns.stall());
      // The harness's timeout ends what the engine does not end itself (a stall; opencode retries a dropped stream),
      // and that costs the whole timeout, so it starts short. Either way the timeout grows (bounded) while it fired
      // too early: before the fault was served, or before an engine expected to end itself had the time to.
      let from = 0;
      const served = (): boolean => model.requests.slice(from).some((r) => r.response_kind === fault);
      const endsItself = code !== 'ENGINE_TIMEOUT';
      const run = await withGrowingTimeout(
        (timeoutMs) => {
          from = model.requests.length;
          return agent.start(engine, { prompt: 'hi', timeoutMs });
        },
        (r) => !r.last.timedOut || (!endsItself && served()),
        endsItself ? 15_000 : 5_000,
        80_000,
      );
      expect(served(), `no ${fault} response was served before the attempt ended`).toBe(true);
      expect(run.last.timedOut).toBe(!endsItself);
      expect(run.completion).toMatchObject({ state: 'failed', code });
      expect(run.fcmp.at(-1)).toMatchObject({ type: 'conversation.failed', data: { code } });
      expectCompleteAudit(run.audit);
    },
  );

  it(`starts from a seeded workspace: the diff shows only the agent's work, the audit has a git diff`, async ({
    model,
    agent,
    skip,
  }) => {
    ready(skip);
    model.script(
      turns.shell("printf -- '- Seeded change.\\n' >> CHANGELOG.md && printf '{\"rows\": 2}' > stats.json"),
      turns.final('Updated.'),
    );
    const run = await agent.start(engine, {
      prompt: 'Update the changelog.',
      template: 'fixtures/repos/changelog',
      files: { 'notes/todo.txt': 'seeded inline\n' },
    });
    expect(run).toHaveCompleted();
    // Seeded files existed before fs-before: the agent's edit is "modified", not "created".
    expect(run).toHaveChangedExactly(['CHANGELOG.md', 'stats.json']);
    expect(run).toHaveLeftUnchanged(['data.csv', 'notes/todo.txt']);
    expect(run.fsDiff?.modified).toEqual(['CHANGELOG.md']);
    expect(fs.readFileSync(path.join(run.runDir, 'notes', 'todo.txt'), 'utf8')).toBe('seeded inline\n');
    const meta = expectCompleteAudit(run.audit);
    expect(meta.workspace).toMatchObject({
      files: ['notes/todo.txt'],
      git_commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    const patch = fs.readFileSync(path.join(run.runDir, meta.files.gitDiff!), 'utf8');
    expect(patch).toContain('+- Seeded change.');
    expect(patch).toContain('b/stats.json');
    // The harness's skill root is excluded from git: the patch holds the agent's work only.
    expect(patch).not.toMatch(/SKILL\.md/);
  });

  it(`loads a skill and writes a file through the script intents`, async ({ model, agent, skip }) => {
    const facts = ready(skip);
    model.script(
      turns.useSkill('demo-hello'),
      turns.writeFile('hello.txt', 'hello from the skill\n'),
      turns.final('Done with demo-hello.'),
    );
    const run = await agent.start(engine, { prompt: 'Use the demo-hello skill.' });
    expect(run).toHaveCompleted();
    expect(run).toHaveUsedSkill('demo-hello');
    // Each intent goes to the engine's own tool where its tool table has one, else to its shell.
    const { skill, write } = ADAPTERS[engine]!.tools;
    expect(run.toolCalls.map((c) => c.name)).toEqual([
      skill?.tool ?? facts.shellCall.name,
      write?.tool ?? facts.shellCall.name,
    ]);
    expect(run.toolCalls[0]?.output).toContain(facts.skillOutput ?? 'demo-hello');
    expect(run).toHaveChangedFiles(['hello.txt']);
    expect(fs.readFileSync(path.join(run.runDir, 'hello.txt'), 'utf8')).toBe('hello from the skill\n');
  });
});
