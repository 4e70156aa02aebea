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
import path from 'node:path';
import { AgentHarnessError } from '../../errors/index.js';
import type { IsolationMode } from '../../protocol/index.js';
import type { EarlyInit } from './early-init.js';
import { closeServer, createLifeline, type InitReport, type Lifeline, listenLifeline } from './isolation-lifeline.js';
import { type ForwardTarget, forwardTargets, listenChannel, loopbackPort, socketDir } from './isolation-sockets.js';
import {
  initCommand,
  type NamespaceState,
  namespacedIsolation,
  type PathChannel,
  type SocketPaths,
} from './opened-namespaces.js';
import { findNamespaceTools, type NamespaceSupport, type NamespaceTools, probeNamespacesAsync } from './probe.js';

export { NAMESPACE_INIT } from './init-scripts.js';
export { loopbackTarget } from './isolation-sockets.js';

import type { AttemptIsolation, OpenIsolationOptions } from './isolation-types.js';
import { newRootBase } from './stale-dirs.js';

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
  const tools = toolsOf(given);
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
  const state = await openState(options, tools, ownNetwork, port, targets, early);
  const opened = namespacedIsolation(state);
  if (options.prestart !== undefined) opened.prestart(options.prestart);
  const support = await trial;
  if (!support.available || !support.unshare) {
    // The init, if started, was sent nothing: it is killed with its group, and its sockets go.
    await opened.close();
    return unavailable(support);
  }
  state.filesystem = support.filesystem ?? state.filesystem;
  if (options.filesystem && !state.filesystem.available) {
    const why = `filesystem containment is unavailable: ${state.filesystem.reason ?? 'unknown'}`;
    if (mode === 'require') {
      await opened.close();
      return refuse(why, 'Filesystem containment was required');
    }
    state.record.reason = why;
  }
  return opened;
}

/** The namespace tools: those of the given probe result (the mount tools looked up when it has none), else found. */
function toolsOf(given: NamespaceSupport | null): NamespaceTools {
  return given
    ? {
        unshare: given.unshare,
        ip: given.ip,
        filesystem: given.filesystem ?? findNamespaceTools().filesystem,
        verdict: given.available && given.unshare ? null : given,
      }
    : findNamespaceTools();
}

/**
 * The state of the namespaces being opened: the init's lifeline (and the filesystem report it brings), and in wrap
 * mode the path sockets it connects to, listening.
 */
async function openState(
  options: OpenIsolationOptions,
  tools: NamespaceTools,
  ownNetwork: boolean,
  port: number | null,
  targets: ForwardTarget[],
  early: EarlyInit | null,
): Promise<NamespaceState> {
  // What the init says first on the lifeline, so no other process can take its place there.
  const token = early?.token ?? randomBytes(16).toString('hex');
  const reports: InitReport[] = [];
  let onFilesystem: (contained: boolean) => void = () => undefined;
  const filesystemReport = new Promise<boolean>((resolve) => {
    onFilesystem = resolve;
  });
  // Reports come over a connection, so after `state` below is made.
  const lifeline = createLifeline(token, (report) => {
    reports.push(report);
    if (report.type === 'filesystem') {
      // A failure ends the attempt (the init reports it as an error of stage `filesystem`, see settle).
      // The skeleton stays until the close: it is the agent's `/` (a bind of it), and removing an entry of it from the
      // host would detach what is mounted there in the namespace.
      onFilesystem(report.contained);
    }
  });
  void lifeline.closed.then(() => onFilesystem(false));
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
  const { servers, pathChannels } = await listenPaths(paths, lifeline, token, targets);
  const commandOf = { tools, ownNetwork, token, targets };
  const state: NamespaceState = {
    record: {
      mode: options.mode,
      network: ownNetwork ? 'namespace' : 'host',
      processes: 'pid-namespace',
      reason: null,
      filesystem: 'host',
    },
    tools,
    ownNetwork,
    targets,
    token,
    early,
    lifeline,
    reports,
    filesystemReport,
    paths,
    servers,
    pathChannels,
    wrapCommand: paths ? initCommand(commandOf, paths.lifeline, paths.forwards) : null,
    stopChannels: pathChannels.map((channel) => channel.stop),
    filesystem: tools.filesystem,
    newRootBase: options.newRootBase ?? newRootBase(),
    newRoot: null,
    serversClosed: null,
    wrapped: false,
    prestarted: null,
    launched: false,
    closed: false,
  };
  return state;
}

/** Listens on the path sockets (wrap mode); on a failure closes what listened, removes their directory and throws. */
async function listenPaths(
  paths: SocketPaths | null,
  lifeline: Lifeline,
  token: string,
  targets: readonly ForwardTarget[],
): Promise<{ servers: net.Server[]; pathChannels: PathChannel[] }> {
  const servers: net.Server[] = [];
  const pathChannels: PathChannel[] = [];
  try {
    if (paths) servers.push(await listenLifeline(paths.lifeline, lifeline));
    for (const [i, target] of (paths ? targets : []).entries()) {
      const channel = await listenChannel(paths!.forwards[i]!, token, target);
      pathChannels.push(channel);
      servers.push(channel.server);
    }
  } catch (error) {
    await Promise.all(servers.map(closeServer));
    if (paths) fs.rmSync(paths.dir, { recursive: true, force: true });
    throw error;
  }
  return { servers, pathChannels };
}
