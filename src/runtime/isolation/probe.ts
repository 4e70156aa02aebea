/**
 * Whether this machine can give an attempt its own network and PID namespaces: Linux, util-linux `unshare`,
 * iproute2 `ip`, and unprivileged user namespaces. Probed once per process by running the first step an attempt's
 * namespaces run: `unshare -rnpf --kill-child --mount-proc ip link set lo up`. Beside it, whether the agent's
 * filesystem can be contained (a mount namespace of its own: util-linux `mount`, `umount`, `pivot_root`), by a second trial run at the same time: `unshare -rm mount -t tmpfs … /`.
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
  /**
   * Filesystem containment (a mount namespace built from an allow-list; `mount-plan.ts`): its tools, or why it is
   * unavailable where namespaces are. Absent: not probed (a support given by a caller).
   */
  filesystem?: FilesystemSupport;
}

/** Whether the agent's filesystem can be contained here, with the util-linux tools that do it. */
export interface FilesystemSupport {
  available: boolean;
  tools: MountTools | null;
  reason: string | null;
}

/** The util-linux tools the namespace init builds the agent's filesystem with. */
export interface MountTools {
  mount: string;
  umount: string;
  pivotRoot: string;
  /** Runs the setup's steps in one process (`namespace-mounts.cjs`). */
  sh: string;
  /** Copies the skeleton's part under /tmp and /dev/shm into the namespace's fresh tmpfs there (`cp -a`). */
  cp: string;
  /** Starts the engine in a nested user and mount namespace, where the init's mounts are locked. */
  unshare: string;
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
  const namespaces = judgeTrial(tools, outcome.error ?? null, outcome.status, outcome.stderr);
  let filesystem = tools.filesystem;
  if (namespaces.available && filesystem.available) {
    const mounted = spawnSync(tools.unshare!, mountTrialArgs(filesystem.tools!), {
      encoding: 'utf8',
      env: INIT_ENV,
      timeout: TRIAL_TIMEOUT_MS,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    filesystem = judgeMountTrial(filesystem, mounted.error ?? null, mounted.status, mounted.stderr);
  }
  cached = { ...namespaces, filesystem };
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
  /** Runs `unshare args`; resolves with the spawn error (or null), the exit status and stderr. */
  const trial = (args: string[]) =>
    new Promise<[Error | null, number | null, string]>((resolve) => {
      execFile(
        tools.unshare!,
        args,
        { encoding: 'utf8', env: INIT_ENV, timeout: TRIAL_TIMEOUT_MS },
        (error, _o, stderr) => {
          // execFile reports a non-zero exit as an error with a numeric `code`; a spawn failure has a string code.
          const status =
            typeof (error as { code?: unknown } | null)?.code === 'number'
              ? (error as unknown as { code: number }).code
              : error
                ? null
                : 0;
          resolve([status === null ? error : null, status, stderr]);
        },
      );
    });
  // Both trials at once: the mount trial's verdict counts only where namespaces work.
  const mountTools = tools.filesystem.tools;
  let probe = Promise.all([
    trial(trialArgs(tools)),
    tools.filesystem.available && mountTools ? trial(mountTrialArgs(mountTools)) : null,
  ]).then(([namespaces, mounted]): NamespaceSupport => {
    const support = judgeTrial(tools, ...namespaces);
    const filesystem = mounted && support.available ? judgeMountTrial(tools.filesystem, ...mounted) : tools.filesystem;
    return { ...support, filesystem };
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

/**
 * The mount trial: a tmpfs mounted over / in a mount namespace of its own (the agent's /tmp and /dev/shm are tmpfs
 * mounts of its namespace; private, so nothing changes outside).
 */
function mountTrialArgs(tools: MountTools): string[] {
  return ['-rm', tools.mount, '-t', 'tmpfs', '-o', 'size=16k,mode=0755', 'agent-harness-trial', '/'];
}

function judgeMountTrial(
  filesystem: FilesystemSupport,
  error: Error | null,
  status: number | null,
  stderr: string,
): FilesystemSupport {
  if (error) return { ...filesystem, available: false, reason: `the mount trial could not run: ${error.message}` };
  if (status === 0) return filesystem;
  const why = stderr.trim().split('\n')[0] || `exit ${status}`;
  return {
    ...filesystem,
    available: false,
    reason: `a mount in a user namespace failed (${why}); a security module (AppArmor, SELinux) or a seccomp filter may forbid it`,
  };
}

/** What {@link findNamespaceTools} found. */
export interface NamespaceTools {
  unshare: string | null;
  ip: string | null;
  /** The mount tools, found or not (the trial says whether they work). */
  filesystem: FilesystemSupport;
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
  const found = {
    mount: findTool('mount', hostPath),
    umount: findTool('umount', hostPath),
    pivotRoot: findTool('pivot_root', hostPath),
    sh: findTool('sh', hostPath),
    cp: findTool('cp', hostPath),
    unshare,
  };
  const missing = Object.entries(found)
    .filter(([, file]) => file === null)
    .map(([name]) => (name === 'pivotRoot' ? 'pivot_root' : name));
  const filesystem: FilesystemSupport =
    missing.length === 0
      ? { available: true, tools: found as MountTools, reason: null }
      : {
          available: false,
          tools: null,
          reason: `${missing.map((name) => `\`${name}\``).join(', ')} not found (apt install util-linux mount coreutils)`,
        };
  const unavailable = (reason: string): NamespaceTools => ({
    unshare,
    ip,
    filesystem,
    verdict: { available: false, unshare, ip, reason, filesystem: { ...filesystem, available: false, reason } },
  });
  if (process.platform !== 'linux') return unavailable(`namespaces are Linux-only (this is ${process.platform})`);
  if (!unshare) return unavailable('util-linux `unshare` was not found (apt install util-linux)');
  if (!ip)
    return unavailable(
      'iproute2 `ip` was not found; the namespace init brings the loopback up with it (apt install iproute2)',
    );
  return { unshare, ip, filesystem, verdict: null };
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
