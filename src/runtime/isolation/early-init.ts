/**
 * An attempt's namespace init started before the attempt itself: the CLI starts it first thing in a `start`, so that
 * its start-up (`unshare`, then a Node start) runs while the command loads the attempt's code, instead of after.
 * It is the init an attempt prestarts (network, PID and mount namespaces; its lifeline and model channel passed as
 * descriptors 3 and 4; stdin closed), except that its one forward's port is 0 on its command line: the attempt sends
 * the model server's port over the lifeline once the server listens (`ports` line). The attempt adopts it
 * (`openIsolation`'s `early` option); one that cannot (live mode, more forwarded ports, a terminal, isolation off, no
 * namespaces here) discards it, and so does the exit of this process (its lifeline closes, and the init with it).
 */
import { randomBytes } from 'node:crypto';
import { killGroup } from '../process-result.js';
import { spawnSplit, type SpawnedSplit } from '../process.js';
import { INIT_ENV, initCommandLine, passedFd } from './init-scripts.js';
import { findNamespaceTools, probeNamespacesAsync } from './probe.js';

/** An init started ahead of its attempt, to be adopted by it or discarded. */
export interface EarlyInit {
  /** What the init greets with on its lifeline. */
  readonly token: string;
  /** The `unshare` it was started with (an attempt adopts it only with the same tools). */
  readonly unshare: string;
  /** Takes the init over: its process, with its lifeline and channel ends in `passed`; null when taken or discarded. */
  take(): SpawnedSplit | null;
  /** Kills the init unless it was taken; its sockets go. */
  discard(): void;
}

/**
 * Starts an init for an attempt not begun yet, and the namespace probe beside it (an attempt awaits the same
 * probe). Null where the probe's first step already tells that namespaces are unavailable (not Linux, no `unshare`
 * or `ip`): the attempt then finds that out as it would have.
 */
export function startEarlyInit(): EarlyInit | null {
  const tools = findNamespaceTools();
  if (tools.verdict || !tools.unshare || !tools.ip) return null;
  const token = randomBytes(16).toString('hex');
  const [file, ...args] = initCommandLine(tools.unshare, true, {
    lifeline: passedFd(3),
    token,
    loopback: tools.ip,
    forwards: [{ port: 0, socket: passedFd(4) }],
  });
  const child = spawnSplit({ file: file!, args, cwd: '/', env: { ...INIT_ENV }, stdin: 'ignore', passSockets: 2 });
  // The trial after the init: the init's start-up (a Node start) is what the attempt waits for.
  void probeNamespacesAsync().catch(() => undefined);
  // Until an attempt takes it, it keeps nothing of this process alive: a command that ends first (a usage error)
  // exits, and the init, its lifeline closed, with it.
  child.hold(false);
  let taken = false;
  return {
    token,
    unshare: tools.unshare,
    take: () => {
      if (taken) return null;
      taken = true;
      child.hold(true);
      return child;
    },
    discard: () => {
      if (taken) return;
      taken = true;
      if (child.pid !== undefined && child.running()) killGroup(child.pid, 'SIGKILL');
      for (const socket of child.passed) socket.destroy();
    },
  };
}
