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
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { AgentHarnessError } from '../../errors/index.js';
import { killGroup, type ProcessResult } from '../process-result.js';
import { spawnSplit, type SpawnedSplit, type SpawnSplitOptions } from '../process.js';
import type { IsolationMode, IsolationRecord } from '../../protocol/index.js';
import { INIT_ENV, initCommandLine, launchLine, mountsLine, passedFd, portsLine } from './init-scripts.js';
import type { EarlyInit } from './early-init.js';
import { writeNewRoot, type MountPlan, type NewRootFiles } from './mount-plan.js';
import { serveModelChannel } from './model-channel.js';
import { ownedDirPrefix, sweepStaleDirs } from './stale-dirs.js';
import { findNamespaceTools, probeNamespacesAsync, type FilesystemSupport, type NamespaceSupport } from './probe.js';

export { NAMESPACE_INIT } from './init-scripts.js';

/** What {@link openIsolation} needs. */
export interface OpenIsolationOptions {
  mode: IsolationMode;
  /** The model server's URL (scripted mode), or null (live mode: the host network is kept on purpose). */
  modelUrl: string | null;
  /**
   * More host-loopback URLs the engine must reach inside the network namespace (HTTP MCP servers): each port is
   * forwarded like the model server's, to the same host. A URL not on loopback, or on the model's port, is skipped.
   */
  forwardUrls?: readonly string[];
  /**
   * Probe result to use instead of probing (tests), or a probe under way (an attempt starts one first, so the trial
   * runs while its run directory is made).
   */
  support?: NamespaceSupport | Promise<NamespaceSupport>;
  /**
   * Starts the init at once ({@link AttemptIsolation.prestart} with this stdin), without waiting for the probe's
   * verdict: the trial and the init's start-up (a Node start) then run side by side. When the verdict is that
   * namespaces are unavailable, the init is killed before it was sent anything, and the isolation is the fallback
   * (or ISOLATION_UNAVAILABLE in mode `require`), as without this option.
   */
  prestart?: SpawnSplitOptions['stdin'];
  /**
   * An init started before the attempt (`early-init.ts`): prestarting adopts it instead of starting one, and sends it
   * the model's port, when it fits (a network namespace, the model's port the one forward, stdin closed). Whatever
   * does not adopt it kills it before this returns.
   */
  early?: EarlyInit | null;
  /**
   * The attempt will contain its filesystem ({@link AttemptIsolation.contain}): where that is unavailable, mode
   * `require` refuses (ISOLATION_UNAVAILABLE) and `auto` records why.
   */
  filesystem?: boolean;
}

/** How {@link AttemptIsolation.wrap} wires the init. */
export interface WrapOptions {
  /**
   * The caller can pass the init sockets as its descriptors 3, 4, … (a `script` attempt: util-linux `script` hands
   * its descriptors on to its child): the init then reaches no path of the harness at all, and the caller gives
   * this process's ends to {@link WrappedCommand.attach} once it has started the command.
   */
  passing?: boolean;
}

/** What {@link AttemptIsolation.wrap} returns: the command to start, and the environment it starts with. */
export interface WrappedCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** With `passing` and namespaces: how many sockets to pass as descriptors 3, 4, …; else 0. */
  passSockets: number;
  /** With `passing` and namespaces: takes this process's ends of the passed sockets, in order. */
  attach?: (sockets: readonly net.Socket[]) => void;
}

/** An attempt's isolation, ready to wrap the engine command. */
export interface AttemptIsolation {
  record: IsolationRecord;
  /**
   * The command to start in a terminal (PTY, `script`) that runs `command` inside the namespaces: the init, with the
   * environment it starts with; the engine's command, environment and directory follow over its lifeline once it
   * is connected. Without namespaces, `command` itself. Once per isolation, and not with {@link prestart}.
   */
  wrap(
    command: { file: string; args: readonly string[]; env: Record<string, string>; cwd: string },
    options?: WrapOptions,
  ): WrappedCommand;
  /**
   * The Unix sockets a wrapped init connects to, and the token it greets with (null when the isolation was opened
   * to be prestarted, or has no namespaces). They are removed once the init is connected.
   */
  paths: { lifeline: string; model: string | null; token: string } | null;
  /**
   * Starts the namespaces and their init now, with split pipes, before the engine command is known (the harness
   * is still writing its config): {@link launch} then only sends the command. Does nothing without namespaces.
   */
  prestart(stdin: SpawnSplitOptions['stdin']): void;
  /**
   * Has the prestarted init run `file args` with exactly `env` in `cwd`, and returns the child to supervise (the
   * engine's output comes out of its pipes); null when nothing was prestarted.
   */
  launch(command: {
    file: string;
    args: readonly string[];
    env: Record<string, string>;
    cwd: string;
  }): SpawnedSplit | null;
  /**
   * The engine's own exit (not init's 128+n), or the spawn error init reported. Waits (briefly) for the init's
   * lifeline to close, so its last report is in.
   */
  settle(result: ProcessResult): Promise<ProcessResult>;
  /** Stops the forwarders and removes their sockets. */
  close(): Promise<void>;
  /**
   * Has the init build the agent's filesystem from `plan` and pivot into it before the engine starts (sent now to
   * a prestarted init, which sets it up while the harness writes the engine's config; with the launch otherwise).
   * Records `filesystem: 'mount-namespace'` and what is exposed; does nothing where filesystem containment is
   * unavailable (the record then says `host`, and why). Once, before the launch.
   */
  contain(plan: MountPlan): void;
  /**
   * Resolves once the init has reported its filesystem set up (true) or failed (false: the record says `host` and
   * why; in mode `require` the attempt then fails at its launch). False at once when nothing was contained.
   */
  contained(): Promise<boolean>;
}

/** What the init reported over the lifeline. */
type InitReport =
  | { type: 'started'; pid: number }
  | { type: 'exit'; code: number | null; signal: string | null }
  | { type: 'error'; stage: string; message: string; code: string | null }
  | { type: 'filesystem'; contained: boolean; message?: string };

/** A loopback port the engine must reach inside the namespace (the model server's, an MCP server's). */
function loopbackPort(url: string): number | null {
  return loopbackTarget(url)?.port ?? null;
}

/** The host loopback address and port `url` names, or null when it is not on loopback (or not a URL). */
export function loopbackTarget(url: string): ForwardTarget | null {
  try {
    const parsed = new URL(url);
    const host = { '127.0.0.1': '127.0.0.1', localhost: 'localhost', '[::1]': '::1' }[parsed.hostname];
    if (!host) return null;
    return { host, port: Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80)) };
  } catch {
    return null;
  }
}

/** Where a forwarded port's connections go on the host. */
interface ForwardTarget {
  host: string;
  port: number;
}

/**
 * The ports forwarded into the namespace: the model server's first, then each of `urls` on loopback, one per port
 * (the model's port is the model's: both are on the host's loopback, so another server cannot hold it).
 */
function forwardTargets(modelPort: number | null, urls: readonly string[]): ForwardTarget[] {
  const targets: ForwardTarget[] = modelPort === null ? [] : [{ host: '127.0.0.1', port: modelPort }];
  for (const url of urls) {
    const target = loopbackTarget(url);
    if (target && !targets.some((t) => t.port === target.port)) targets.push(target);
  }
  return targets;
}

/** Where the socket directories are made: a short path. */
function socketBase(): string {
  return os.tmpdir().length <= 60 ? os.tmpdir() : '/tmp';
}

/** A short private directory for the sockets (a Unix socket path must stay under ~107 bytes). */
function socketDir(): string {
  return fs.mkdtempSync(ownedDirPrefix(socketBase(), 'ah-ns-'));
}

/**
 * Listens on a Unix socket for the init's model channel (wrap mode): the first connection that opens with
 * `hello <token>` is served as the channel (its streams carried to `target`); any other is closed unread.
 * `accepted` resolves when the channel is taken.
 */
async function listenChannel(
  socket: string,
  token: string,
  target: ForwardTarget,
): Promise<{ server: net.Server; accepted: Promise<void>; stop: () => void }> {
  let taken = false;
  /** Every open connection (the channel and refused ones not yet gone), destroyed by stop(). */
  const connections = new Set<net.Socket>();
  let stopChannel: (() => void) | null = null;
  let markAccepted: () => void = () => undefined;
  const accepted = new Promise<void>((resolve) => {
    markAccepted = resolve;
  });
  const server = net.createServer((connection) => {
    connections.add(connection);
    connection.on('close', () => connections.delete(connection));
    connection.on('error', () => undefined);
    if (taken) {
      connection.destroy();
      return;
    }
    awaitGreeting(
      connection,
      token,
      () => !taken,
      (rest) => {
        taken = true;
        if (rest.length > 0) connection.unshift(rest);
        stopChannel = serveModelChannel(connection, target.port, target.host);
        connection.resume();
        markAccepted();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  return {
    server,
    accepted,
    stop: () => {
      stopChannel?.();
      for (const connection of connections) connection.destroy();
    },
  };
}

/** Longest first line a connection to the init's sockets may send before it is refused: `hello <token>`. */
const HELLO_MAX = 256;

/**
 * Waits for `hello <token>` as the first line on `connection`. If it comes while `free()` still holds (no other
 * connection took the place), `onGreeted` gets what followed the line, with the connection paused for it to read
 * on. Otherwise (another first line, one too long, the place taken) the connection is destroyed: nothing more of it
 * is read, and it is sent nothing.
 */
function awaitGreeting(
  connection: net.Socket,
  token: string,
  free: () => boolean,
  onGreeted: (rest: Buffer) => void,
): void {
  let buffered = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    buffered = Buffer.concat([buffered, chunk]);
    const newline = buffered.indexOf(10);
    if (newline < 0) {
      if (buffered.length > HELLO_MAX) connection.destroy();
      return;
    }
    connection.off('data', onData);
    if (!free() || buffered.subarray(0, newline).toString('utf8') !== `hello ${token}`) {
      connection.destroy();
      return;
    }
    connection.pause();
    onGreeted(buffered.subarray(newline + 1));
  };
  connection.on('data', onData);
}

/**
 * The harness's end of the init's lifeline; the init's newline-delimited reports go to `onReport`. The lifeline is
 * the first connection given to {@link Lifeline.accept} that opens with `hello <token>`: the socket the init
 * inherited (split-stream attempts, reachable by no other process), or a connection to a path socket (PTY and
 * `script` attempts). That path is on the host's filesystem, which the agent can reach (and read on its PID 1's
 * command line), so any other connection is closed, nothing it sends is read as a report, and it is sent nothing: no
 * process can forge the init's reports (the engine's exit, a spawn error) or read the launch message (the engine's
 * environment). The token is on the init's command line, which no other attempt's processes can see.
 */
function createLifeline(token: string, onReport: (report: InitReport) => void): Lifeline {
  /** Every open connection (the init's and any refused one not yet gone), so that close reaches them. */
  const sockets = new Set<net.Socket>();
  let init: net.Socket | null = null;
  let outbox: string | null = null;
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  let markAccepted: () => void = () => undefined;
  const accepted = new Promise<void>((resolve) => {
    markAccepted = resolve;
  });
  const accept = (connection: net.Socket): void => {
    sockets.add(connection);
    connection.on('error', () => undefined);
    connection.on('close', () => sockets.delete(connection));
    if (init) {
      connection.destroy();
      return;
    }
    awaitGreeting(
      connection,
      token,
      () => init === null,
      (rest) => {
        init = connection;
        connection.on('close', markClosed);
        markAccepted();
        const decoder = new StringDecoder('utf8');
        let buffered = '';
        const read = (chunk: Buffer): void => {
          buffered += decoder.write(chunk);
          for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
            const line = buffered.slice(0, newline);
            buffered = buffered.slice(newline + 1);
            try {
              onReport(JSON.parse(line) as InitReport);
            } catch {
              // not a report
            }
          }
          if (buffered.length > 65_536) buffered = '';
        };
        read(rest);
        connection.on('data', read);
        connection.resume();
        if (outbox !== null) connection.write(outbox);
      },
    );
  };
  return {
    sockets,
    closed,
    accepted,
    accept,
    send: (line) => {
      outbox = `${outbox ?? ''}${line}\n`;
      init?.write(`${line}\n`);
    },
  };
}

/** Listens on a path socket whose every connection goes to `lifeline` (the init connects there in wrap mode). */
async function listenLifeline(socket: string, lifeline: Lifeline): Promise<net.Server> {
  const server = net.createServer(lifeline.accept);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  return server;
}

/** The harness's end of the init's lifeline. */
interface Lifeline {
  /** Open connections: the init's, and refused ones not yet gone. */
  sockets: Set<net.Socket>;
  /** Resolves when the init's connection closed (the init exited). */
  closed: Promise<void>;
  /** Resolves when the init's connection is taken (it greeted with the token). */
  accepted: Promise<void>;
  /** Takes a connection: the init's if it is the first to greet with the token, else closed. */
  accept(connection: net.Socket): void;
  /** Sends one line to the init, now or as soon as it connects. */
  send(line: string): void;
}

/** How long to wait for the init's last report after `unshare` exited. */
const LIFELINE_DRAIN_MS = 1000;

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Removes the parts of a new root that only the harness wrote (the skeleton, the fstab), then calls `then`. */
function removeNewRootParts(files: NewRootFiles, then: () => void = () => undefined): void {
  fs.rm(files.skeleton, { recursive: true, force: true }, () => fs.rm(files.fstab, { force: true }, then));
}

/**
 * Removes a new root from the host: its parts, then its mount point and the private directory holding it, never
 * recursively: on the host the mount point is an empty directory (the tmpfs on it lived in the namespace only).
 */
function removeNewRoot(files: NewRootFiles): void {
  removeNewRootParts(files, () => removeMountPoint(files.root));
}

/**
 * Removes a mount point and its private directory. While a namespace that had not pivoted yet is being torn down (an
 * attempt ended during its setup) it is still a mount point there (EBUSY): tried again for a few seconds.
 */
function removeMountPoint(root: string, tries = 40): void {
  fs.rmdir(root, (error) => {
    if (error?.code === 'EBUSY' && tries > 1) setTimeout(() => removeMountPoint(root, tries - 1), 100).unref();
    else fs.rmdir(path.dirname(root), () => undefined);
  });
}

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
