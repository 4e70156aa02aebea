// The first process inside an attempt's namespaces (started by `unshare --fork --pid --kill-child`, so it is
// PID 1 there). Plain CommonJS with nothing beyond Node's own modules, so it starts fast (no ES-module loader:
// ~4 ms less) and runs the same from a checkout and from dist. It:
//   1. brings the loopback interface of the fresh network namespace up (`ip link set lo up`),
//   2. listens on 127.0.0.1:<port> for each forwarded port and carries every connection to the harness (the model
//      server lives outside the namespace): over the model channel it inherited, or to a Unix socket by path,
//   3. holds a "lifeline" connection to the harness: when the harness dies, the kernel closes it and this
//      process exits, which ends every process of the namespace,
//   4. when the harness sends a mount plan ("mounts" line, before the launch), builds the agent's filesystem and
//      pivots into it (namespace-mounts.cjs), after its sockets are connected, and reports the outcome: with every
//      socket passed as a descriptor (nothing to connect by path, which the pivot would hide), the setup begins as
//      soon as the plan is read, which is at once when the harness wrote it while this process started,
//   5. starts the engine with the inherited stdio (in a nested user namespace when contained) and exits
//      when it does, reporting the exact exit over the lifeline (as PID 1 it cannot die of the engine's signal, so
//      it exits 128+n and says which signal).
// It sets up and then waits for the engine command on the lifeline (below): the harness starts it while it still
// writes the engine's config, so this process's start-up (a Node start, ~40 ms) is not added to the attempt. Steps 1-2
// (the network) and step 4 (the filesystem) run side by side: each waits on processes of its own (`ip`, `mount`).
// A forward's port may be 0 on the command line: the init was started before the model server listened (the CLI
// starts it first thing), and a "ports <port>..." line on the lifeline gives them before anything listens.
// It never writes to stdout or stderr: those carry the engine's stream. Signals are not forwarded: the harness
// signals the whole process group (the engine is in it), and PID 1 ignores signals it has no handler for.
//
// argv: node namespace-init.cjs <lifeline> <token> <loopback: "-" or the path of `ip`> <forward count>
//       [<port> <channel>]...
// The lifeline and each channel are "fd:N", a descriptor the harness passed, or a Unix socket's path, connected
// once at the start. A forward carries every connection to its port over its channel, framed (model-channel.cjs).
// Messages carry no JSON on the way in (strings as hex of their UTF-8); the reports are JSON lines.
// The first line on the lifeline, and on a channel connected by path, is "hello <token>": the harness takes no
// other connection for the init's.
// launch: "launch <file> <cwd> <arg count> <arg>... <env count> <NAME=value>...\n", every string as hex of its UTF-8;
// a "mounts" line may come first (namespace-mounts.cjs).
// ports: "ports <port>...\n", one per forward, in order (only when the command line gave them as 0).
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const { constants } = require('node:os');
const { ModelChannel } = require('./model-channel.cjs');
const mounts = require('./namespace-mounts.cjs');

const [lifelineSpec, token, loopback, forwardCount, ...rest] = process.argv.slice(2);
const forwards = [];
for (let i = 0; i < Number(forwardCount); i++) forwards.push({ port: Number(rest.shift()), socket: rest.shift() });

/** "fd:N": the descriptor the harness passed (libuv keeps it from the engine: close-on-exec), else null. */
function passedFd(spec) {
  const match = /^fd:(\d+)$/.exec(spec);
  return match ? Number(match[1]) : null;
}

const lifelineFd = passedFd(lifelineSpec);
// Before anything is spawned: the setup's tools are the first processes this init starts.
closeInherited();
const lifeline =
  lifelineFd === null ? net.connect(lifelineSpec) : new net.Socket({ fd: lifelineFd, readable: true, writable: true });
/** Every socket passed as a descriptor: nothing is connected by a path that the new root's pivot would hide. */
const passedOnly = lifelineFd !== null && forwards.every((forward) => passedFd(forward.socket) !== null);
/** The filesystem's setup, once begun (see {@link beginContain}). */
let containing = null;
let finished = false;
/** The text after the last newline so far: a line's first parts, joined once its newline comes. */
let partial = [];
let launchWaiter = null;
const launches = [];
/** The ports line's ports, once it came (forwards given as port 0 wait for it). */
let ports = null;
let portsWaiter = null;
lifeline.setEncoding('utf8');
lifeline.on('data', onText);
if (lifelineFd !== null) readSent(lifelineFd);

/** Takes in what came on the lifeline: messages, one a line. */
function onText(text) {
  // Each chunk is searched once: a launch line can be megabytes (a prompt in argv), and scanning all that came so far
  // for each chunk was quadratic (a 10 MB prompt took ten seconds to fail).
  let start = 0;
  for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', start)) {
    partial.push(text.slice(start, newline));
    const line = partial.join('');
    partial = [];
    start = newline + 1;
    if (line.startsWith('ports ')) {
      ports = line.split(' ').slice(1).map(Number);
      portsWaiter?.();
      continue;
    }
    const message = parseLaunch(line) ?? mounts.parseMounts(line);
    if (message?.type === 'mounts' && passedOnly) beginContain(message);
    if (message) launches.push(message);
  }
  if (start < text.length) partial.push(text.slice(start));
  if (launches.length > 0 && launchWaiter) {
    const waiter = launchWaiter;
    launchWaiter = null;
    waiter(launches.shift());
  }
}

/**
 * Reads what the harness has sent on the passed lifeline so far, at once, before the rest of the start-up: a mount
 * plan written while this process started begins its setup now, beside that start-up, not after it. Only when the
 * descriptor is non-blocking (the socket made it so; its flags in /proc/self/fdinfo say), so that this never waits:
 * EAGAIN ends it, and the rest comes as the socket's data.
 */
function readSent(fd) {
  try {
    const flags = /^flags:\s*([0-7]+)/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    // O_NONBLOCK is 04000 on every architecture Node runs on.
    if (!flags || (parseInt(flags[1], 8) & 0o4000) === 0) return;
  } catch {
    return;
  }
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    let read;
    try {
      read = fs.readSync(fd, buffer, 0, buffer.length, null);
    } catch {
      return;
    }
    // The end: the socket sees it too.
    if (read === 0) return;
    onText(buffer.toString('utf8', 0, read));
  }
}

/**
 * Begins the filesystem's setup (namespace-mounts.cjs) once; its outcome, which the launch waits for. It runs beside
 * the network's setup and the rest of the start-up.
 */
function beginContain(plan) {
  if (!containing) {
    containing = mounts.contain(plan);
    containing.catch(() => undefined);
  }
  return containing;
}

/** A launch line's command, or null for any other line. */
function parseLaunch(line) {
  const fields = line.split(' ');
  if (fields.shift() !== 'launch') return null;
  const text = () => mounts.unhex(fields.shift());
  const list = () => Array.from({ length: Number(fields.shift() ?? 0) }, text);
  const launchFile = text();
  const cwd = text();
  const launchArgs = list();
  const env = {};
  for (const entry of list()) {
    const equals = entry.indexOf('=');
    if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return { type: 'launch', file: launchFile, args: launchArgs, env, cwd };
}

/** The harness's next message: a mount plan (first, if any) or the engine command. */
function nextLaunch() {
  if (launches.length > 0) return Promise.resolve(launches.shift());
  return new Promise((resolve) => {
    launchWaiter = resolve;
  });
}

function report(message) {
  if (!lifeline.destroyed) lifeline.write(`${JSON.stringify(message)}\n`);
}

function finish(code) {
  if (finished) return;
  finished = true;
  lifeline.end(() => process.exit(code));
  setTimeout(() => process.exit(code), 500).unref();
}

lifeline.on('error', () => process.exit(137));
lifeline.on('close', () => {
  if (!finished) process.exit(137);
});

function fail(stage, error) {
  report({
    type: 'error',
    stage,
    message: error instanceof Error ? error.message : String(error),
    code: error?.code ?? null,
  });
  finish(126);
}

/** The forwards' ports: from the command line, or (any given as 0) from the ports line, once it comes. */
async function forwardPorts() {
  if (forwards.every((forward) => forward.port > 0)) return forwards.map((forward) => forward.port);
  if (!ports) await new Promise((resolve) => (portsWaiter = resolve));
  if (ports.length !== forwards.length || ports.some((port) => !(port > 0 && port < 65536)))
    throw new Error(`bad ports line for ${forwards.length} forwards: ${ports.join(' ')}`);
  return ports;
}

/** The network: the loopback up, then the forwards listening on `channels`; rejects with the stage that failed. */
async function setUpNetwork(channels) {
  if (loopback !== '-') {
    const why = await mounts.runTool(loopback, ['link', 'set', 'lo', 'up']);
    if (why !== null) throw Object.assign(new Error(`${loopback} link set lo up: ${why}`), { stage: 'loopback' });
  }
  try {
    const given = await forwardPorts();
    for (const [i, { channel }] of channels.entries()) await listen(channel, given[i]);
  } catch (error) {
    throw Object.assign(error instanceof Error ? error : new Error(String(error)), { stage: 'forward' });
  }
}

/**
 * A forward's channel to the harness, opened at once: one given by path is connected before any mount can hide the
 * path. The engine's connections are streams over it; the harness carries each to the model server.
 */
function openChannel(forward) {
  const fd = passedFd(forward.socket);
  const socket = fd === null ? net.connect(forward.socket) : new net.Socket({ fd, readable: true, writable: true });
  if (fd === null) socket.write(`hello ${token}\n`);
  return { socket, channel: new ModelChannel(socket, { onEnd: () => process.exit(137) }) };
}

/** Listens on 127.0.0.1:`port` (and ::1 where it can), each connection carried over `channel`. */
async function listen(channel, port) {
  // No Nagle delay on the engine's TCP side: a streamed reply is many small writes. Half-open: the engine may end
  // its side while the reply still comes.
  const server = net.createServer({ noDelay: true, allowHalfOpen: true }, (inbound) => channel.attach(inbound));
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  // The same port on ::1 where the namespace's loopback has it (a `localhost` URL may resolve there): best effort.
  const v6 = net.createServer({ noDelay: true, allowHalfOpen: true }, (inbound) => channel.attach(inbound));
  await new Promise((resolve) => {
    v6.once('error', resolve);
    v6.listen(port, '::1', resolve);
  });
}

/**
 * Closes every descriptor above stdio that the engine would inherit and this init does not use: they came from
 * whatever started the harness (a CI runner's, a terminal's). Node's own are close-on-exec; an inherited one is not
 * (its flags in /proc/self/fdinfo say so), nor are the lifeline's and the channel's, which Node keeps from the engine.
 */
function closeInherited() {
  const own = new Set([lifelineFd, ...forwards.map((forward) => passedFd(forward.socket))]);
  let fds;
  try {
    fds = fs.readdirSync('/proc/self/fd').map(Number);
  } catch {
    return;
  }
  for (const fd of fds) {
    if (fd <= 2 || own.has(fd)) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      // O_CLOEXEC is 02000000 on every architecture Node runs on.
      if (flags && (parseInt(flags[1], 8) & 0o2000000) === 0) fs.closeSync(fd);
    } catch {
      // gone meanwhile (the listing's own descriptor)
    }
  }
}

async function main() {
  if (lifelineFd === null) {
    await new Promise((resolve, reject) => {
      lifeline.once('connect', resolve);
      lifeline.once('error', reject);
    });
  }
  lifeline.write(`hello ${token}\n`);
  const channels = forwards.map(openChannel);
  await Promise.all(
    channels
      .filter(({ socket }) => socket.connecting)
      .map(({ socket }) => new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject))),
  );
  // The network is set up while the filesystem is (below): the engine starts once both are.
  const network = setUpNetwork(channels);
  network.catch(() => undefined);
  let launch = await nextLaunch();
  let contained = null;
  if (launch.type !== 'launch') {
    const plan = launch;
    // Fails closed: a plan that cannot be set up ends the attempt before the engine exists, never runs it on the
    // host's filesystem.
    try {
      await beginContain(plan);
      contained = plan;
      report({ type: 'filesystem', contained: true });
    } catch (error) {
      report({ type: 'filesystem', contained: false, message: error instanceof Error ? error.message : String(error) });
      return fail('filesystem', error);
    }
    launch = await nextLaunch();
  }
  try {
    await network;
  } catch (error) {
    return fail(error.stage ?? 'forward', error);
  }
  const command = contained ? mounts.launchArgs(contained.tools.unshare, launch.file, launch.args) : launch;
  const child = spawn(command.file, command.args, { stdio: 'inherit', env: launch.env, cwd: launch.cwd });
  child.once('error', (error) => fail('spawn', error));
  child.once('exit', (code, signal) => {
    report({ type: 'exit', code, signal });
    finish(code ?? 128 + (constants.signals[signal] ?? 0));
  });
  if (child.pid !== undefined) report({ type: 'started', pid: child.pid });
}

main().catch((error) => fail('start', error));
