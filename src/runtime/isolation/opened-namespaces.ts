/**
 * An attempt's isolation once its namespaces are opened (attempt-isolation.ts opens them): the init's sockets, its
 * lifeline and what it reported, the new root, and which of wrap, prestart, launch and close happened. Each
 * {@link AttemptIsolation} member is a function over that state, explicit ({@link NamespaceState}), that names what it
 * reads and changes.
 */
import fs from 'node:fs';
import type net from 'node:net';
import { AgentHarnessError } from '../../errors/index.js';
import type { IsolationRecord } from '../../protocol/index.js';
import { killGroup, type ProcessResult } from '../process-result.js';
import { spawnSplit, type SpawnedSplit, type SpawnSplitOptions } from '../process.js';
import type { EarlyInit } from './early-init.js';
import { INIT_ENV, initCommandLine, launchLine, mountsLine, passedFd, portsLine } from './init-scripts.js';
import { closeServer, type InitReport, LIFELINE_DRAIN_MS, type Lifeline } from './isolation-lifeline.js';
import { type ForwardTarget, socketBase } from './isolation-sockets.js';
import type { AttemptIsolation, WrapOptions, WrappedCommand } from './isolation-types.js';
import type { MountPlan } from './mount-plan.js';
import { type NewRoot, writeNewRoot } from './new-root.js';
import { serveModelChannel } from './model-channel.js';
import { removeNewRoot } from './new-root-removal.js';
import type { FilesystemSupport, NamespaceTools } from './probe.js';
import { ownedDirPrefix, sweepStaleDirs } from './stale-dirs.js';

/** The Unix sockets a wrapped init (PTY, `script`) connects to by path, in their private directory. */
export interface SocketPaths {
  dir: string;
  lifeline: string;
  model: string | null;
  /** One socket per forwarded port (the model's is model.sock). */
  forwards: string[];
}

/** A path socket's channel (`listenChannel`). */
export interface PathChannel {
  server: net.Server;
  accepted: Promise<void>;
  stop: () => void;
}

/** An engine command as the init is sent it. */
type EngineCommand = Parameters<AttemptIsolation['launch']>[0];

/** What an opened isolation's functions read and change: its state, explicit. */
export interface NamespaceState {
  /** The attempt's record (`contain` and the verdict change it). */
  readonly record: IsolationRecord;
  readonly tools: NamespaceTools;
  readonly ownNetwork: boolean;
  /** The ports forwarded into the network namespace: `channels[i]` of the init carries those of `targets[i]`. */
  readonly targets: readonly ForwardTarget[];
  /** What the init says first on the lifeline, so no other process can take its place there. */
  readonly token: string;
  /** An init started before the attempt that prestarting adopts, when it fits. */
  readonly early: EarlyInit | null;
  readonly lifeline: Lifeline;
  /** What the init reported on its lifeline, in order. */
  readonly reports: InitReport[];
  /** Resolves with the init's filesystem report (false when the lifeline closed first). */
  readonly filesystemReport: Promise<boolean>;
  /** The path sockets (wrap mode only), their servers and channels. */
  readonly paths: SocketPaths | null;
  readonly servers: net.Server[];
  readonly pathChannels: readonly PathChannel[];
  /** The init command for the path sockets (wrap mode), else null. */
  readonly wrapCommand: string[] | null;
  /** Stop the channels that carry forwarded connections (closed on close). */
  readonly stopChannels: Array<() => void>;
  /** Filesystem containment as the trial found it (set from the verdict). */
  filesystem: FilesystemSupport;
  /** Where the new root's parts are made, and stale ones swept (`OpenIsolationOptions.newRootBase`). */
  readonly newRootBase: string;
  /** The host directory the new root is mounted on (made by contain, removed by close). */
  newRoot: NewRoot | null;
  /** The path servers' closing, once the paths are removed. */
  serversClosed: Promise<void> | null;
  wrapped: boolean;
  prestarted: SpawnedSplit | null;
  launched: boolean;
  closed: boolean;
}

/** The isolation of `state`: each member one of the functions below. */
export function namespacedIsolation(state: NamespaceState): AttemptIsolation {
  const { paths, token } = state;
  return {
    record: state.record,
    contain: (plan) => containFilesystem(state, plan),
    contained: () => (state.newRoot === null ? Promise.resolve(false) : state.filesystemReport),
    paths: paths ? { lifeline: paths.lifeline, model: paths.model, token } : null,
    wrap: (command, wrapOptions = {}) => wrapInit(state, command, wrapOptions),
    prestart: (stdin) => prestartInit(state, stdin),
    launch: (command) => launchEngine(state, command),
    settle: (result) => settleResult(state, result),
    close: () => closeNamespaces(state),
  };
}

/**
 * The paths go once the init has connected to them, before the engine exists: no process of the attempt sees
 * them. The servers stop listening (they are closed for good once their connections are, in close()). Changes
 * `serversClosed`.
 */
function removePaths(state: NamespaceState): void {
  state.serversClosed ??= Promise.all(state.servers.map(closeServer)).then(() => undefined);
  if (state.paths) fs.rmSync(state.paths.dir, { recursive: true, force: true });
}

/**
 * The init's command line: it is started before the trial's verdict (prestart) and brings the loopback up with `ip`;
 * `channels[i]` carries the connections to `targets[i]`.
 */
export function initCommand(
  state: Pick<NamespaceState, 'tools' | 'ownNetwork' | 'token' | 'targets'>,
  lifelineChannel: string,
  channels: readonly string[],
): string[] {
  const { tools, ownNetwork, token, targets } = state;
  return initCommandLine(tools.unshare!, ownNetwork, {
    lifeline: lifelineChannel,
    token,
    loopback: ownNetwork ? tools.ip : null,
    forwards: targets.map((target, i) => ({ port: target.port, socket: channels[i]! })),
  });
}

/**
 * An init given its sockets (prestarted, or under `script`): descriptor 3 is the lifeline, 4 the model channel,
 * 5, … the other forwards', inherited, so no process of the attempt can reach them; the paths are not needed.
 */
function passedCommand(state: NamespaceState): string[] {
  return initCommand(
    state,
    passedFd(3),
    state.targets.map((_, i) => passedFd(4 + i)),
  );
}

/** How many sockets a passing init is given: its lifeline and one per forward. */
function passSocketsOf(state: NamespaceState): number {
  return 1 + state.targets.length;
}

/** Takes this process's ends of the sockets passed to the init (removing the paths); changes `stopChannels`. */
function attachPassed(state: NamespaceState, sockets: readonly net.Socket[]): void {
  removePaths(state);
  if (sockets[0]) state.lifeline.accept(sockets[0], true);
  for (const [i, target] of state.targets.entries()) {
    const socket = sockets[1 + i];
    if (socket) state.stopChannels.push(serveModelChannel(socket, target.port, target.host));
  }
}

/** {@link AttemptIsolation.contain}: writes the new root's parts and sends the plan; changes `newRoot` and `record`. */
function containFilesystem(state: NamespaceState, plan: MountPlan): void {
  const { filesystem } = state;
  if (!filesystem.available || !filesystem.tools || state.newRoot !== null || state.launched || state.closed) return;
  // Private to this process (0700): the skeleton, the fstabs and the mount point, which stays empty on the host
  // (the skeleton's bind on it exists in the namespace only). Failing here fails the attempt: the plan was chosen.
  const dir = fs.mkdtempSync(ownedDirPrefix(state.newRootBase, 'ah-root-'));
  try {
    state.newRoot = writeNewRoot(plan, dir);
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new AgentHarnessError(
      'ISOLATION_SETUP_FAILED',
      `The agent's filesystem could not be set up (step skeleton, in ${dir}): ${(error as Error).message}.`,
      { cause: error, details: { step: 'skeleton', path: dir } },
    );
  }
  state.record.filesystem = 'mount-namespace';
  state.record.exposed = plan.exposed;
  state.lifeline.send(mountsLine(state.newRoot, filesystem.tools));
}

/** {@link AttemptIsolation.wrap}: the init to start in a terminal; changes `wrapped`. */
function wrapInit(state: NamespaceState, command: EngineCommand, wrapOptions: WrapOptions): WrappedCommand {
  const { wrapCommand, lifeline } = state;
  if (!wrapCommand || state.prestarted || state.wrapped)
    throw new Error('internal: this isolation has no command to wrap (prestarted, or wrapped already)');
  state.wrapped = true;
  if (wrapOptions.passing) {
    const passed = passedCommand(state);
    return {
      file: passed[0]!,
      args: passed.slice(1),
      env: { ...INIT_ENV },
      passSockets: passSocketsOf(state),
      attach: (sockets) => {
        attachPassed(state, sockets);
        // Sent as soon as the init has greeted.
        if (!state.closed) lifeline.send(launchLine(command));
      },
    };
  }
  // The engine command goes over the lifeline once the init holds both connections and their paths are gone.
  void Promise.all([lifeline.accepted, ...state.pathChannels.map((channel) => channel.accepted)]).then(() => {
    if (state.closed) return;
    removePaths(state);
    lifeline.send(launchLine(command));
  });
  return { file: wrapCommand[0]!, args: wrapCommand.slice(1), env: { ...INIT_ENV }, passSockets: 0 };
}

/** {@link AttemptIsolation.prestart}: adopts the early init when it fits, else starts one; changes `prestarted`. */
function prestartInit(state: NamespaceState, stdin: SpawnSplitOptions['stdin']): void {
  if (state.prestarted || state.wrapped || state.closed) return;
  const adopted = stdin === 'ignore' ? (state.early?.take() ?? null) : null;
  if (adopted) {
    state.prestarted = adopted;
    attachPassed(state, adopted.passed);
    // Its forward's port was 0 on its command line: the first line it reads gives it.
    state.lifeline.send(portsLine(state.targets.map((target) => target.port)));
    return;
  }
  const command = passedCommand(state);
  // The init needs no environment of its own: the engine's comes with the launch message.
  const child = spawnSplit({
    file: command[0]!,
    args: command.slice(1),
    cwd: '/',
    env: { ...INIT_ENV },
    stdin,
    passSockets: passSocketsOf(state),
  });
  state.prestarted = child;
  attachPassed(state, child.passed);
}

/** {@link AttemptIsolation.launch}: sends the engine's command to the prestarted init; changes `launched`. */
function launchEngine(state: NamespaceState, command: EngineCommand): SpawnedSplit | null {
  if (!state.prestarted || state.launched || state.closed) return null;
  state.launched = true;
  state.lifeline.send(launchLine(command));
  return state.prestarted;
}

/** {@link AttemptIsolation.settle}: the engine's own exit, or the failure the init reported (reads `reports`). */
async function settleResult(state: NamespaceState, result: ProcessResult): Promise<ProcessResult> {
  const { reports } = state;
  await Promise.race([state.lifeline.closed, new Promise((resolve) => setTimeout(resolve, LIFELINE_DRAIN_MS).unref())]);
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
}

/** {@link AttemptIsolation.close}: ends the lifeline and channels, an unlaunched init, the sockets and the new root. */
async function closeNamespaces(state: NamespaceState): Promise<void> {
  const first = !state.closed;
  state.closed = true;
  for (const socket of state.lifeline.sockets) socket.destroy();
  for (const stop of state.stopChannels) stop();
  // A prestarted init the attempt never launched (it failed first): its lifeline is gone, so it exits; the
  // group kill covers an init that had not connected yet.
  const unlaunched = state.prestarted !== null && !state.launched ? state.prestarted : null;
  // Only while it runs: an init whose `unshare` failed at once (no namespaces here) is gone and reaped, and its pid
  // is no longer its to signal.
  if (unlaunched?.pid !== undefined && unlaunched.running()) {
    killGroup(unlaunched.pid, 'SIGKILL');
    await Promise.race([unlaunched.settled, new Promise((resolve) => setTimeout(resolve, LIFELINE_DRAIN_MS).unref())]);
  }
  removePaths(state);
  await state.serversClosed;
  if (state.newRoot !== null) removeNewRoot(state.newRoot);
  // Off the attempt's critical path: what harnesses killed with SIGKILL left (this one's are its own to remove).
  if (first) void sweepStaleDirs(state.newRootBase, socketBase()).catch(() => undefined);
}
