// The command's client of the attempt daemon (issue 13), and what the daemon shares with it: where daemons listen,
// how one is named, and the frames they speak. The daemon makes `start`, `resume` and the direct `<engine>` form run
// their attempt in a resident process of the harness (`agent-harness daemon serve`), started on first use and gone
// after an idle time: the attempt then costs what it costs in a running process, not a Node process's cold start of
// the whole harness. On by default, except in a CI job (CI_VARIABLES); `AGENT_HARNESS_DAEMON` says otherwise.
//
// A daemon serves only commands given in the same environment, working directory, umask and Node, and by the same
// build of the harness: these make its name (a hash), so it reads them as the command itself would, from its own
// process. Nothing of one shell's environment reaches an attempt started from another.
//
// The daemons of a user live in a private directory (0700, the user's; anything else is refused and the command runs
// in its own process, with a warning). Loaded by the bin before the bundle: CommonJS, Node's built-ins only.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/** `on`/`1`: attempts run in a daemon; `off`/`0`: in the command's own process; unset: on, except in a CI job. */
const DAEMON_ENV = 'AGENT_HARNESS_DAEMON';
/**
 * The variables that say a process runs in a CI job, set to anything but empty, `false` or `0`: CI (GitHub Actions,
 * GitLab, CircleCI, Travis, Buildkite, Bitbucket, Drone, …), CONTINUOUS_INTEGRATION (Travis), BUILD_NUMBER (Jenkins,
 * TeamCity), TF_BUILD (Azure Pipelines), CODEBUILD_BUILD_ID (AWS CodeBuild). There the daemon is off unless
 * AGENT_HARNESS_DAEMON turns it on: a job expects nothing of it to outlive its commands.
 */
const CI_VARIABLES = ['CI', 'CONTINUOUS_INTEGRATION', 'BUILD_NUMBER', 'TF_BUILD', 'CODEBUILD_BUILD_ID'];
/** The directory of the user's daemons (default `$XDG_RUNTIME_DIR/agent-harness`, else `/tmp/agent-harness-<uid>`). */
const DAEMON_DIR_ENV = 'AGENT_HARNESS_DAEMON_DIR';
/** Milliseconds a daemon waits without an attempt before it ends (default 600000: 10 minutes). */
const DAEMON_IDLE_ENV = 'AGENT_HARNESS_DAEMON_IDLE_MS';
/** The default idle time. */
const DEFAULT_IDLE_MS = 600_000;
/** Version of the request line and the frames; part of a daemon's name. */
const PROTOCOL = 1;
/** The commands whose attempt runs in a daemon. The engine names are the CLI's direct form (src/cli/main.ts). */
const ATTEMPT_COMMANDS = ['start', 'resume', 'codex', 'claude', 'gemini', 'iflow', 'opencode'];
/**
 * Frames from the daemon: `type u8, length u32be, payload`. stdout and stderr carry bytes; accepted (`{ pid }`),
 * refused (`{ reason, stale }`), exit (`{ status }`) and reply (a status) carry JSON.
 */
const FRAME = { stdout: 1, stderr: 2, exit: 3, accepted: 4, refused: 5, reply: 6 };
/** How long a client waits for a daemon it started to listen (a checkout's daemon compiles the sources first). */
const START_TIMEOUT_MS = 30_000;
/** The longest request line a daemon reads. */
const MAX_REQUEST_BYTES = 1 << 20;
/**
 * The most daemons the default (AGENT_HARNESS_DAEMON unset) has running or starting in a directory: a command that
 * finds that many starts none, and runs its attempt itself. Each environment gets a daemon of its own, so a program
 * that gives every command another environment (a request id in a variable) would otherwise leave a daemon per
 * command. `on` is not held to it.
 */
const DEFAULT_MAX_DAEMONS = 4;
/** Longest Unix socket path Linux takes (108 with its terminating NUL). */
const MAX_SOCKET_PATH = 107;

/** The hints of the error codes this file reports (the same texts as src/errors/codes.ts; a test keeps them equal). */
const HINTS = {
  CONFIG_INVALID: 'Fix the value named in the message.',
  DAEMON_LOST: 'The daemon that ran the attempt ended before it finished (killed, or crashed); `agent-harness runs` seals the attempt. Resume the run to continue.',
};

/** A usage or environment error of the daemon's settings: `code` is a stable error code of the CLI. */
class DaemonSettingError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** The first of CI_VARIABLES that `env` sets (to anything but empty, `false` or `0`), or null. */
function ciVariable(env = process.env) {
  return CI_VARIABLES.find((name) => !['', 'false', '0'].includes((env[name] ?? '').trim().toLowerCase())) ?? null;
}

/** True when `AGENT_HARNESS_DAEMON` is unset (or blank): the daemon is on or off by default, not by request. */
function daemonByDefault(env = process.env) {
  return (env[DAEMON_ENV] ?? '').trim() === '';
}

/**
 * Whether attempts run in a daemon: `AGENT_HARNESS_DAEMON` on/1 or off/0, and when it is unset, on outside a CI job
 * (ciVariable). A value that is none of on/off/1/0 throws CONFIG_INVALID.
 */
function daemonEnabled(env = process.env) {
  if (daemonByDefault(env)) return ciVariable(env) === null;
  const value = env[DAEMON_ENV].trim().toLowerCase();
  if (value === 'off' || value === '0') return false;
  if (value === 'on' || value === '1') return true;
  throw new DaemonSettingError('CONFIG_INVALID', `${DAEMON_ENV} must be on, off, 1 or 0, not ${JSON.stringify(env[DAEMON_ENV])}.`);
}

/** The idle time from `AGENT_HARNESS_DAEMON_IDLE_MS` (a positive integer), or the default; throws CONFIG_INVALID. */
function daemonIdleMs(env = process.env) {
  const raw = env[DAEMON_IDLE_ENV];
  if (raw === undefined || raw.trim() === '') return DEFAULT_IDLE_MS;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new DaemonSettingError('CONFIG_INVALID', `${DAEMON_IDLE_ENV} must be a positive whole number of milliseconds, not ${JSON.stringify(raw)}.`);
  return value;
}

/**
 * True when `args` are a command whose attempt a daemon may run: an attempt command word first, no `--pty` (the
 * terminal is the command's own), and not all three standard streams a terminal (then the engine may be given the
 * terminal itself: live passthrough).
 */
function runsInDaemon(args, stdio = process) {
  if (!ATTEMPT_COMMANDS.includes(args[0]) || args.includes('--pty')) return false;
  return !(stdio.stdin.isTTY && stdio.stdout.isTTY && stdio.stderr.isTTY);
}

/** The directory of this user's daemons. */
function daemonDirectory(env = process.env) {
  if (env[DAEMON_DIR_ENV]) return path.resolve(env[DAEMON_DIR_ENV]);
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && path.isAbsolute(runtime)) return path.join(runtime, 'agent-harness');
  return path.join('/tmp', `agent-harness-${process.getuid()}`);
}

/**
 * Makes the daemon directory if needed and checks that it is this user's alone: a real directory, owned by this
 * uid, no access for group or others. Returns null when it is, else why not (the daemon is then not used).
 */
function checkDaemonDirectory(dir) {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = fs.lstatSync(dir);
    if (!stat.isDirectory()) return `${dir} is not a directory`;
    if (stat.uid !== process.getuid()) return `${dir} belongs to uid ${stat.uid}, not ${process.getuid()}`;
    if ((stat.mode & 0o077) !== 0) return `${dir} is open to other users (mode ${(stat.mode & 0o777).toString(8)}); make it 0700`;
    return null;
  } catch (error) {
    return `${dir} cannot be used: ${error.message}`;
  }
}

/** This process's umask, read from /proc (process.umask() would set it), or null. */
function currentUmask() {
  try {
    return /^Umask:\s*([0-7]+)$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
}

/**
 * 128 bits of a non-cryptographic hash of `text` (four 32-bit FNV-1a-style lanes, each with its own seed and a final
 * mix), as 32 hex digits. A daemon's name needs no more: its directory is its user's alone, and whoever could craft
 * a collision could already connect to the daemon. (Loading node:crypto for a SHA-256 costs a command ~2 ms.)
 */
function hash128(text) {
  const lanes = [0x811c9dc5, 0x01000193 ^ 0x5bd1e995, 0x9e3779b9, 0x85ebca6b];
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    for (let lane = 0; lane < 4; lane += 1) lanes[lane] = Math.imul(lanes[lane] ^ code, 0x01000193 + lane * 0x3c6ef372) >>> 0;
  }
  return lanes.map((value, lane) => {
    let h = value ^ (text.length + lane);
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return ((h ^ (h >>> 16)) >>> 0).toString(16).padStart(8, '0');
  }).join('');
}

/**
 * A file's identity in a daemon's name: inode, size and mtime in whole seconds (a rebuild or an upgrade writes a new
 * file), or 'missing'. bin/daemon-client.pl reads the same three numbers with Perl's `stat`.
 */
function fileStamp(file) {
  try {
    const stat = fs.statSync(file, { bigint: true });
    return `${stat.ino}:${stat.size}:${stat.mtimeNs / 1_000_000_000n}`;
  } catch {
    return 'missing';
  }
}

/**
 * A daemon's name: a hash of everything an attempt reads from the process that runs it (the environment, the
 * working directory, the umask, Node's binary and flags) and of `codeId` (which build of the harness). The Perl
 * client (bin/daemon-client.pl) computes the same from the same inputs: keep the two alike (a test compares them).
 */
function daemonKey(codeId, env = process.env, cwd = process.cwd()) {
  // Not `_`, which bash sets to the program it runs (`time agent-harness …`): nothing of the harness reads it, and an
  // engine's environment is an allowlist.
  const entries = Object.entries(env).filter(([name, value]) => value !== undefined && name !== '_').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return hash128(JSON.stringify([PROTOCOL, codeId, fileStamp(process.execPath), process.execArgv, cwd, currentUmask(), entries]));
}

/** The socket of the daemon named `key` in `dir`. */
function socketPathFor(dir, key) {
  return path.join(dir, `${key}.sock`);
}

/** The log beside a daemon's socket: its standard output and error. */
function logPathFor(socketPath) {
  return socketPath.replace(/\.sock$/, '.log');
}

/** One frame. */
function encodeFrame(type, payload) {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload));
  const header = Buffer.allocUnsafe(5);
  header[0] = type;
  header.writeUInt32BE(body.length, 1);
  return Buffer.concat([header, body]);
}

/** Splits a byte stream into frames: `push(chunk)` returns the whole frames it completed, as `{ type, payload }`. */
class FrameReader {
  constructor() {
    this.pending = Buffer.alloc(0);
  }

  push(chunk) {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames = [];
    while (this.pending.length >= 5) {
      const length = this.pending.readUInt32BE(1);
      if (this.pending.length < 5 + length) break;
      frames.push({ type: this.pending[0], payload: this.pending.subarray(5, 5 + length) });
      this.pending = this.pending.subarray(5 + length);
    }
    return frames;
  }
}

/** What relay() resolves when the daemon closed the connection without a word: it may be tried again. */
const UNANSWERED = Symbol('unanswered');

/** Connects to a daemon's socket; rejects when nothing listens there. */
function connect(socketPath) {
  return new Promise((resolve, reject) => {
    const socket = require('node:net').connect(socketPath);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** The last lines of a daemon's log, for an error message. */
function logTail(file) {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-5).join(' | ');
  } catch {
    return '';
  }
}

/**
 * `daemon serve` of `key` at `socketPath`, started detached: its own session, no terminal, its output appended to
 * `<key>.log` (two commands may start the same daemon at once, and the one that finds the other listening ends).
 * With `readyPipe`, its descriptor 3 is a pipe on which it says `ready` once it listens.
 */
function spawnDaemon(bin, socketPath, key, readyPipe) {
  const log = fs.openSync(logPathFor(socketPath), 'a', 0o600);
  try {
    // Loaded only here: a command that finds its daemon running never needs it.
    const { spawn } = require('node:child_process');
    return spawn(process.execPath, [...process.execArgv, bin, 'daemon', 'serve', '--socket', socketPath, '--key', key, ...(readyPipe ? ['--ready-fd', '3'] : [])], {
      detached: true,
      stdio: ['ignore', log, log, ...(readyPipe ? ['pipe'] : [])],
      env: process.env,
      cwd: process.cwd(),
    });
  } finally {
    fs.closeSync(log);
  }
}

/**
 * Starts the daemon `key` (spawnDaemon) and resolves once it listens, or once it finds another daemon listening at
 * its socket (two commands started it at once).
 */
function startDaemon(bin, dir, key) {
  const logFile = logPathFor(socketPathFor(dir, key));
  const child = spawnDaemon(bin, socketPathFor(dir, key), key, true);
  return new Promise((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(new Error(`the daemon did not listen within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    const finish = (error) => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdio[3].destroy();
      child.unref();
      if (error) reject(error);
      else resolve(child.pid);
    };
    child.once('error', (error) => finish(error));
    child.once('exit', (code, signal) => finish(new Error(`the daemon exited (${signal ?? code}) before it listened${logTail(logFile) ? `: ${logTail(logFile)}` : ''}`)));
    child.stdio[3].on('data', (chunk) => {
      said += chunk;
      if (said.includes('\n')) finish(said.startsWith('ready') ? null : new Error(`the daemon said ${JSON.stringify(said.trim())}`));
    });
  });
}

/** The file that says a command is starting the daemon at `socketPath` in the background; it goes once it listens. */
function startingPathFor(socketPath) {
  return socketPath.replace(/\.sock$/, '.starting');
}

/**
 * How many daemons of `dir` listen or are being started, other than `key`'s: a socket counts when something accepts
 * a connection there (a daemon killed with -9 leaves its socket file), a `.starting` mark when it is younger than
 * START_TIMEOUT_MS. Sockets are tried only when there are enough of them to matter.
 */
async function daemonsInDirectory(dir, key) {
  const names = fs.readdirSync(dir).filter((name) => !name.startsWith(key));
  const starting = names.filter((name) => name.endsWith('.starting')).filter((name) => {
    try {
      return Date.now() - fs.statSync(path.join(dir, name)).mtimeMs < START_TIMEOUT_MS;
    } catch {
      return false;
    }
  }).length;
  const sockets = names.filter((name) => name.endsWith('.sock'));
  if (starting + sockets.length < DEFAULT_MAX_DAEMONS) return starting + sockets.length;
  const live = await Promise.all(sockets.map((name) => connect(path.join(dir, name)).then((socket) => (socket.destroy(), true), () => false)));
  return starting + live.filter(Boolean).length;
}

/**
 * Starts the daemon `key` for the commands that follow this one, which ran its attempt itself (spawnDaemon), not
 * waited for. One command at a time starts a given daemon:
 * the one that creates `<key>.starting`; a marker older than START_TIMEOUT_MS is a start that failed, taken over.
 * None is started where DEFAULT_MAX_DAEMONS others run or start. Resolves the daemon's pid, or null when another
 * command is starting it, the directory has its share of daemons, or it could not be started.
 */
async function startDaemonInBackground(bin, dir, key) {
  if ((await daemonsInDirectory(dir, key)) >= DEFAULT_MAX_DAEMONS) return null;
  const socketPath = socketPathFor(dir, key);
  const marker = startingPathFor(socketPath);
  try {
    fs.writeFileSync(marker, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if (error.code !== 'EEXIST') return null;
    try {
      if (Date.now() - fs.statSync(marker).mtimeMs < START_TIMEOUT_MS) return null;
      fs.writeFileSync(marker, `${process.pid}\n`, { mode: 0o600 });
    } catch {
      return null;
    }
  }
  try {
    const child = spawnDaemon(bin, socketPath, key, false);
    child.once('error', () => fs.rmSync(marker, { force: true }));
    child.unref();
    return child.pid ?? null;
  } catch {
    fs.rmSync(marker, { force: true });
    return null;
  }
}

/**
 * Sends the attempt command to the daemon on `socket` and relays what it answers to this process's output;
 * standard input is not read. SIGINT and SIGTERM are passed on (the daemon stops the engine and seals the audit, as
 * the command itself does). Resolves the exit status, or null when the daemon turned the command down before it
 * began it (the command then runs in its own process), or UNANSWERED when it closed the connection unanswered.
 */
function relay(socket, request, stderr = process.stderr) {
  return new Promise((resolve) => {
    const reader = new FrameReader();
    let accepted = null;
    let status = null;
    let refusal = null;
    const onSignal = (signal) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify({ signal })}\n`);
    };
    // A reader that went away (`… | head`) is not the attempt's end: what is left is dropped, as the command itself
    // does, and the attempt finishes and is sealed.
    const closed = new Set();
    for (const stream of [process.stdout, stderr]) {
      stream.on('error', (error) => {
        if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
        closed.add(stream);
      });
    }
    const write = (stream, payload) => {
      if (closed.has(stream)) return;
      if (!stream.write(payload)) {
        socket.pause();
        stream.once('drain', () => socket.resume());
      }
    };
    socket.on('data', (chunk) => {
      for (const { type, payload } of reader.push(chunk)) {
        if (type === FRAME.stdout) write(process.stdout, payload);
        else if (type === FRAME.stderr) write(stderr, payload);
        else if (type === FRAME.accepted) {
          accepted = JSON.parse(payload.toString('utf8'));
          process.on('SIGINT', onSignal);
          process.on('SIGTERM', onSignal);
        } else if (type === FRAME.refused) refusal = JSON.parse(payload.toString('utf8'));
        else if (type === FRAME.exit) status = JSON.parse(payload.toString('utf8')).status;
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      if (status !== null) return resolve(status);
      if (accepted === null) {
        // A daemon of a checkout whose sources changed since it started: the command runs the new code itself.
        if (refusal?.stale) return resolve(null);
        // Closed unanswered: a daemon that stopped (its idle time ran out) as the command connected. Nothing began.
        if (refusal === null) return resolve(UNANSWERED);
        stderr.write(`agent-harness: warning DAEMON_UNAVAILABLE: the daemon turned the command down (${refusal?.reason ?? 'it closed the connection first'}); running it in this process\n`);
        return resolve(null);
      }
      stderr.write(`agent-harness: error DAEMON_LOST: the daemon (pid ${accepted.pid}) ended before the attempt finished; its audit is sealed by the next \`agent-harness runs\`.\n  hint: ${HINTS.DAEMON_LOST}\n`);
      return resolve(1);
    });
    socket.write(`${JSON.stringify(request)}\n`);
  });
}

/**
 * Runs the command `args` in the daemon of this environment and build (`codeId`). Resolves `{ status }`, its exit
 * status, or `{ status: null, startDaemon }` when the caller is to run the command itself: no daemon could take it
 * (said on stderr as a warning when AGENT_HARNESS_DAEMON=on asked for one), or, the daemon being on by default, none
 * was listening yet. Asked for, the daemon is started and the command waits for it; by default the command does not
 * wait: it runs its attempt itself and then calls `startDaemon`, which starts one for the commands that follow.
 * `bin` is the command's entry point, which the daemon is started with.
 */
async function runThroughDaemon({ args, bin, codeId, stderr = process.stderr }) {
  // On by default (AGENT_HARNESS_DAEMON unset): a daemon that cannot be had is not a warning (`doctor` says why),
  // and a terminal is told when one starts, since it outlives the command.
  const byDefault = daemonByDefault();
  const fallback = (reason) => {
    if (!byDefault) stderr.write(`agent-harness: warning DAEMON_UNAVAILABLE: ${reason}; running the attempt in this process\n`);
    return { status: null, startDaemon: null };
  };
  const dir = daemonDirectory();
  const unusable = checkDaemonDirectory(dir);
  if (unusable) return fallback(unusable);
  const key = daemonKey(codeId);
  const socketPath = socketPathFor(dir, key);
  if (socketPath.length > MAX_SOCKET_PATH) return fallback(`the daemon's socket path would be longer than ${MAX_SOCKET_PATH} bytes (${socketPath}); set ${DAEMON_DIR_ENV} to a shorter directory`);
  // Twice at most: a daemon that ends as the command connects (its idle time ran out) closes it unanswered.
  for (let tries = 0; tries < 2; tries += 1) {
    let socket = await connect(socketPath).catch(() => null);
    if (socket === null && byDefault) {
      const startDaemon = async () => {
        const pid = await startDaemonInBackground(bin, dir, key);
        if (pid !== null && stderr.isTTY) stderr.write(`agent-harness: started an attempt daemon (pid ${pid}) for the next commands of this environment; it ends after ${Math.round(daemonIdleMs() / 1000)} s without one (\`agent-harness daemon stop\`; ${DAEMON_ENV}=off runs each attempt in its command)\n`);
      };
      return { status: null, startDaemon };
    }
    if (socket === null) {
      try {
        await startDaemon(bin, dir, key);
        socket = await connect(socketPath);
      } catch (error) {
        return fallback(`no daemon could be started (${error.message})`);
      }
    }
    const status = await relay(socket, { v: PROTOCOL, key, argv: args }, stderr);
    if (status === null) return { status: null, startDaemon: null };
    if (status !== UNANSWERED) return { status, startDaemon: null };
  }
  return fallback('the daemon closed the connection unanswered, twice');
}

module.exports = {
  ATTEMPT_COMMANDS,
  CI_VARIABLES,
  DEFAULT_MAX_DAEMONS,
  DAEMON_DIR_ENV,
  DAEMON_ENV,
  DAEMON_IDLE_ENV,
  DEFAULT_IDLE_MS,
  DaemonSettingError,
  FRAME,
  FrameReader,
  HINTS,
  MAX_REQUEST_BYTES,
  PROTOCOL,
  checkDaemonDirectory,
  ciVariable,
  connect,
  daemonByDefault,
  daemonDirectory,
  daemonEnabled,
  daemonIdleMs,
  daemonKey,
  encodeFrame,
  fileStamp,
  logPathFor,
  runThroughDaemon,
  runsInDaemon,
  socketPathFor,
  startDaemonInBackground,
  startingPathFor,
};
