/**
 * Whether this machine can give an attempt its own network and PID namespaces: Linux, util-linux `unshare`,
 * iproute2 `ip` (to bring the namespace's loopback up), and unprivileged user namespaces. Probed once per process
 * by running the very command an attempt would (`unshare -rnpf --kill-child --mount-proc ip link set lo up`).
 */
import { spawnSync } from 'node:child_process';
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

/** Probes namespace support (cached for the process; `refresh` probes again). */
export function probeNamespaces(options: { refresh?: boolean; hostPath?: string } = {}): NamespaceSupport {
  if (cached && !options.refresh) return cached;
  cached = probeUncached(options.hostPath ?? process.env.PATH);
  return cached;
}

function probeUncached(hostPath: string | undefined): NamespaceSupport {
  const unshare = findTool('unshare', hostPath);
  const ip = findTool('ip', hostPath);
  const unavailable = (reason: string): NamespaceSupport => ({ available: false, unshare, ip, reason });
  if (process.platform !== 'linux') return unavailable(`namespaces are Linux-only (this is ${process.platform})`);
  if (!unshare) return unavailable('util-linux `unshare` was not found (apt install util-linux)');
  if (!ip) return unavailable('iproute2 `ip` was not found (apt install iproute2)');
  const trial = spawnSync(unshare, ['-rnpf', '--kill-child', '--mount-proc', ip, 'link', 'set', 'lo', 'up'], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'ignore', 'pipe'] });
  if (trial.error) return unavailable(`unshare could not run: ${trial.error.message}`);
  if (trial.status !== 0) {
    const why = trial.stderr.trim().split('\n').at(-1) ?? `exit ${trial.status}`;
    return unavailable(`unshare -rnpf failed (${why}); user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces)`);
  }
  return { available: true, unshare, ip, reason: null };
}
