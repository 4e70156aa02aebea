/**
 * Puts one engine process in its own namespaces (Linux, util-linux `unshare`, no privileges needed):
 *
 * - a **network namespace** with only loopback (scripted mode): nothing the agent runs can connect anywhere but
 *   127.0.0.1, proxy variables or not. The model server stays outside; inside, the init
 *   (`runtime/namespace-init.cjs`) listens on the same 127.0.0.1
 *   port and carries each connection to the harness, which carries it on to the server. So the engine's configured
 *   base URL works unchanged. A prestarted init (split streams) carries them over the model channel, a socket it
 *   inherited (`model-channel.ts`), and holds its lifeline the same way: no process of the attempt can reach
 *   either; so does an init under `script` (`wrap` with `passing`). A PTY's init inherits nothing: it connects its
 *   lifeline and its model channel to Unix sockets here by path, once, before the engine exists, and the paths are
 *   removed before the engine's command is sent (docs/isolation.md).
 * - a **PID namespace** whose first process is that init: when it exits (the engine exited, or the harness died
 *   and closed its lifeline socket) or is killed (`--kill-child` when `unshare` is killed), the kernel kills
 *   every process in the namespace, `setsid`'d or daemonised ones included.
 *
 * - a **mount namespace** in which the agent sees only what a mount plan allows (`mount-plan.ts`, carried out by the
 *   init's `namespace-mounts.cjs` before the engine starts): {@link AttemptIsolation.contain}.
 *
 * Where namespaces are unavailable, mode `auto` falls back to the process group and the proxy variables, with
 * the reason recorded; mode `require` refuses with `ISOLATION_UNAVAILABLE`.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AgentHarnessError } from '../../errors/index.js';
import { killGroup } from '../process-result.js';
import { spawnSplit, type SpawnedSplit } from '../process.js';
import type { IsolationMode } from '../../protocol/index.js';
import { INIT_ENV, initCommandLine, launchLine, mountsLine, passedFd, portsLine } from './init-scripts.js';
import { writeNewRoot, type NewRootFiles } from './mount-plan.js';
import { serveModelChannel } from './model-channel.js';
import { ownedDirPrefix, sweepStaleDirs } from './stale-dirs.js';
import {
  closeServer,
  createLifeline,
  type InitReport,
  LIFELINE_DRAIN_MS,
  listenLifeline,
} from './isolation-lifeline.js';
import { forwardTargets, listenChannel, loopbackPort, socketBase, socketDir } from './isolation-sockets.js';
import { removeNewRoot, removeNewRootParts } from './new-root-removal.js';
import { findNamespaceTools, probeNamespacesAsync, type FilesystemSupport, type NamespaceSupport } from './probe.js';

export { NAMESPACE_INIT } from './init-scripts.js';
export { loopbackTarget } from './isolation-sockets.js';

import type { AttemptIsolation, OpenIsolationOptions } from './isolation-types.js';

export type { AttemptIsolation, OpenIsolationOptions, WrapOptions, WrappedCommand } from './isolation-types.js';

/** The fallback: no namespaces, the process group and (in scripted mode) the proxy variables. */
function withoutNamespaces(mode: IsolationMode, modelUrl: string | null, reason: string): AttemptIsolation {
  return {
    record: {
      mode,
      network: modelUrl === null ? 'host' : 'proxy-only',
      processes: 'process-group',
      reason,
      filesystem: 'host',
    },
    contain: () => undefined,
    contained: async () => false,
    wrap: (command) => ({ file: command.file, args: [...command.args], env: command.env, passSockets: 0 }),
    paths: null,
    prestart: () => undefined,
    launch: () => null,
    settle: async (result) => result,
    close: async () => undefined,
  };
}

/**
 * Prepares the isolation of one attempt: probes namespace support (once per process), starts the forwarder and
 * lifeline sockets, and says how to wrap the engine command. Throws ISOLATION_UNAVAILABLE in mode `require`
 * when namespaces are unavailable.
 */
export async function openIsolation(options: OpenIsolationOptions): Promise<AttemptIsolation> {
  try {
    return await openNamespaces(options);
  } finally {
    // An early init nothing adopted (isolation off, a fallback, a refusal, a command it does not fit) is killed.
    options.early?.discard();
  }
}

async function openNamespaces(options: OpenIsolationOptions): Promise<AttemptIsolation> {
  const { mode, modelUrl } = options;
  if (mode === 'off') return withoutNamespaces(mode, modelUrl, 'isolation off (--isolation off)');
  const refuse = (reason: string, required: string): AttemptIsolation => {
    if (mode === 'require')
      throw new AgentHarnessError('ISOLATION_UNAVAILABLE', `${required}: ${reason}.`, { details: { reason } });
    return withoutNamespaces(mode, modelUrl, reason);
  };
  const unavailable = (support: NamespaceSupport): AttemptIsolation =>
    refuse(support.reason ?? 'namespaces unavailable', 'Namespace isolation was required but is unavailable');
  // The tools are found at once; whether they work, the trial says (given, under way, or started here).
  const given = options.support instanceof Promise ? null : (options.support ?? null);
  const tools = given
    ? {
        unshare: given.unshare,
        ip: given.ip,
        filesystem: given.filesystem ?? findNamespaceTools().filesystem,
        verdict: given.available && given.unshare ? null : given,
      }
    : findNamespaceTools();
  if (tools.verdict) return unavailable(tools.verdict);
  const trial = given ?? options.support ?? probeNamespacesAsync();
  const ownNetwork = modelUrl !== null;
  const port = modelUrl === null ? null : loopbackPort(modelUrl);
  if (ownNetwork && port === null) {
    return refuse(
      `the model URL ${modelUrl} is not on loopback, so it cannot be forwarded into a network namespace`,
      'Namespace isolation was required',
    );
  }
  // Without a network namespace of its own (live mode) the engine reaches the host's loopback itself.
  const targets = ownNetwork ? forwardTargets(port, options.forwardUrls ?? []) : [];

  const early =
    options.early && options.prestart === 'ignore' && ownNetwork && targets.length === 1
      ? options.early.unshare === tools.unshare
        ? options.early
        : null
      : null;
  // What the init says first on the lifeline, so no other process can take its place there.
  const token = early?.token ?? randomBytes(16).toString('hex');
  const reports: InitReport[] = [];
  let onFilesystem: (contained: boolean) => void = () => undefined;
  const filesystemReport = new Promise<boolean>((resolve) => {
    onFilesystem = resolve;
  });
  const lifeline = createLifeline(token, (report) => {
    reports.push(report);
    if (report.type === 'filesystem') {
      // A failure ends the attempt (the init reports it as an error of stage `filesystem`, see settle).
      onFilesystem(report.contained);
      // Copied and mounted: only the empty mount point is left on the host until close.
      if (newRoot !== null) removeNewRootParts(newRoot);
    }
  });
  void lifeline.closed.then(() => onFilesystem(false));
  /** Filesystem containment as the trial found it (after the verdict, below). */
  let filesystem: FilesystemSupport = tools.filesystem;
  /** The host directory the new root is mounted on (made by contain, removed by close). */
  let newRoot: NewRootFiles | null = null;
  // Path sockets only for the wrap mode (PTY and `script` attempts, whose init starts in their terminal and
  // inherits nothing): an isolation opened to be prestarted passes its init the lifeline and the model channel.
  const dir = options.prestart === undefined ? socketDir() : null;
  const paths = dir
    ? {
        dir,
        lifeline: path.join(dir, 'life.sock'),
        model: port !== null ? path.join(dir, 'model.sock') : null,
        // One socket per forwarded port (the model's is model.sock).
        forwards: targets.map((target, i) => path.join(dir, i === 0 ? 'model.sock' : `fwd-${target.port}.sock`)),
      }
    : null;
  const servers: net.Server[] = [];
  const pathChannels: Array<Awaited<ReturnType<typeof listenChannel>>> = [];
  try {
    if (paths) servers.push(await listenLifeline(paths.lifeline, lifeline));
    for (const [i, target] of (paths ? targets : []).entries()) {
      const channel = await listenChannel(paths!.forwards[i]!, token, target);
      pathChannels.push(channel);
      servers.push(channel.server);
    }
  } catch (error) {
    await Promise.all(servers.map(closeServer));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  /**
   * The paths go once the init has connected to them, before the engine exists: no process of the attempt sees
   * them. The servers stop listening (they are closed for good once their connections are, in close()).
   */
  let serversClosed: Promise<void> | null = null;
  const removePaths = (): void => {
    serversClosed ??= Promise.all(servers.map(closeServer)).then(() => undefined);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  };
  // The init is started before the trial's verdict (prestart); it brings the loopback up with `ip`.
  // `channels[i]` carries the connections to `targets[i]`.
  const initCommand = (lifelineChannel: string, channels: readonly string[]): string[] =>
    initCommandLine(tools.unshare!, ownNetwork, {
      lifeline: lifelineChannel,
      token,
      loopback: ownNetwork ? tools.ip : null,
      forwards: targets.map((target, i) => ({ port: target.port, socket: channels[i]! })),
    });
  const wrapCommand = paths ? initCommand(paths.lifeline, paths.forwards) : null;
  const stopChannels: Array<() => void> = pathChannels.map((channel) => channel.stop);
  // An init given its sockets (prestarted, or under `script`): descriptor 3 is the lifeline, 4 the model channel,
  // 5, … the other forwards', inherited, so no process of the attempt can reach them; the paths are not needed.
  const passedCommand = (): string[] =>
    initCommand(
      passedFd(3),
      targets.map((_, i) => passedFd(4 + i)),
    );
  const passSockets = 1 + targets.length;
  const attachPassed = (sockets: readonly net.Socket[]): void => {
    removePaths();
    if (sockets[0]) lifeline.accept(sockets[0]);
    for (const [i, target] of targets.entries()) {
      const socket = sockets[1 + i];
      if (socket) stopChannels.push(serveModelChannel(socket, target.port, target.host));
    }
  };
  let wrapped = false;
  let prestarted: SpawnedSplit | null = null;
  let launched = false;
  let closed = false;
  const opened: AttemptIsolation = {
    record: {
      mode,
      network: ownNetwork ? 'namespace' : 'host',
      processes: 'pid-namespace',
      reason: null,
      filesystem: 'host',
    },
    contain: (plan) => {
      if (!filesystem.available || !filesystem.tools || newRoot !== null || launched || closed) return;
      // Private to this process (0700): the skeleton, the fstab and the mount point, which stays empty on the host
      // (the tmpfs on it exists in the namespace only). Failing here fails the attempt: the plan was chosen.
      const dir = fs.mkdtempSync(ownedDirPrefix(os.tmpdir(), 'ah-root-'));
      try {
        newRoot = writeNewRoot(plan, dir);
      } catch (error) {
        fs.rmSync(dir, { recursive: true, force: true });
        throw new AgentHarnessError(
          'ISOLATION_SETUP_FAILED',
          `The agent's filesystem could not be set up (step skeleton, in ${dir}): ${(error as Error).message}.`,
          { cause: error, details: { step: 'skeleton', path: dir } },
        );
      }
      opened.record.filesystem = 'mount-namespace';
      opened.record.exposed = plan.exposed;
      lifeline.send(mountsLine(newRoot, filesystem.tools));
    },
    contained: () => (newRoot === null ? Promise.resolve(false) : filesystemReport),
    paths: paths ? { lifeline: paths.lifeline, model: paths.model, token } : null,
    wrap: (command, wrapOptions = {}) => {
      if (!wrapCommand || prestarted || wrapped)
        throw new Error('internal: this isolation has no command to wrap (prestarted, or wrapped already)');
      wrapped = true;
      if (wrapOptions.passing) {
        const passed = passedCommand();
        return {
          file: passed[0]!,
          args: passed.slice(1),
          env: { ...INIT_ENV },
          passSockets,
          attach: (sockets) => {
            attachPassed(sockets);
            // Sent as soon as the init has greeted.
            if (!closed) lifeline.send(launchLine(command));
          },
        };
      }
      // The engine command goes over the lifeline once the init holds both connections and their paths are gone.
      void Promise.all([lifeline.accepted, ...pathChannels.map((channel) => channel.accepted)]).then(() => {
        if (closed) return;
        removePaths();
        lifeline.send(launchLine(command));
      });
      return { file: wrapCommand[0]!, args: wrapCommand.slice(1), env: { ...INIT_ENV }, passSockets: 0 };
    },
    prestart: (stdin) => {
      if (prestarted || wrapped || closed) return;
      const adopted = stdin === 'ignore' ? (early?.take() ?? null) : null;
      if (adopted) {
        prestarted = adopted;
        attachPassed(adopted.passed);
        // Its forward's port was 0 on its command line: the first line it reads gives it.
        lifeline.send(portsLine(targets.map((target) => target.port)));
        return;
      }
      const command = passedCommand();
      // The init needs no environment of its own: the engine's comes with the launch message.
      const child = spawnSplit({
        file: command[0]!,
        args: command.slice(1),
        cwd: '/',
        env: { ...INIT_ENV },
        stdin,
        passSockets,
      });
      prestarted = child;
      attachPassed(child.passed);
    },
    launch: (command) => {
      if (!prestarted || launched || closed) return null;
      launched = true;
      lifeline.send(launchLine(command));
      return prestarted;
    },
    settle: async (result) => {
      await Promise.race([lifeline.closed, new Promise((resolve) => setTimeout(resolve, LIFELINE_DRAIN_MS).unref())]);
      const failure = reports.find((r): r is Extract<InitReport, { type: 'error' }> => r.type === 'error');
      if (failure?.stage === 'filesystem') {
        // Fails closed: the engine was never started (observe-attempt.ts turns this into the attempt's error).
        const setupError = Object.assign(new Error(failure.message), { code: 'ISOLATION_SETUP_FAILED' });
        return { ...result, exitCode: null, signal: null, spawnError: setupError };
      }
      if (failure && !reports.some((r) => r.type === 'started')) {
        const spawnError = Object.assign(
          new Error(`${failure.stage === 'spawn' ? '' : `namespace ${failure.stage}: `}${failure.message}`),
          failure.code ? { code: failure.code } : {},
        );
        return { ...result, exitCode: null, signal: null, spawnError };
      }
      const exit = reports.find((r): r is Extract<InitReport, { type: 'exit' }> => r.type === 'exit');
      return exit ? { ...result, exitCode: exit.code, signal: exit.signal } : result;
    },
    close: async () => {
      const first = !closed;
      closed = true;
      for (const socket of lifeline.sockets) socket.destroy();
      for (const stop of stopChannels) stop();
      // A prestarted init the attempt never launched (it failed first): its lifeline is gone, so it exits; the
      // group kill covers an init that had not connected yet.
      const unlaunched = prestarted !== null && !launched ? (prestarted as SpawnedSplit) : null;
      // Only while it runs: an init whose `unshare` failed at once (no namespaces here) is gone and reaped, and its pid
      // is no longer its to signal.
      if (unlaunched?.pid !== undefined && unlaunched.running()) {
        killGroup(unlaunched.pid, 'SIGKILL');
        await Promise.race([
          unlaunched.settled,
          new Promise((resolve) => setTimeout(resolve, LIFELINE_DRAIN_MS).unref()),
        ]);
      }
      removePaths();
      await serversClosed;
      if (newRoot !== null) removeNewRoot(newRoot);
      // Off the attempt's critical path: what harnesses killed with SIGKILL left (this one's are its own to remove).
      if (first) void sweepStaleDirs(os.tmpdir(), socketBase()).catch(() => undefined);
    },
  };
  if (options.prestart !== undefined) opened.prestart(options.prestart);
  const support = await trial;
  if (!support.available || !support.unshare) {
    // The init, if started, was sent nothing: it is killed with its group, and its sockets go.
    await opened.close();
    return unavailable(support);
  }
  filesystem = support.filesystem ?? filesystem;
  if (options.filesystem && !filesystem.available) {
    const why = `filesystem containment is unavailable: ${filesystem.reason ?? 'unknown'}`;
    if (mode === 'require') {
      await opened.close();
      return refuse(why, 'Filesystem containment was required');
    }
    opened.record.reason = why;
  }
  return opened;
}
