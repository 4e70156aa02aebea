// The control-surface probe (tests/engine/control-surface.engine.test.ts): run by an agent's shell inside an attempt's
// namespaces as `node control-probe.cjs`, it looks for every way the agent could reach the harness and writes what it
// found to `control-surface.json` in its working directory (and a one-line summary to stdout). Plain CommonJS with
// Node's own modules only. It connects to loopback and to Unix sockets only: nothing leaves the machine.
//
// `node control-probe.cjs wait` instead waits (up to 8 s) for the report of a probe started before, and prints its
// summary: an engine that stops waiting for a command after a while (codex's exec_command returns after 10 s and
// leaves the command running) is scripted to call it until the report is there.
//
// Its settings come from `control-probe.json` next to it (written by the test):
//   { modelPort, hostUid, roots: [directories to search for sockets, besides /tmp, /var/tmp, /run, /dev/shm,
//     HOME and TMPDIR], maxEntries, fullScan (default true: every TCP port; false: see portsToTry) }
//
// What it reports:
//   tcp        every port of 127.0.0.1 and ::1 (or those portsToTry names) that accepts a connection (a short timeout; a port that timed out is
//              tried again alone), how the others ended (by error code), and the listening sockets of this network
//              namespace from /proc/net/tcp{,6} with the process holding each
//   unix       every socket file found by walking the roots (symlinks not followed, the walk bounded), and every
//              socket of this network namespace in /proc/net/unix (abstract ones included): whether it accepts a
//              connection, and what it answers to the attempt daemon's status request (the handshake of the
//              removed daemon); the directories the daemon and the namespace inits used
//   env        the AGENT_HARNESS_* variables, and every endpoint any variable names (a URL, host:port, a socket or
//              FIFO path)
//   processes  every process this PID namespace shows, with its parent and command line; the namespaces' ids
//   http       what the model port answers to the harness's routes and to control-like requests
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');

const settings = JSON.parse(fs.readFileSync(path.join(__dirname, 'control-probe.json'), 'utf8'));
const CONNECT_TIMEOUT_MS = 1500;
const TCP_CONCURRENCY = 512;
/** What the removed attempt daemon took as a control request (one JSON line), answered with a reply frame. */
const DAEMON_STATUS_REQUEST = '{"v":1,"control":"status"}\n';
/** How long a Unix socket has to answer the status request. */
const ANSWER_WAIT_MS = 750;
/** The report's file, in the working directory. */
const REPORT = 'control-surface.json';
/** How long a socket of the harness's naming that accepted may take to go (a concurrent attempt's init socket). */
const GONE_WAIT_MS = 5000;
/** A directory or socket of the harness's naming: a namespace init's (`ah-ns-*`) or the removed daemon's. */
const HARNESS_NAMED = /\/(ah-ns-[^/]*|agent-harness-\d+|agent-harness)(\/|$)/;

/** Runs `worker` over `items`, at most `limit` at a time. */
async function pool(items, limit, worker) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++];
      await worker(item);
    }
  });
  await Promise.all(lanes);
}

/** How one TCP connect ended: 'open', 'self' (a connect to its own ephemeral port), or an error code. */
function tryTcp(host, port, timeoutMs = CONNECT_TIMEOUT_MS) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (outcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done('ETIMEDOUT'), timeoutMs);
    socket.once('connect', () =>
      done(socket.localPort === port && socket.localAddress === socket.remoteAddress ? 'self' : 'open'),
    );
    socket.once('error', (error) => done(error.code || 'error'));
  });
}

/**
 * Tries every port of `host`; the open ones, and how many connects ended with each other outcome. A port whose
 * connect timed out is tried once more, alone and with a long timeout: on a loaded machine the timer can fire before
 * the refusal that had already come is read.
 */
async function scanHost(host, ports) {
  const open = [];
  const outcomes = {};
  const timedOut = [];
  const count = (port, outcome) => {
    if (outcome === 'open') open.push(port);
    else outcomes[outcome] = (outcomes[outcome] || 0) + 1;
  };
  await pool(ports, TCP_CONCURRENCY, async (port) => {
    const outcome = await tryTcp(host, port);
    if (outcome === 'ETIMEDOUT') timedOut.push(port);
    else count(port, outcome);
  });
  for (const port of timedOut) count(port, await tryTcp(host, port, 10 * CONNECT_TIMEOUT_MS));
  return { host, open: open.sort((a, b) => a - b), outcomes, retried: timedOut.length };
}

/**
 * The ports to try on each loopback. `fullScan` (the default): all 65,535, the proof that nothing the listener table
 * misses accepts a connection (some 130,000 connects, seconds of CPU). Otherwise the privileged ports, the model port
 * and every port the namespace's listener table names: enough to see that what listens is what the table says.
 */
function portsToTry(listeners) {
  if (settings.fullScan !== false) return Array.from({ length: 65535 }, (_, i) => i + 1);
  const ports = new Set(Array.from({ length: 1024 }, (_, i) => i + 1));
  ports.add(settings.modelPort);
  for (const listener of listeners) ports.add(listener.port);
  return [...ports].sort((a, b) => a - b);
}

/** Socket inode → { pid, cmdline } of a process holding it, for every process this PID namespace shows. */
function socketOwners() {
  const owners = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds = [];
    try {
      fds = fs.readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${entry}/fd/${fd}`));
        if (match && !owners.has(match[1])) owners.set(match[1], { pid: Number(entry), cmdline: cmdline(entry) });
      } catch {
        // closed meanwhile
      }
    }
  }
  return owners;
}

/** The listening TCP sockets of this network namespace (/proc/net/tcp and tcp6, state 0A). */
function tcpListeners(owners) {
  const found = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines = [];
    try {
      lines = fs.readFileSync(file, 'utf8').split('\n').slice(1).filter(Boolean);
    } catch {
      continue;
    }
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== '0A') continue;
      const [address, port] = fields[1].split(':');
      const owner = owners.get(fields[9]) || null;
      found.push({
        family: file.endsWith('6') ? 'ipv6' : 'ipv4',
        address,
        port: parseInt(port, 16),
        owner_pid: owner?.pid,
        owner: owner?.cmdline,
      });
    }
  }
  return found.sort((a, b) => a.port - b.port);
}

/** The command line of `pid`, spaces between arguments, cut at 300 characters. */
function cmdline(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 300);
  } catch {
    return null;
  }
}

/** Socket files under `roots` (symlinks not followed), at most `maxEntries` entries read in all. */
function walkSockets(roots, maxEntries) {
  const sockets = new Set();
  const dirsNamed = [];
  const seen = new Set();
  let entries = 0;
  let truncated = false;
  const stack = [];
  for (const root of roots) {
    try {
      const stat = fs.lstatSync(root);
      if (stat.isDirectory()) stack.push(root);
      else if (stat.isSocket()) sockets.add(root);
    } catch {
      // missing root
    }
  }
  while (stack.length > 0) {
    const dir = stack.pop();
    let key;
    try {
      const stat = fs.lstatSync(dir);
      key = `${stat.dev}:${stat.ino}`;
    } catch {
      continue;
    }
    if (seen.has(key)) continue;
    seen.add(key);
    let list;
    try {
      list = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const dirent of list) {
      entries += 1;
      if (entries > maxEntries) {
        truncated = true;
        break;
      }
      const full = path.join(dir, dirent.name);
      if (dirent.isDirectory()) {
        if (HARNESS_NAMED.test(full)) dirsNamed.push(full);
        stack.push(full);
      } else if (dirent.isSocket()) sockets.add(full);
    }
    if (truncated) break;
  }
  return { sockets: [...sockets].sort(), harness_named_dirs: dirsNamed.sort(), entries, truncated };
}

/**
 * Every named socket of this network namespace in /proc/net/unix (paths, and abstract names as "@name"): whether it
 * listens, and the process holding it.
 */
function netUnixSockets(owners) {
  const found = new Map();
  let lines = [];
  try {
    lines = fs.readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1).filter(Boolean);
  } catch {
    return [];
  }
  for (const line of lines) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8) continue;
    const name = fields.slice(7).join(' ');
    const owner = owners.get(fields[6]) || null;
    const listening = (parseInt(fields[3], 16) & 0x10000) !== 0;
    if (!found.has(name) || listening)
      found.set(name, { name, listening, owner_pid: owner?.pid, owner: owner?.cmdline });
  }
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Connects to a Unix socket (a path, or "@name" for an abstract one), sends the daemon's status request, and
 * collects what comes back: { accepted, answer (hex, first 64 bytes), answer_text, error }.
 */
async function tryUnix(name) {
  if (!name.startsWith('@')) return tryUnixAddress(name, name);
  // /proc/net/unix shows every NUL of an abstract name as "@": a name bound with the whole address length (as Node
  // binds one) ends in NULs. Tried with them, then as the text reads.
  const padded = await tryUnixAddress(name, `\0${name.slice(1).replace(/@/g, '\0')}`);
  return padded.accepted ? padded : tryUnixAddress(name, `\0${name.slice(1)}`);
}

/** {@link tryUnix} at one address. */
function tryUnixAddress(name, address) {
  return new Promise((resolve) => {
    const socket = net.connect(address);
    const chunks = [];
    let accepted = false;
    let settled = false;
    const done = (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const answer = Buffer.concat(chunks).subarray(0, 64);
      resolve({
        socket: name,
        accepted,
        answer: answer.toString('hex'),
        answer_text: answer.toString('utf8').replace(/[^\x20-\x7e]/g, '.'),
        error: error || null,
      });
    };
    let timer = setTimeout(() => done('ETIMEDOUT'), CONNECT_TIMEOUT_MS);
    socket.once('connect', () => {
      accepted = true;
      clearTimeout(timer);
      timer = setTimeout(() => done(null), ANSWER_WAIT_MS);
      socket.write(DAEMON_STATUS_REQUEST);
    });
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (Buffer.concat(chunks).length >= 64) done(null);
    });
    socket.once('close', () => done(null));
    socket.once('error', (error) => done(error.code || 'error'));
  });
}

/** Whether `file` (a path) is a socket or a FIFO: something a process could talk to. */
function endpointKind(file) {
  try {
    const stat = fs.statSync(file);
    if (stat.isSocket()) return 'socket';
    if (stat.isFIFO()) return 'fifo';
  } catch {
    // not there
  }
  return null;
}

/** AGENT_HARNESS_* variables (secrets redacted), and every endpoint any variable of the environment names. */
function environment() {
  const harness = {};
  const endpoints = [];
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('AGENT_HARNESS_'))
      harness[name] = /KEY|TOKEN|SECRET/.test(name) ? `<redacted ${value.length} chars>` : value;
    for (const match of value.matchAll(/\b([a-z][a-z0-9+.-]*):\/\/(\[[^\]]+\]|[^/:\s,;]+)(?::(\d+))?/gi)) {
      endpoints.push({
        variable: name,
        kind: 'url',
        scheme: match[1].toLowerCase(),
        host: match[2],
        port: match[3] ? Number(match[3]) : null,
      });
    }
    for (const match of value.matchAll(/(?:^|[\s,;=@])((?:\d{1,3}\.){3}\d{1,3}|localhost|\[::1\]):(\d{1,5})\b/g)) {
      endpoints.push({ variable: name, kind: 'host:port', host: match[1], port: Number(match[2]) });
    }
    for (const part of value.split(/[:;,\s]/)) {
      if (!part.startsWith('/')) continue;
      const kind = endpointKind(part);
      if (kind) endpoints.push({ variable: name, kind, path: part });
    }
  }
  return { harness, endpoints };
}

/** Every process this PID namespace shows: pid, parent, command line. */
function processes() {
  const list = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      list.push({ pid: Number(entry), ppid, cmdline: cmdline(entry) });
    } catch {
      // exited meanwhile
    }
  }
  return list.sort((a, b) => a.pid - b.pid);
}

/** The id of a namespace of this process (`net:[4026…]`), or null. */
function namespaceId(kind) {
  try {
    return fs.readlinkSync(`/proc/self/ns/${kind}`);
  } catch {
    return null;
  }
}

/** One HTTP request to the model port: status and the first 2000 characters of the body. */
function request(method, target, body) {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: settings.modelPort,
        method,
        path: target,
        headers: body ? { 'content-type': 'application/json' } : {},
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          if (text.length < 2000) text += chunk;
        });
        res.on('end', () => resolve({ method, path: target, status: res.statusCode, body: text.slice(0, 2000) }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve({ method, path: target, status: null, body: error.code || error.message }));
    req.end(body);
  });
}

/** The harness's routes and control-like requests a harness might have answered. */
async function httpSurface() {
  const asks = [
    ['GET', '/'],
    ['HEAD', '/'],
    ['GET', '/__harness/requests'],
    ['POST', '/__harness/requests', '{}'],
    ['DELETE', '/__harness/requests'],
    ['POST', '/__harness/script', '{"version":1,"turns":[]}'],
    ['PUT', '/__harness/script', '{"version":1,"turns":[]}'],
    ['POST', '/__harness/attempts', '{"engine":"codex","prompt":"hi"}'],
    ['POST', '/__harness/isolation', '{"mode":"off"}'],
    ['POST', '/__harness/shutdown', '{}'],
    ['GET', '/__harness/status'],
    ['POST', '/control', '{}'],
    ['POST', '/agent-harness/start', '{}'],
    ['POST', '/no-such-route', '{}'],
  ];
  const answers = [];
  for (const [method, target, body] of asks) answers.push(await request(method, target, body));
  return answers;
}

/**
 * Sockets of the harness's naming that accepted a connection: whether each is still there after up to
 * GONE_WAIT_MS (an init's path socket is removed once the init has connected, before its engine starts).
 */
async function stillThere(tries) {
  const named = tries.filter((t) => t.accepted && HARNESS_NAMED.test(t.socket)).map((t) => t.socket);
  const until = Date.now() + GONE_WAIT_MS;
  let left = named.filter((socket) => fs.existsSync(socket));
  while (left.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    left = left.filter((socket) => fs.existsSync(socket));
  }
  return left;
}

/** `wait` mode: up to 8 s for the report of the probe started before. */
async function waitForReport() {
  const until = Date.now() + 8000;
  while (!fs.existsSync(REPORT) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 200));
  process.stdout.write(
    fs.existsSync(REPORT) ? 'control-surface: report written\n' : 'control-surface: probe still running\n',
  );
}

async function main() {
  const started = process.hrtime.bigint();
  const home = process.env.HOME || null;
  const tmp = process.env.TMPDIR || null;
  const roots = [
    ...new Set(
      ['/tmp', '/var/tmp', '/run', '/dev/shm', home, tmp, ...settings.roots]
        .filter(Boolean)
        .map((root) => path.resolve(root)),
    ),
  ];
  const walk = walkSockets(roots, settings.maxEntries);
  const inNamespace = netUnixSockets(socketOwners());
  const candidates = [...new Set([...walk.sockets, ...inNamespace.map((socket) => socket.name)])];
  const unixTries = [];
  await pool(candidates, 32, async (name) => unixTries.push(await tryUnix(name)));
  const harnessSocketsLeft = await stillThere(unixTries);
  const daemonDirs = [
    `/tmp/agent-harness-${settings.hostUid}`,
    `/run/user/${settings.hostUid}/agent-harness`,
    process.env.XDG_RUNTIME_DIR ? path.join(process.env.XDG_RUNTIME_DIR, 'agent-harness') : null,
  ].filter(Boolean);
  const owners = socketOwners();
  const ports = portsToTry(tcpListeners(owners));
  const [v4, v6] = [await scanHost('127.0.0.1', ports), await scanHost('::1', ports)];
  const report = {
    roots,
    tcp: { scans: [v4, v6], listeners: tcpListeners(owners) },
    unix: {
      walk: { entries: walk.entries, truncated: walk.truncated, harness_named_dirs: walk.harness_named_dirs },
      in_namespace: inNamespace,
      tried: unixTries.sort((a, b) => a.socket.localeCompare(b.socket)),
      harness_named_still_there: harnessSocketsLeft,
      daemon_dirs: daemonDirs.map((dir) => ({ dir, exists: fs.existsSync(dir) })),
    },
    env: environment(),
    processes: {
      self: process.pid,
      list: processes(),
      namespaces: { net: namespaceId('net'), pid: namespaceId('pid') },
    },
    http: await httpSurface(),
    probe_ms: Number((process.hrtime.bigint() - started) / 1_000_000n),
  };
  // Whole or not at all: a `wait` call sees the report only once it is complete.
  fs.writeFileSync(`${REPORT}.partial`, `${JSON.stringify(report, null, 2)}\n`);
  fs.renameSync(`${REPORT}.partial`, REPORT);
  const accepted = unixTries.filter((t) => t.accepted).length;
  process.stdout.write(
    `control-surface: open tcp ${JSON.stringify([v4.open, v6.open])}, ${candidates.length} unix sockets (${accepted} accepted), ${report.processes.list.length} processes\n`,
  );
}

(process.argv[2] === 'wait' ? waitForReport() : main()).catch((error) => {
  fs.writeFileSync(REPORT, `${JSON.stringify({ error: String(error?.stack || error) })}\n`);
  process.stdout.write(`control-surface: probe failed: ${error}\n`);
  process.exitCode = 1;
});
