/**
 * Whether this machine can give an attempt its own network and PID namespaces: Linux, util-linux `unshare`,
 * iproute2 `ip`, and unprivileged user namespaces. Probed once per process by running the first step an attempt's
 * namespaces run: `unshare -rnpf --kill-child --mount-proc ip link set lo up`.
 */
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { INIT_ENV } from './init-scripts.js';

/** The outcome of {@link probeNamespaces}. */
export interface NamespaceSupport {
  available: boolean;
  /** Absolute path of `unshare`, when found. */
  unshare: string | null;
  /** Absolute path of `ip`, when found. */
  ip: string | null;
  /** Why namespaces are unavailable (null when available). */
  reason: string | null;
}

/** The first executable file `name` in the directories of `dirs`, as a shell finds a command; or null. */
export function findOnPath(name: string, dirs: readonly string[]): string | null {
  for (const dir of dirs) {
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** Where `unshare` and `ip` are looked up: the host PATH plus the sbin directories a user's PATH often lacks. */
function findTool(name: string, hostPath: string | undefined): string | null {
  return findOnPath(name, [
    ...(hostPath ?? '').split(path.delimiter).filter(Boolean),
    '/usr/sbin',
    '/sbin',
    '/usr/bin',
    '/bin',
  ]);
}

let cached: NamespaceSupport | null = null;
let pending: Promise<NamespaceSupport> | null = null;

/** Options of the probes. */
export interface ProbeOptions {
  /** Probe again instead of using the process's cached result. */
  refresh?: boolean;
  /** PATH to look `unshare` and `ip` up in (default: this process's). */
  hostPath?: string;
}

/** Probes namespace support (cached for the process; `refresh` probes again). */
export function probeNamespaces(options: ProbeOptions = {}): NamespaceSupport {
  if (cached && !options.refresh) return cached;
  const tools = findNamespaceTools(options.hostPath ?? process.env.PATH);
  if (tools.verdict) return (cached = tools.verdict);
  const outcome = spawnSync(tools.unshare!, trialArgs(tools), {
    encoding: 'utf8',
    env: INIT_ENV,
    timeout: TRIAL_TIMEOUT_MS,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  cached = judgeTrial(tools, outcome.error ?? null, outcome.status, outcome.stderr);
  return cached;
}

/**
 * {@link probeNamespaces} without blocking: an attempt starts it first and awaits it only when it opens its
 * isolation, so the trial (a few ms of process start-up) runs while the run directory is made. Same cache.
 */
export function probeNamespacesAsync(options: ProbeOptions = {}): Promise<NamespaceSupport> {
  if (pending && !options.refresh) return pending;
  if (cached && !options.refresh) return Promise.resolve(cached);
  const tools = findNamespaceTools(options.hostPath ?? process.env.PATH);
  if (tools.verdict) return Promise.resolve((cached = tools.verdict));
  let probe = new Promise<NamespaceSupport>((resolve) => {
    execFile(
      tools.unshare!,
      trialArgs(tools),
      { encoding: 'utf8', env: INIT_ENV, timeout: TRIAL_TIMEOUT_MS },
      (error, _stdout, stderr) => {
        // execFile reports a non-zero exit as an error with a numeric `code`; a spawn failure has a string code.
        const status =
          typeof (error as { code?: unknown } | null)?.code === 'number'
            ? (error as unknown as { code: number }).code
            : error
              ? null
              : 0;
        resolve(judgeTrial(tools, status === null ? error : null, status, stderr));
      },
    );
  });
  probe = probe.then((support) => {
    cached = support;
    pending = null;
    return support;
  });
  pending = probe;
  return probe;
}

const TRIAL_TIMEOUT_MS = 10_000;

/** The trial: the very first step of an attempt's namespaces (the init brings the loopback up with `ip`). */
function trialArgs(tools: NamespaceTools): string[] {
  return ['-rnpf', '--kill-child', '--mount-proc', tools.ip!, 'link', 'set', 'lo', 'up'];
}

/** What {@link findNamespaceTools} found. */
export interface NamespaceTools {
  unshare: string | null;
  ip: string | null;
  /** Set when namespaces are unavailable before any trial (platform, a missing tool). */
  verdict: NamespaceSupport | null;
}

/** Tools found, by PATH: every attempt opens its isolation, and the lookups stat each PATH dir. */
const toolsFound = new Map<string, NamespaceTools>();

/**
 * The tools an attempt's namespaces need, found without running anything (the probe's first step): where the
 * trial would run them, and a verdict when it can already tell they are unavailable. Looked up once per PATH in a
 * process, as the probe's verdict is.
 */
export function findNamespaceTools(hostPath: string | undefined = process.env.PATH): NamespaceTools {
  const key = hostPath ?? '';
  let tools = toolsFound.get(key);
  if (!tools) toolsFound.set(key, (tools = lookUpNamespaceTools(hostPath)));
  return tools;
}

function lookUpNamespaceTools(hostPath: string | undefined): NamespaceTools {
  const unshare = findTool('unshare', hostPath);
  const ip = findTool('ip', hostPath);
  const unavailable = (reason: string): NamespaceTools => ({
    unshare,
    ip,
    verdict: { available: false, unshare, ip, reason },
  });
  if (process.platform !== 'linux') return unavailable(`namespaces are Linux-only (this is ${process.platform})`);
  if (!unshare) return unavailable('util-linux `unshare` was not found (apt install util-linux)');
  if (!ip)
    return unavailable(
      'iproute2 `ip` was not found; the namespace init brings the loopback up with it (apt install iproute2)',
    );
  return { unshare, ip, verdict: null };
}

function judgeTrial(
  tools: NamespaceTools,
  error: Error | null,
  status: number | null,
  stderr: string,
): NamespaceSupport {
  const { unshare, ip } = tools;
  if (error) return { available: false, unshare, ip, reason: `unshare could not run: ${error.message}` };
  if (status !== 0) {
    const why = stderr.trim().split('\n').at(-1) ?? `exit ${status}`;
    return {
      available: false,
      unshare,
      ip,
      reason: `unshare -rnpf failed (${why}); user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces)`,
    };
  }
  return { available: true, unshare, ip, reason: null };
}
