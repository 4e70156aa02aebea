/**
 * Whether this machine can give an attempt its own network and PID namespaces: Linux, util-linux `unshare`,
 * iproute2 `ip` (to bring the namespace's loopback up), and unprivileged user namespaces. Probed once per process
 * by running the very command an attempt would (`unshare -rnpf --kill-child --mount-proc ip link set lo up`).
 */
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

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

/** Where `unshare` and `ip` are looked up: the host PATH plus the sbin directories a user's PATH often lacks. */
function findTool(name: string, hostPath: string | undefined): string | null {
  const dirs = [...(hostPath ?? '').split(path.delimiter).filter(Boolean), '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
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
  const trial = spawnSync(tools.unshare!, trialArgs(tools.ip!), { encoding: 'utf8', timeout: TRIAL_TIMEOUT_MS, stdio: ['ignore', 'ignore', 'pipe'] });
  cached = judgeTrial(tools, trial.error ?? null, trial.status, trial.stderr);
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
  const probe = new Promise<NamespaceSupport>((resolve) => {
    execFile(tools.unshare!, trialArgs(tools.ip!), { encoding: 'utf8', timeout: TRIAL_TIMEOUT_MS }, (error, _stdout, stderr) => {
      // execFile reports a non-zero exit as an error with a numeric `code`; a spawn failure has a string code.
      const status = typeof (error as { code?: unknown } | null)?.code === 'number' ? (error as unknown as { code: number }).code : error ? null : 0;
      resolve(judgeTrial(tools, status === null ? error : null, status, stderr));
    });
  }).then((support) => {
    cached = support;
    pending = null;
    return support;
  });
  pending = probe;
  return probe;
}

const TRIAL_TIMEOUT_MS = 10_000;

/** The trial: the very command an attempt's namespaces run first. */
function trialArgs(ip: string): string[] {
  return ['-rnpf', '--kill-child', '--mount-proc', ip, 'link', 'set', 'lo', 'up'];
}

/** What {@link findNamespaceTools} found. */
export interface NamespaceTools {
  unshare: string | null;
  ip: string | null;
  /** Set when namespaces are unavailable before any trial (platform, a missing tool). */
  verdict: NamespaceSupport | null;
}

/**
 * The tools an attempt's namespaces need, found without running anything (the probe's first step): where the
 * trial would run them, and a verdict when it can already tell they are unavailable.
 */
export function findNamespaceTools(hostPath: string | undefined = process.env.PATH): NamespaceTools {
  const unshare = findTool('unshare', hostPath);
  const ip = findTool('ip', hostPath);
  const unavailable = (reason: string): NamespaceTools => ({ unshare, ip, verdict: { available: false, unshare, ip, reason } });
  if (process.platform !== 'linux') return unavailable(`namespaces are Linux-only (this is ${process.platform})`);
  if (!unshare) return unavailable('util-linux `unshare` was not found (apt install util-linux)');
  if (!ip) return unavailable('iproute2 `ip` was not found (apt install iproute2)');
  return { unshare, ip, verdict: null };
}

function judgeTrial(tools: NamespaceTools, error: Error | null, status: number | null, stderr: string): NamespaceSupport {
  const { unshare, ip } = tools;
  if (error) return { available: false, unshare, ip, reason: `unshare could not run: ${error.message}` };
  if (status !== 0) {
    const why = stderr.trim().split('\n').at(-1) ?? `exit ${status}`;
    return { available: false, unshare, ip, reason: `unshare -rnpf failed (${why}); user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces)` };
  }
  return { available: true, unshare, ip, reason: null };
}
