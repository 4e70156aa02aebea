/**
 * `agent-harness doctor [--json]`: the resolved paths and env (as an export snapshot), then self-checks of
 * executables and directories. Each failed check carries a stable error code; exit 1 when any failed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { type AgentHarnessError, ERROR_CODES, toAgentHarnessError } from '../errors/index.js';
import type { IsolationMode } from '../protocol/index.js';
import type { NamespaceSupport } from '../runtime/isolation/probe.js';
import { findEnvLeak } from '../runtime/leak-guard.js';
import { mapAtMost } from '../runtime/map-at-most.js';
import { PATH_ENV_VARS, resolveHarnessPaths, type HarnessPaths } from '../runtime/paths.js';
import { engineInstallHint } from '../engines/install-hint.js';
import { checkedVersionState, describeCheckedVersions, versionInLine } from '../engines/engine-versions.js';
import type { EngineAdapter } from '../engines/engine.js';
import { resolveExecutable } from '../runtime/executables.js';
import { installCommand } from '../runtime/pinned-packages.js';
import { parsePositiveInt } from './options.js';
import type { CliStreams } from './output.js';

/** One self-check. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  error: { code: string; message: string; hint: string } | null;
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The export snapshot: every path variable with its resolved value. */
export function exportSnapshot(paths: HarnessPaths): string[] {
  const values: Record<(typeof PATH_ENV_VARS)[number], string> = {
    AGENT_HARNESS_RUN_ROOT: paths.runRoot,
    AGENT_HARNESS_SKILL_ROOTS: paths.skillRoots.join(path.delimiter),
    AGENT_HARNESS_CODEX_PROFILE: paths.codexProfile,
    SKILL_RUNNER_DATA_DIR: paths.dataDir,
    SKILL_RUNNER_AGENT_CACHE_DIR: paths.agentCacheDir,
    SKILL_RUNNER_AGENT_HOME: paths.agentHome,
    SKILL_RUNNER_NPM_PREFIX: paths.npmPrefix,
    NPM_CONFIG_PREFIX: paths.npmPrefix,
    UV_CACHE_DIR: paths.uvCacheDir,
    UV_PROJECT_ENVIRONMENT: paths.uvProjectEnvironment,
  };
  return PATH_ENV_VARS.map((name) => `export ${name}=${shellQuote(values[name])}`);
}

async function checkDirectory(name: string, dir: string): Promise<DoctorCheck> {
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
    return { name, ok: true, detail: dir, error: null };
  } catch (error) {
    return {
      name,
      ok: false,
      detail: dir,
      error: {
        code: 'CONFIG_INVALID',
        message: `${dir} is not a writable directory: ${(error as Error).message}`,
        hint: 'Point the variable at a writable directory.',
      },
    };
  }
}

/**
 * The isolation mode the doctor checks against, resolved once for both isolation checks: from
 * `AGENT_HARNESS_ISOLATION`, else `auto`; a bad value is kept in `invalid` (the namespaces check reports it, the
 * filesystem check goes on as `auto`). `probe` probes the namespaces (once per process), asked only when not off.
 */
interface DoctorIsolation {
  mode: IsolationMode;
  invalid: AgentHarnessError | null;
  /** The variable the mode comes from. */
  variable: string;
  probe: () => NamespaceSupport;
}

async function doctorIsolation(hostEnv: NodeJS.ProcessEnv): Promise<DoctorIsolation> {
  const [{ ISOLATION_ENV, resolveIsolationMode }, { probeNamespaces }] = await Promise.all([
    import('../runtime/isolation/mode.js'),
    import('../runtime/isolation/probe.js'),
  ]);
  const probe = () => probeNamespaces({ hostPath: hostEnv.PATH });
  try {
    return { mode: resolveIsolationMode(undefined, hostEnv), invalid: null, variable: ISOLATION_ENV, probe };
  } catch (error) {
    return { mode: 'auto', invalid: toAgentHarnessError(error), variable: ISOLATION_ENV, probe };
  }
}

/**
 * Whether attempts get their own network and PID namespaces. Unavailable is a failure only when
 * `AGENT_HARNESS_ISOLATION=require`; otherwise attempts fall back (proxy variables, process group) and say so.
 */
function namespaceCheck(isolation: DoctorIsolation, hostEnv: NodeJS.ProcessEnv): DoctorCheck {
  const name = 'namespaces';
  const { mode, invalid, variable } = isolation;
  if (invalid)
    return {
      name,
      ok: false,
      detail: `${variable}=${String(hostEnv[variable])}`,
      error: { code: invalid.code, message: invalid.message, hint: invalid.hint },
    };
  if (mode === 'off')
    return {
      name,
      ok: true,
      detail: `off (${variable}=off): network proxy-only, processes by process group`,
      error: null,
    };
  const support = isolation.probe();
  if (support.available)
    return {
      name,
      ok: true,
      detail: `network namespace (loopback only) and PID namespace per attempt (${support.unshare}; loopback by ${support.ip})`,
      error: null,
    };
  return unavailable(
    name,
    mode,
    `namespaces are unavailable: ${support.reason}`,
    'attempts fall back to network proxy-only and processes by process group',
  );
}

/**
 * What the doctor says of an engine's `--version` line against its adapter's checked versions: `; checked`, a
 * WARNING naming both for an unchecked version, nothing when either is unknown.
 */
function versionMark(adapter: EngineAdapter, line: string): string {
  const version = versionInLine(line);
  const checked = checkedVersionState(adapter, version);
  if (checked === null) return '';
  if (checked) return '; checked';
  return `; WARNING ENGINE_VERSION_UNCHECKED: ${version} is not a version agent-harness checked ${adapter.id} against (${describeCheckedVersions(adapter)}); runs with it are marked unchecked`;
}

/**
 * A part of the isolation this machine cannot give: a failure under `require` (ISOLATION_UNAVAILABLE), else a warning
 * that says what attempts do instead.
 */
function unavailable(name: string, mode: string, message: string, fallback: string): DoctorCheck {
  if (mode === 'require')
    return {
      name,
      ok: false,
      detail: 'unavailable',
      error: { code: 'ISOLATION_UNAVAILABLE', message, hint: ERROR_CODES.ISOLATION_UNAVAILABLE },
    };
  return {
    name,
    ok: true,
    detail: `WARNING ${message}; ${fallback} (AGENT_HARNESS_ISOLATION=require refuses instead)`,
    error: null,
  };
}

/**
 * Whether the agent's filesystem can be contained (a mount namespace from an allow-list, docs/isolation.md): the
 * probe's mount trial. Unavailable is a failure only when `AGENT_HARNESS_ISOLATION=require`.
 */
function filesystemCheck(isolation: DoctorIsolation): DoctorCheck {
  const name = 'filesystem';
  const { mode } = isolation;
  if (mode === 'off') return { name, ok: true, detail: 'off: the agent sees the host filesystem', error: null };
  const support = isolation.probe();
  const filesystem = support.filesystem;
  if (support.available && filesystem?.available)
    return {
      name,
      ok: true,
      detail: `mount namespace per attempt: the agent sees its workspace, its run's own HOME and TMPDIR; the engine, the managed npm prefix and the system read-only (${[filesystem.tools?.mount, filesystem.tools?.pivotRoot, filesystem.tools?.umount, filesystem.tools?.sh, filesystem.tools?.cp].join(', ')})`,
      error: null,
    };
  return unavailable(
    name,
    mode,
    `filesystem containment is unavailable: ${support.available ? filesystem?.reason : support.reason}`,
    'agents see the host filesystem',
  );
}

/** How the doctor probes engine executables (`version-probe.ts`). */
export interface DoctorOptions {
  /** The bound of one `--version` try (ms); default `VERSION_PROBE_TIMEOUT_MS`. */
  probeTimeoutMs?: number;
  /** How many tries a failing probe gets in all; default `VERSION_PROBE_TRIES`. */
  probeTries?: number;
  /** The engines whose executables are checked (each starts once with `--version`); default every registered one. */
  engines?: readonly string[];
}

/** Runs every self-check. */
export async function runDoctorChecks(
  paths: HarnessPaths,
  hostEnv: NodeJS.ProcessEnv = process.env,
  required: readonly string[] = [],
  options: DoctorOptions = {},
): Promise<DoctorCheck[]> {
  // Loaded here, not at the top: every start of the CLI loads this file (to register `doctor`).
  const [{ probeVersion }, { engineIds, loadEngine }, { findScriptBinary }] = await Promise.all([
    import('./version-probe.js'),
    import('../engines/registry.js'),
    import('../runtime/passthrough.js'),
  ]);
  const checks: DoctorCheck[] = [];
  for (const [name, dir] of [
    ['run root', paths.runRoot],
    ['agent home', paths.agentHome],
    ['agent cache', paths.agentCacheDir],
    ['tmp dir', paths.tmpDir],
  ] as const) {
    checks.push(await checkDirectory(name, dir));
  }
  checks.push(hostIsolationCheck(paths, hostEnv));
  const isolation = await doctorIsolation(hostEnv);
  checks.push(namespaceCheck(isolation, hostEnv));
  checks.push(filesystemCheck(isolation));
  // A project tests the engines it installed: a missing engine fails the doctor only when it was asked for. The
  // `--version` starts run as many at once as there are CPUs (each is a CLI start, 1–3 s of CPU for most), listed
  // in the registry's order.
  const engines = options.engines ?? engineIds();
  checks.push(
    ...(await mapAtMost(engines, os.availableParallelism(), async (id) => {
      const engine = { id, adapter: await loadEngine(id), optional: !required.includes(id) };
      return engineCheck(engine, paths, hostEnv, options, probeVersion);
    })),
  );
  checks.push(scriptCheck(findScriptBinary()));
  checks.push(await nodePtyCheck());
  return checks;
}

/** Whether the managed roots lie outside the user's HOME config directories (`findEnvLeak`). */
function hostIsolationCheck(paths: HarnessPaths, hostEnv: NodeJS.ProcessEnv): DoctorCheck {
  const leak = findEnvLeak([paths.agentHome, paths.tmpDir, paths.runRoot], hostEnv.HOME);
  return leak
    ? {
        name: 'host isolation',
        ok: false,
        detail: leak.root,
        error: {
          code: 'ENV_LEAK_DETECTED',
          message: `${leak.root}: ${leak.reason}`,
          hint: 'Move the managed roots outside your HOME config directories.',
        },
      }
    : {
        name: 'host isolation',
        ok: true,
        detail: `managed roots are outside ${hostEnv.HOME ?? '(no HOME)'}`,
        error: null,
      };
}

/** How the doctor starts an engine with `--version` (`version-probe.ts`). */
type ProbeVersion = typeof import('./version-probe.js')['probeVersion'];

/**
 * Whether an engine's executable is found and answers `--version` (with its version checked against the adapter's);
 * a missing engine that was not asked for is fine.
 */
async function engineCheck(
  { id, adapter, optional }: { id: string; adapter: EngineAdapter; optional: boolean },
  paths: HarnessPaths,
  hostEnv: NodeJS.ProcessEnv,
  options: DoctorOptions,
  probeVersion: ProbeVersion,
): Promise<DoctorCheck> {
  const name = `engine ${id}`;
  try {
    const file = resolveExecutable(adapter.executableName, paths, hostEnv.PATH, engineInstallHint(adapter));
    // HOME is the managed home, so an engine's default config root (`~/.codex`, `~/.claude`…) lies under it.
    const probe = await probeVersion(file, {
      env: { PATH: hostEnv.PATH ?? '', HOME: paths.agentHome, TMPDIR: paths.tmpDir },
      ...(options.probeTimeoutMs !== undefined ? { timeoutMs: options.probeTimeoutMs } : {}),
      ...(options.probeTries !== undefined ? { tries: options.probeTries } : {}),
    });
    const retried = probe.tries > 1 ? ` (after ${probe.tries} tries)` : '';
    return probe.ok
      ? {
          name,
          ok: true,
          detail: `${file} (${probe.version})${retried}${versionMark(adapter, probe.version)}`,
          error: null,
        }
      : {
          name,
          ok: false,
          detail: `${file}: ${probe.reason}${retried}`,
          error: probe.timedOut
            ? {
                code: 'ENGINE_TIMEOUT',
                message: `${file} --version did not answer: ${probe.reason}${retried}.`,
                hint: 'The machine may be loaded: run the doctor again, or give it longer with `doctor --timeout-ms <ms>`.',
              }
            : {
                code: 'ENGINE_SPAWN_FAILED',
                message: `${file} --version failed: ${probe.reason}${retried}.`,
                hint: `Run \`${file} --version\` yourself; reinstall ${adapter.packageName ?? 'the engine'} if it fails there too.`,
              },
        };
  } catch (error) {
    const e = toAgentHarnessError(error);
    if (optional && e.code === 'ENGINE_EXECUTABLE_MISSING')
      return {
        name,
        ok: true,
        detail: `not installed (optional; ${adapter.packageName ? installCommand(adapter.packageName) : 'no npm package is served here'} to test it)`,
        error: null,
      };
    return {
      name,
      ok: false,
      detail: adapter.executableName,
      error: { code: e.code, message: e.message, hint: e.hint },
    };
  }
}

/** Whether util-linux `script` (live terminal passthrough) is on PATH: `script` is where it was found, or null. */
function scriptCheck(script: string | null): DoctorCheck {
  return script
    ? { name: 'util-linux script', ok: true, detail: script, error: null }
    : {
        name: 'util-linux script',
        ok: false,
        detail: 'not found',
        error: {
          code: 'ENGINE_CAPABILITY_UNAVAILABLE',
          message: 'util-linux `script` is not on PATH: live terminal passthrough is unavailable.',
          hint: 'Install util-linux (Debian: bsdutils).',
        },
      };
}

/** Whether the PTY binding loads. */
async function nodePtyCheck(): Promise<DoctorCheck> {
  try {
    await import('@lydell/node-pty');
    return { name: 'node-pty', ok: true, detail: '@lydell/node-pty loads', error: null };
  } catch (error) {
    return {
      name: 'node-pty',
      ok: false,
      detail: (error as Error).message,
      error: {
        code: 'ENGINE_CAPABILITY_UNAVAILABLE',
        message: `@lydell/node-pty does not load: ${(error as Error).message}`,
        hint: 'Reinstall dependencies (npm ci).',
      },
    };
  }
}

/**
 * `doctor --repair`: what any later command does for the runs it touches, for the whole store at once. Dead
 * owners' trust leases are reclaimed and every orphaned attempt of every run is sealed.
 */
async function repairStore(paths: HarnessPaths): Promise<{ leases: number; sealed: number }> {
  const [{ reclaimDeadLeases }, { listRuns }, { recoverRuns }] = await Promise.all([
    import('../runtime/lease.js'),
    import('../runtime/run-store.js'),
    import('../core/seal-interrupted.js'),
  ]);
  const leases = (await reclaimDeadLeases(paths.agentHome)).length;
  const runs = await listRuns(paths.runRoot);
  // recoverRuns gives back the run itself when it had nothing to seal (and finds no lease left to reclaim).
  const recovered = await recoverRuns(paths, runs);
  return { leases, sealed: recovered.filter((run, index) => run !== runs[index]).length };
}

/** Registers `doctor`. */
export function registerDoctor(program: Command, streams: CliStreams, setExit: (code: number) => void): void {
  program
    .command('doctor')
    .description('print resolved paths and env, and check executables and directories')
    .option('--json', 'print one JSON object')
    .option(
      '--engine <id>',
      'an engine that must be installed (repeatable); others are checked when present',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--repair',
      'first reclaim the engine trust entries of dead harness processes and seal their interrupted attempts',
    )
    .option(
      '--timeout-ms <ms>',
      'how long one engine `--version` may take (default 60000; a failing one is tried twice)',
      parsePositiveInt('--timeout-ms'),
    )
    .action(async (options: { json?: boolean; engine?: string[]; repair?: boolean; timeoutMs?: number }) => {
      const { requireEngineId } = await import('../engines/registry.js');
      const paths = resolveHarnessPaths();
      for (const id of options.engine ?? []) requireEngineId(id);
      if (options.repair) {
        const repaired = await repairStore(paths);
        streams.stderr.write(
          `repair: ${repaired.leases} trust entr${repaired.leases === 1 ? 'y' : 'ies'} of dead harness processes reclaimed, interrupted attempts sealed in ${repaired.sealed} run(s)\n`,
        );
      }
      const checks = await runDoctorChecks(
        paths,
        process.env,
        options.engine ?? [],
        options.timeoutMs !== undefined ? { probeTimeoutMs: options.timeoutMs } : {},
      );
      const failed = checks.filter((check) => !check.ok);
      if (options.json) {
        streams.stdout.write(
          `${JSON.stringify({ paths, env: exportSnapshot(paths), node: process.version, checks }, null, 2)}\n`,
        );
      } else {
        const out: string[] = [
          '# paths',
          // An unset optional path (the engine prefix) is left out, never printed as "undefined".
          ...Object.entries(paths)
            .filter(([, value]) => value !== undefined)
            .map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(path.delimiter) : value}`),
          '',
          '# env (export snapshot)',
          ...exportSnapshot(paths),
          '',
          '# checks',
        ];
        for (const check of checks) {
          out.push(`${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}`);
          if (check.error)
            out.push(`     error ${check.error.code}: ${check.error.message}`, `     hint: ${check.error.hint}`);
        }
        out.push('', failed.length === 0 ? 'All checks passed.' : `${failed.length} check(s) failed.`);
        streams.stdout.write(`${out.join('\n')}\n`);
      }
      if (failed.length > 0) setExit(1);
    });
}
