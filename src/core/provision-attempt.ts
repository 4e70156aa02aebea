/**
 * Step 3 of an attempt, provision: everything the engine finds when it starts. The workspace seed, the skills, the
 * engine's config and trust entry, the agent options, the managed environment, the executable and the command line.
 * What it sets outside the run directory is given back by the attempt's resources.
 */
import { assertAgentPathSafe, confineToAgentRoots } from '../runtime/agent-writable.js';
import fs from 'node:fs';
import path from 'node:path';
import { applyAgentOptions } from '../engines/agent-options.js';
import type { EngineAdapter, PreparedEngine } from '../engines/engine.js';
import { carryResumeFlags, withCarriedFlags } from '../engines/resume-flags.js';
import { setSettingsKeys } from '../runtime/config-file.js';
import { engineVersion } from '../runtime/engine-version.js';
import { checkedVersionState, describeCheckedVersions } from '../engines/engine-versions.js';
import { buildEngineEnv, redactEnv } from '../runtime/env.js';
import { NPM_LAUNCHERS_ENV, resolveExecutable } from '../runtime/executables.js';
import type { AttemptIsolation } from '../runtime/isolation/attempt-isolation.js';
import { assertNoEnvLeak } from '../runtime/leak-guard.js';
import { writeOwnFileSync } from '../runtime/own-file.js';
import { injectSkills } from '../runtime/skills.js';
import type { AttemptPlan, OpenedAttempt, ProvisionedAttempt } from './attempt-steps.js';
import { excludeHarnessPaths, hasWorkspaceSeed, seedWorkspace } from './workspace.js';
import { attemptMountPlan } from './attempt-filesystem.js';

function nowIso(): string {
  return new Date().toISOString();
}

/** Puts the engine's config and trust entry back: settings keys in reverse order, then the adapter's own cleanup. */
function undoEngineConfig(
  opened: OpenedAttempt,
  restores: Array<() => Promise<void>>,
  prepared: { value: PreparedEngine | null },
): () => Promise<void> {
  // After the engine: what the agent left in its home and run directory is not followed (agent-writable.ts).
  return () =>
    confineToAgentRoots([opened.home.home, opened.runDir], async () => {
      for (const restore of restores.reverse()) await restore().catch(() => undefined);
      if (!prepared.value) return;
      // A trust entry left behind stays leased: a later command reclaims it.
      await prepared.value.cleanup();
      if (opened.record.trust) opened.record.trustRemovedAt = nowIso();
    });
}

/** The engine's arguments: the resume command with the run's carried flags, the user's own, or the default start. */
function engineArgs(plan: AttemptPlan, opened: OpenedAttempt): string[] {
  const { adapter, request, resumeArgs } = plan;
  const { run } = opened;
  if (resumeArgs) {
    const carry = run.start_args ? carryResumeFlags(run.start_args, adapter.resumeFlags ?? []) : null;
    opened.record.resumeFlags = carry;
    return withCarriedFlags(
      resumeArgs({ sessionId: run.session_id ?? '', message: request.message ?? '' }),
      carry?.carried ?? [],
      adapter.resumeFlags ?? [],
    );
  }
  opened.record.resumeFlags = null;
  return request.rawArgs
    ? [...(request.passthrough ?? [])]
    : adapter.buildStartArgs({ prompt: request.prompt ?? null, passthrough: request.passthrough ?? [] });
}

/**
 * Over ACP through an adapter package (`via: { package, bin }`): its installed bin, which the agent's filesystem must
 * show too; none when the adapter is not installed (its `command` refuses the attempt then) or for a native mode.
 */
function acpAdapterExecutable(plan: AttemptPlan, hostPath: string | undefined): string[] {
  const via = plan.transport === 'acp' ? plan.adapter.acp?.via : undefined;
  if (!via || via === 'native') return [];
  try {
    return [resolveExecutable(via.bin, plan.request.paths, hostPath)];
  } catch {
    return [];
  }
}

/** Says loudly that the attempt runs with less isolation than asked for (mode `auto`). */
function degraded(opened: OpenedAttempt, isolation: AttemptIsolation): void {
  const { record } = isolation;
  opened.rasp.diagnostic({
    code: 'ISOLATION_DEGRADED',
    message: `${record.processes === 'pid-namespace' ? 'The agent sees the host filesystem' : 'No namespaces for this attempt'}: ${record.reason}. Network: ${record.network}, processes: ${record.processes}, filesystem: ${record.filesystem ?? 'host'}.`,
    level: 'warning',
  });
}

/**
 * Removes the attempt's TMPDIR. Usually the engine left it empty: one rmdir, at once. Otherwise (opencode unpacks a
 * 5 MB library there) the recursive removal goes through the thread pool, so a large tree never holds the event loop.
 * The recursive removal alone cost an empty directory ~4 ms, and ~35 ms with 16 attempts in one process (its trips
 * through the pool behind theirs), on the path of every attempt's result.
 */
function removeAttemptTmp(dir: string): Promise<void> | undefined {
  try {
    fs.rmdirSync(dir);
    return undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return fs.promises.rm(dir, { recursive: true, force: true });
  }
}

/**
 * Provisions the engine's world and returns its command; throws to fail the attempt (recorded by the seal step).
 * Config is written into the run's home and directory, which an earlier attempt's agent could write: never through a
 * link it planted there (agent-writable.ts).
 */
export function provisionAttempt(plan: AttemptPlan, opened: OpenedAttempt): Promise<ProvisionedAttempt> {
  return confineToAgentRoots([opened.home.home, opened.runDir], () => provisionWithin(plan, opened));
}

/** The model's URL and the attempt's namespaces, once both are up; says so when the isolation is less than asked. */
async function modelAndIsolation(
  opened: OpenedAttempt,
): Promise<{ modelUrl: string | null; isolation: AttemptIsolation }> {
  const { record, clock } = opened;
  const modelUrl = (await opened.model).url;
  record.modelBaseUrl = modelUrl;
  clock.mark('model_server');
  const isolation = await opened.isolation;
  record.isolation = isolation.record;
  clock.mark('isolation');
  if (isolation.record.reason !== null && isolation.record.mode === 'auto') degraded(opened, isolation);
  return { modelUrl, isolation };
}

/** The run's managed home and the attempt's TMPDIR, made after the leak guard (nothing written into HOME). */
function makeManagedDirs(plan: AttemptPlan, opened: OpenedAttempt): void {
  const { paths } = plan.request;
  const { home, attemptTmp } = opened;
  // The leak guard runs before anything is written into the managed home.
  assertNoEnvLeak([paths.agentHome, home.home, paths.tmpDir, paths.npmPrefix], plan.hostEnv.HOME);
  for (const dir of [home.home, home.npmPrefix, home.uvCacheDir, home.uvProjectEnvironment, attemptTmp]) {
    assertAgentPathSafe(dir);
    fs.mkdirSync(dir, { recursive: true });
  }
}

/**
 * Sends the agent's filesystem plan to the namespace init, which builds it while the engine's config is written (a
 * PTY's init builds it once started); the init starts the engine only once it is built, and a failure is reported by
 * then (spawn-engine.ts).
 */
function containFilesystem(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  isolation: AttemptIsolation,
  native: { file: string; readOnly?: readonly string[] } | null,
): void {
  if (isolation.record.processes !== 'pid-namespace') return;
  const { request, hostEnv } = plan;
  isolation.contain(
    attemptMountPlan({
      paths: request.paths,
      runDir: opened.runDir,
      attemptTmp: opened.attemptTmp,
      home: opened.home,
      executables: [
        plan.executable,
        ...(native ? [native.file, ...(native.readOnly ?? [])] : []),
        ...acpAdapterExecutable(plan, hostEnv.PATH),
      ],
      agentOptions: request.agentOptions,
      expose: plan.expose,
      rule: plan.hostPathRule,
    }),
  );
}

/** The workspace seed (a new seeded run) and the skills, into the run directory. */
async function seedAndInject(plan: AttemptPlan, opened: OpenedAttempt): Promise<void> {
  const { request, adapter } = plan;
  const { paths } = request;
  const { runDir, record } = opened;
  if (hasWorkspaceSeed(request.workspace))
    record.workspace = await seedWorkspace(runDir, request.workspace, paths.projectRoot);
  record.skillInjection = await injectSkills({
    sourceRoots: paths.skillRoots,
    rule: plan.hostPathRule,
    targetRoot: path.join(runDir, adapter.skillRoot),
    ...(request.onlySkills ? { only: request.onlySkills } : {}),
  });
  opened.clock.mark('workspace_and_skills');
}

/** The engine's config and trust entry, then the agent options' files and settings (undone by `restores`). */
async function configureEngine(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  modelUrl: string | null,
  restores: Array<() => Promise<void>>,
  prepared: { value: PreparedEngine | null },
): Promise<{ engine: PreparedEngine; options: ReturnType<typeof applyAgentOptions> }> {
  const { adapter, request } = plan;
  const { runDir, attemptTmp, home, record } = opened;
  prepared.value = await adapter.prepare({
    runDir,
    agentHome: home.home,
    modelMode: plan.modelMode,
    modelBaseUrl: modelUrl,
    profile: request.paths.codexProfile,
    interactive: plan.io !== 'split',
  });
  const engine = prepared.value;
  record.configInjection = engine.configInjection;
  await excludeHarnessPaths(runDir, [`${adapter.skillRoot.split('/')[0]}/`]);
  record.trust = engine.trust ? { ...engine.trust, registered_at: nowIso(), removed_at: null } : null;
  // Over ACP the MCP servers go to session/new (the client's), not into the engine's config, unless the engine's ACP
  // mode needs them there too (its mapper is told the transport).
  const acp = plan.transport === 'acp';
  const withMcp = acp && adapter.acp?.mcpInAgentOptions === true;
  const agentOptions =
    acp && !withMcp && request.agentOptions ? { ...request.agentOptions, mcpServers: [] } : request.agentOptions;
  const ctx = { runDir, attemptTmp, ...(withMcp ? { transport: 'acp' as const } : {}) };
  const options = applyAgentOptions(adapter, agentOptions, ctx);
  // The environment the MCP servers need still applies over ACP: claude waits for them before its first turn only
  // when told (MCP_CONNECTION_NONBLOCKING=0); without it the first request may go out before their tools are listed.
  if (agentOptions !== request.agentOptions)
    options.env = { ...applyAgentOptions(adapter, request.agentOptions, ctx).env, ...options.env };
  for (const file of options.files) {
    assertAgentPathSafe(file.path);
    writeOwnFileSync(file.path, file.content);
  }
  for (const edit of options.settings) restores.push(await setSettingsKeys(edit.file, edit.keys));
  record.agentOptions = request.agentOptions ? options.record : null;
  return { engine, options };
}

/** The engine's managed environment and the config roots it reads, checked by the leak guard. */
function engineEnvOf(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  modelUrl: string | null,
  engineEnv: Record<string, string>,
  engine: PreparedEngine,
): { env: Record<string, string>; configRoots: string[] } {
  const { request, adapter } = plan;
  // Each attempt gets its own TMPDIR, removed after it: engines leave large files there (opencode unpacks a 5 MB
  // native library per run), and a shared one grew without bound.
  const env = buildEngineEnv({
    paths: { ...request.paths, tmpDir: opened.attemptTmp },
    runHome: opened.home,
    hostEnv: request.hostEnv,
    modelMode: plan.modelMode,
    modelBaseUrl: modelUrl,
    liveEnvKeys: adapter.liveEnvKeys,
    engineEnv,
  });
  const configRoots = [
    env.HOME,
    env.XDG_CONFIG_HOME,
    env.XDG_DATA_HOME,
    env.XDG_STATE_HOME,
    env.XDG_CACHE_HOME,
    env.TMPDIR,
    ...engine.configRoots,
  ].filter((p): p is string => Boolean(p));
  assertNoEnvLeak(configRoots, plan.hostEnv.HOME);
  return { env, configRoots };
}

/** The engine's command line: its ACP command over ACP, else its start or resume arguments with the options'. */
function engineCommand(
  plan: AttemptPlan,
  opened: OpenedAttempt,
  launch: { file: string; args?: readonly string[] },
  env: Record<string, string>,
  configured: { engine: PreparedEngine; options: ReturnType<typeof applyAgentOptions> },
  modelUrl: string | null,
): { executable: string; argv: string[] } {
  const { engine, options } = configured;
  const executable = launch.file;
  const first = launch.args ?? [];
  const acp: EngineAdapter['acp'] = plan.transport === 'acp' ? plan.adapter.acp : undefined;
  if (!acp) {
    const args = engineArgs(plan, opened);
    return {
      executable,
      argv: [
        ...first,
        ...engine.leadingArgs,
        ...options.leadingArgs,
        ...args.filter((arg) => !options.dropArgs.includes(arg)),
        ...options.args,
      ],
    };
  }
  const { runDir, home } = opened;
  const loaded = plan.launch === 'resume' ? opened.run.session_id : null;
  if (loaded) acp.beforeLoad?.({ runDir, agentHome: home.home, sessionId: loaded });
  // The engine's ACP command; a native mode takes the options' arguments too (gemini's `--approval-mode`).
  const command = acp.command({ executable, prepared: engine, runDir, agentHome: home.home, modelBaseUrl: modelUrl });
  Object.assign(env, command.env);
  return {
    executable: command.file,
    argv: [
      // The stand-in's own arguments go first only when the ACP command runs the engine's executable itself.
      ...(command.file === executable ? first : []),
      ...command.args,
      ...(acp.via === 'native' ? [...engine.leadingArgs, ...options.leadingArgs, ...options.args] : []),
    ],
  };
}

/**
 * Whether the engine's version is one its adapter was checked against (meta `engine_version_checked`). Policy `warn`
 * (the default) says so in the stream too, so every view of the run shows it; `any` only marks meta.
 */
function noteEngineVersion(plan: AttemptPlan, opened: OpenedAttempt): void {
  const { adapter, request } = plan;
  const { record } = opened;
  record.engineVersionChecked = checkedVersionState(adapter, record.engineVersion ?? null);
  record.engineCheckedVersions = describeCheckedVersions(adapter);
  if (record.engineVersionChecked === false && (request.engineVersions ?? 'warn') === 'warn')
    opened.rasp.diagnostic({
      code: 'ENGINE_VERSION_UNCHECKED',
      message: `${adapter.id} ${record.engineVersion} is not a version this adapter was checked against (${record.engineCheckedVersions}); its stream may have changed.`,
      level: 'warning',
    });
}

async function provisionWithin(plan: AttemptPlan, opened: OpenedAttempt): Promise<ProvisionedAttempt> {
  const { adapter, hostEnv, io } = plan;
  const { runDir, record, attemptTmp, resources } = opened;
  resources.add(() => removeAttemptTmp(attemptTmp));
  const restores: Array<() => Promise<void>> = [];
  const prepared: { value: PreparedEngine | null } = { value: null };
  resources.add(undoEngineConfig(opened, restores, prepared));
  const { modelUrl, isolation } = await modelAndIsolation(opened);
  makeManagedDirs(plan, opened);
  const installed = plan.executable;
  // A launcher script the adapter can stand in for exactly (codex's npm bin/codex.js) is skipped: the native binary
  // it would start starts directly, with the env the launcher would give it.
  const native =
    hostEnv[NPM_LAUNCHERS_ENV] === '1'
      ? null
      : (adapter.resolveNativeLaunch?.(installed, { cacheDir: plan.request.paths.agentCacheDir }) ?? null);
  // A copy, not a link: what the engine or its agent does to it stays in this attempt's TMPDIR.
  if (native?.tmpSeed) await fs.promises.cp(native.tmpSeed, attemptTmp, { recursive: true });
  containFilesystem(plan, opened, isolation, native);
  await seedAndInject(plan, opened);
  const configured = await configureEngine(plan, opened, modelUrl, restores, prepared);
  const engineEnv = { ...configured.engine.env, ...configured.options.env };
  const { env, configRoots } = engineEnvOf(plan, opened, modelUrl, engineEnv, configured.engine);
  Object.assign(env, native?.env);
  record.engineVersion = engineVersion(installed, adapter.packageName);
  noteEngineVersion(plan, opened);
  const { executable, argv } = engineCommand(plan, opened, native ?? { file: installed }, env, configured, modelUrl);
  record.env = redactEnv(env);
  record.command = { executable, argv, cwd: runDir, io, ...(native ? { launcher: native.launcher } : {}) };
  opened.clock.mark('engine_config');
  return { executable, argv, env, configRoots, modelUrl, isolation };
}
