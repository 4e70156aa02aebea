/**
 * The attempt daemon (`agent-harness daemon serve`, hidden; started by the command's client, bin/daemon-client.js,
 * when the daemon is on: AGENT_HARNESS_DAEMON=on, or unset outside a CI job). It runs the attempt commands sent to
 * it, each as the command itself would run it (`runCli`: the same run store, isolation, audit and output), in a
 * process whose code is already loaded and warm: issue 13's cost of a fresh Node process per `start`. The environment, working directory and umask are its own,
 * which are the client's: a daemon is named after them, so a client with others gets a daemon of its own.
 *
 * One connection per command: a request line (`{ v, key, argv }`), then frames back (accepted, stdout, stderr, exit)
 * and signal lines from the client (`{ signal }`). A client that goes away is a SIGTERM and then a second one: the
 * engine is killed and the audit sealed, as for a second Ctrl-C. Control lines (`{ v, control: 'status' | 'stop' }`)
 * get one reply frame. A daemon whose sources (in a checkout) were edited, or whose directory was replaced at its
 * path, since it started turns commands down (the command then runs itself) and ends. The daemon ends after its idle
 * time without an attempt, on `daemon stop`, or on SIGTERM, SIGINT or SIGHUP; it cancels its running attempts first
 * (their audits are sealed), and removes its socket.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { AgentHarnessError } from '../errors/index.js';
import { PACKAGE_ROOT } from '../runtime/executables.js';
import { daemonShared, type DaemonShared } from './daemon-shared.js';
import type { CliStreams } from './output.js';

/** What `daemon status` reports of a daemon. */
export interface DaemonStatus {
  pid: number;
  key: string;
  socket: string;
  cwd: string;
  started_at: string;
  /** Attempt commands served so far. */
  served: number;
  /** Attempt commands running now. */
  running: number;
  idle_ms: number;
}

/** Options of a daemon. */
export interface ServeOptions {
  socket: string;
  key: string;
  /** The descriptor to write `ready` on once listening, then close (the client that started the daemon waits for it). */
  readyFd: number | null;
  idleMs: number;
  /** A line for the daemon's log (its standard error). */
  log?: (line: string) => void;
  /** The daemon's log file, removed when it stops as it should. */
  logFile?: string;
}

/** The bin's fingerprint of the package's sources, or null where there are none (a published package). */
function sourceFingerprint(): (() => string) | null {
  if (!fs.existsSync(path.join(PACKAGE_ROOT, 'src'))) return null;
  const bin = createRequire(path.join(PACKAGE_ROOT, 'bin', 'agent-harness.js'))('./agent-harness.js') as { sourceFingerprint: () => string };
  return bin.sourceFingerprint;
}

/** Listens on `socketPath`, taking over a stale socket file; 'taken' when a live daemon already listens there. */
async function listen(server: net.Server, socketPath: string, shared: DaemonShared): Promise<'listening' | 'taken'> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(socketPath, () => {
          server.off('error', reject);
          resolve();
        });
      });
      fs.chmodSync(socketPath, 0o600);
      return 'listening';
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt > 0) throw error;
      const live = await shared.connect(socketPath).then((socket) => (socket.destroy(), true), () => false);
      if (live) return 'taken';
      fs.rmSync(socketPath, { force: true });
    }
  }
}

/** A stream of the command's output, sent to the client as frames of `type`, with the socket's backpressure. */
function frameWriter(socket: net.Socket, type: number, shared: DaemonShared): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (socket.destroyed || socket.writableEnded) return callback();
      socket.write(shared.encodeFrame(type, chunk), () => callback());
    },
  });
}

/**
 * Splits what a client sends into lines: `push(chunk)` returns the lines it completed, or 'too long' once a line
 * passes `maxBytes` (the request line, and each signal line after it).
 */
class LineReader {
  private pending = Buffer.alloc(0);

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): string[] | 'too long' {
    this.pending = Buffer.concat([this.pending, chunk]);
    const lines: string[] = [];
    for (let end = this.pending.indexOf(10); end >= 0; end = this.pending.indexOf(10)) {
      if (end > this.maxBytes) return 'too long';
      lines.push(this.pending.subarray(0, end).toString('utf8'));
      this.pending = this.pending.subarray(end + 1);
    }
    return this.pending.length > this.maxBytes ? 'too long' : lines;
  }
}

/**
 * Reads the first line a connection sends; resolves it and the reader holding what followed it, 'too long' past
 * MAX_REQUEST_BYTES, or null when the connection closed first.
 */
function firstLine(socket: net.Socket, shared: DaemonShared): Promise<{ line: string; rest: string[]; reader: LineReader } | 'too long' | null> {
  return new Promise((resolve) => {
    const reader = new LineReader(shared.MAX_REQUEST_BYTES);
    const onData = (chunk: Buffer): void => {
      const lines = reader.push(chunk);
      if (lines !== 'too long' && lines.length === 0) return;
      socket.off('data', onData);
      socket.off('close', onClose);
      // The caller reads on from here: its listeners are attached before any further data can arrive.
      resolve(lines === 'too long' ? 'too long' : { line: lines[0]!, rest: lines.slice(1), reader });
    };
    const onClose = (): void => resolve(null);
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

/** The attempt command of a request, or why it is refused. */
function attemptArgv(request: Record<string, unknown>, key: string, shared: DaemonShared): string[] | string {
  if (request.v !== shared.PROTOCOL) return `protocol ${JSON.stringify(request.v)}, not ${shared.PROTOCOL}`;
  if (request.key !== key) return 'the command was given in another environment, directory or build than this daemon\'s';
  const argv = request.argv;
  if (!Array.isArray(argv) || !argv.every((arg): arg is string => typeof arg === 'string')) return 'argv is not a list of strings';
  if (!shared.ATTEMPT_COMMANDS.includes(argv[0] as string)) return `${JSON.stringify(argv[0])} is not an attempt command`;
  return argv;
}

/** Runs the daemon until it stops; resolves once its socket is closed and every attempt it took is sealed. */
export async function serveDaemon(options: ServeOptions): Promise<void> {
  const shared = daemonShared();
  const [{ runCli }, { keepPreparing }] = await Promise.all([import('./main.js'), import('../core/early-start.js')]);
  const log = options.log ?? ((line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`));
  const startedAt = new Date();
  /** Each running attempt command, by its connection: how to give it a signal. */
  const attempts = new Map<net.Socket, (signal: NodeJS.Signals) => void>();
  let served = 0;
  let idleSince = Date.now();
  let stopping = false;
  let idleTimer: NodeJS.Timeout | null = null;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const server = net.createServer();
  const refuse = (socket: net.Socket, reason: string, stale = false): void => {
    socket.end(shared.encodeFrame(shared.FRAME.refused, { reason, stale }));
  };
  // In a checkout (src/ beside dist/), the sources as they were when the daemon started (the bin's fingerprint:
  // every file's path, size and mtime); a published package has no sources and nothing to compare.
  const fingerprint = sourceFingerprint();
  const startedFrom = fingerprint?.();
  const sourcesChanged = (): boolean => fingerprint !== null && fingerprint() !== startedFrom;
  // The directory it was started in, still the one at its path? Replaced (`rm -rf` and a new clone at the same path),
  // the daemon would run relative paths in the old one and absolute ones in the new.
  const startCwd = process.cwd();
  const cwdReplaced = (): boolean => {
    try {
      const here = fs.statSync('.');
      const there = fs.statSync(startCwd);
      return here.ino !== there.ino || here.dev !== there.dev;
    } catch {
      return true;
    }
  };

  const finishIfStopped = (): void => {
    if (stopping && attempts.size === 0 && !server.listening) resolveDone();
  };
  const stop = (why: string): void => {
    if (stopping) return;
    stopping = true;
    if (idleTimer) clearTimeout(idleTimer);
    log(`stopping (${why}); ${attempts.size} attempt(s) running are canceled and sealed`);
    // The socket goes first: a client from now on starts a daemon of its own.
    server.close(() => finishIfStopped());
    for (const signal of attempts.values()) signal('SIGTERM');
  };
  const armIdle = (): void => {
    idleSince = Date.now();
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => stop(`idle for ${options.idleMs} ms`), options.idleMs);
  };

  const status = (): DaemonStatus => ({
    pid: process.pid,
    key: options.key,
    socket: options.socket,
    cwd: process.cwd(),
    started_at: startedAt.toISOString(),
    served,
    running: attempts.size,
    idle_ms: attempts.size > 0 ? 0 : Date.now() - idleSince,
  });

  const runAttempt = async (socket: net.Socket, argv: string[], reader: LineReader, rest: string[]): Promise<void> => {
    // A signal that comes before the command listens for them (the client gone at once) is kept and given to it then.
    const listeners = new Set<(signal: NodeJS.Signals) => void>();
    const given: NodeJS.Signals[] = [];
    const signal = (name: NodeJS.Signals): void => {
      given.push(name);
      for (const listener of listeners) listener(name);
    };
    attempts.set(socket, signal);
    served += 1;
    if (idleTimer) clearTimeout(idleTimer);
    // Signal lines from the client; its going away is a second Ctrl-C: nobody is left to wait for a graceful end.
    const onLines = (lines: string[]): void => {
      for (const line of lines) {
        try {
          const name = (JSON.parse(line) as { signal?: unknown }).signal;
          if (name === 'SIGINT' || name === 'SIGTERM') signal(name);
        } catch {
          // not a signal line: ignored
        }
      }
    };
    let finishedCommand = false;
    socket.on('data', (chunk: Buffer) => {
      const lines = reader.push(chunk);
      if (lines === 'too long') socket.destroy();
      else onLines(lines);
    });
    socket.once('close', () => {
      if (finishedCommand) return;
      log(`client of ${argv.slice(0, 2).join(' ')} went away: canceling its attempt`);
      signal('SIGTERM');
      signal('SIGTERM');
    });
    socket.write(shared.encodeFrame(shared.FRAME.accepted, { pid: process.pid }));
    onLines(rest);
    const streams: CliStreams = {
      stdout: frameWriter(socket, shared.FRAME.stdout, shared),
      stderr: frameWriter(socket, shared.FRAME.stderr, shared),
      interrupts: {
        subscribe: (listener) => {
          listeners.add(listener);
          for (const name of given) queueMicrotask(() => listener(name));
          return () => listeners.delete(listener);
        },
      },
    };
    let exitStatus = 1;
    try {
      exitStatus = await runCli(argv, streams);
    } finally {
      finishedCommand = true;
      // Everything the command wrote goes out before its exit status.
      await Promise.all([streams.stdout, streams.stderr].map((stream) => finished((stream as Writable).end()).catch(() => undefined)));
      if (!socket.destroyed) socket.end(shared.encodeFrame(shared.FRAME.exit, { status: exitStatus }));
      attempts.delete(socket);
      log(`${argv.slice(0, 2).join(' ')}: exit status ${exitStatus}`);
      if (stopping) finishIfStopped();
      else if (attempts.size === 0) armIdle();
    }
  };

  server.on('connection', (socket) => {
    socket.on('error', () => undefined);
    void firstLine(socket, shared).then((first) => {
      if (first === null) return socket.destroy();
      if (first === 'too long') return refuse(socket, `the request is longer than ${shared.MAX_REQUEST_BYTES} bytes`);
      let request: Record<string, unknown>;
      try {
        const parsed: unknown = JSON.parse(first.line);
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        request = parsed as Record<string, unknown>;
      } catch {
        return refuse(socket, 'the request is not a JSON object');
      }
      if (request.control === 'status') return socket.end(shared.encodeFrame(shared.FRAME.reply, status()));
      if (request.control === 'stop') {
        socket.end(shared.encodeFrame(shared.FRAME.reply, { ...status(), stopping: true }));
        return stop('daemon stop');
      }
      const argv = attemptArgv(request, options.key, shared);
      if (typeof argv === 'string') return refuse(socket, argv);
      if (stopping) return refuse(socket, 'the daemon is stopping');
      const stale = sourcesChanged() ? 'the sources changed since the daemon started' : cwdReplaced() ? 'its directory was replaced since it started' : null;
      if (stale) {
        // Its code or its directory is not the command's any more: the command runs itself, and the next starts anew.
        refuse(socket, stale, true);
        return stop(stale);
      }
      return runAttempt(socket, argv, first.reader, first.rest).catch((error: unknown) => {
        log(`INTERNAL: ${(error as Error).stack ?? String(error)}`);
        socket.destroy();
      });
    });
  });

  const outcome = await listen(server, options.socket, shared);
  // A command that started this daemon in the background marked it as starting; the next command now connects.
  fs.rmSync(shared.startingPathFor(options.socket), { force: true });
  if (options.readyFd !== null) {
    fs.writeSync(options.readyFd, 'ready\n');
    fs.closeSync(options.readyFd);
  }
  if (outcome === 'taken') {
    log(`another daemon listens at ${options.socket}; this one ends`);
    return;
  }
  log(`listening at ${options.socket} (pid ${process.pid}, idle time ${options.idleMs} ms)`);
  // Each attempt leaves the next one's model server and namespaces' init ready: its engine starts without them.
  void keepPreparing(true);
  // Each running attempt listens for the process's signals too (runAttemptCommand): many at once are expected here.
  process.setMaxListeners(Math.max(process.getMaxListeners(), 256));
  const onSignal = (name: NodeJS.Signals): void => stop(name);
  for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(name, onSignal);
  armIdle();
  await done;
  await keepPreparing(false);
  for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.off(name, onSignal);
  log('stopped');
  // A daemon that ended as it should leaves nothing behind; one that crashed leaves its log (the client names it).
  if (options.logFile) fs.rmSync(options.logFile, { force: true });
}

/** Asks the daemon at `socketPath` for its status, or to stop; null when none answers there (a stale socket). */
export async function controlDaemon(socketPath: string, control: 'status' | 'stop', timeoutMs = 5_000): Promise<DaemonStatus | null> {
  const shared = daemonShared();
  const socket = await shared.connect(socketPath).catch(() => null);
  if (socket === null) return null;
  return new Promise((resolve, reject) => {
    const reader = new shared.FrameReader();
    let reply: DaemonStatus | null = null;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new AgentHarnessError('DAEMON_UNAVAILABLE', `The daemon at ${socketPath} did not answer within ${timeoutMs} ms.`, { details: { socket: socketPath } }));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) if (frame.type === shared.FRAME.reply) reply = JSON.parse(frame.payload.toString('utf8')) as DaemonStatus;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(reply);
    });
    socket.write(`${JSON.stringify({ v: shared.PROTOCOL, control })}\n`);
  });
}
