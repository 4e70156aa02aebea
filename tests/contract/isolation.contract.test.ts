/**
 * Containment with stand-in engines (plain processes): the network namespace has only loopback and the model
 * port forwarded in, the PID namespace ends everything an attempt started (timeout, or the harness killed with
 * -9), the engine's own exit is reported, and the fallback is recorded or refused. No packet leaves the machine:
 * the probes read /proc and try a connect only where no route exists.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { NAMESPACE_INIT, openIsolation } from '../../src/runtime/isolation/attempt-isolation.js';
import { startEarlyInit } from '../../src/runtime/isolation/early-init.js';
import { buildMountPlan } from '../../src/runtime/isolation/mount-plan.js';
import { resolveIsolationMode } from '../../src/runtime/isolation/mode.js';
import {
  findNamespaceTools,
  probeNamespaces,
  probeNamespacesAsync,
  type NamespaceSupport,
} from '../../src/runtime/isolation/probe.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { findScriptBinary, runPassthrough } from '../../src/runtime/passthrough.js';
import type { ProcessResult } from '../../src/runtime/process-result.js';
import { runProcess, superviseSplit } from '../../src/runtime/process.js';
import { createRun } from '../../src/runtime/run-store.js';
import { thrownBy } from '../helpers/errors.js';
import {
  NETWORK_PROBE,
  eventually,
  pidsWithMarker,
  uniqueSleepSeconds,
  withGrowingTimeout,
} from '../helpers/processes.js';
import { scaled } from '../helpers/load-scaled.js';

const support = probeNamespaces();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-iso-'));
let server: http.Server;
let modelUrl = '';

beforeAll(async () => {
  // A POST is echoed back as it streams in (the forwarders' test); anything else gets a fixed answer.
  server = http.createServer((req, res) => (req.method === 'POST' ? req.pipe(res) : res.end('scripted model here')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  modelUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fs.writeFileSync(path.join(tmp, 'probe.cjs'), NETWORK_PROBE);
  // The attack that worked while the init connected to the model socket by path for each connection: every path on
  // PID 1's command line that is a socket is moved aside and answered by the agent, and then the engine asks the
  // model.
  fs.writeFileSync(
    path.join(tmp, 'impostor.cjs'),
    `
const fs = require('fs');
const http = require('http');
const argv = fs.readFileSync('/proc/1/cmdline', 'utf8').split('\\0');
const sockets = argv.filter((arg) => { try { return fs.statSync(arg).isSocket(); } catch { return false; } });
Promise.all(sockets.map((socket) => new Promise((resolve) => {
  fs.renameSync(socket, socket + '.aside');
  http.createServer((req, res) => res.end('forged model')).listen(socket, resolve);
}))).then(() => fetch('${modelUrl}')).then((r) => r.text()).then((text) => {
  console.log(JSON.stringify({ replaced: sockets.length, channels: argv.filter((arg) => arg.startsWith('fd:')).length, model: text }));
  process.exit(0);
});`,
  );
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(tmp, { recursive: true, force: true });
});

/**
 * How the init gets the engine command: `wrap` puts it on the init's command line (PTY and `script` attempts);
 * `prestart` starts the init first and sends the command later over the lifeline (split-stream attempts).
 */
type InitStart = 'wrap' | 'prestart';

/** The one init (the Node one); kept as a dimension of the test names. */
type InitKind = 'node';

/** The probe result openIsolation is given. */
const supportFor = (_kind: InitKind): NamespaceSupport => support;

const initKinds: InitKind[] = ['node'];

/** Runs `sh -c script` in the namespaces of a scripted attempt. */
async function runIsolated(
  kind: InitKind,
  via: InitStart,
  script: string,
  options: { timeoutMs?: number; file?: string; args?: string[] } = {},
) {
  const isolation = await openIsolation({ mode: 'require', modelUrl, support: supportFor(kind) });
  try {
    const file = options.file ?? '/bin/sh';
    const args = options.args ?? ['-c', script];
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    const chunks: Buffer[] = [];
    const supervise = {
      onChunk: (_stream: string, chunk: Buffer) => chunks.push(chunk),
      killGraceMs: 500,
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    };
    let result: ProcessResult;
    if (via === 'prestart') {
      isolation.prestart('ignore');
      const child = isolation.launch({ file, args, env, cwd: tmp });
      if (!child) throw new Error('prestart started nothing');
      result = await superviseSplit(child, supervise);
    } else {
      const command = isolation.wrap({ file, args, env, cwd: tmp });
      result = await runProcess({
        file: command.file,
        args: command.args,
        cwd: tmp,
        env: command.env,
        stdin: 'ignore',
        ...supervise,
      });
    }
    return {
      result: await isolation.settle(result),
      output: Buffer.concat(chunks).toString('utf8'),
      record: isolation.record,
    };
  } finally {
    await isolation.close();
  }
}

describe.skipIf(!support.available).each<[InitKind, InitStart]>(
  initKinds.flatMap(
    (kind) =>
      [
        [kind, 'wrap'],
        [kind, 'prestart'],
      ] as [InitKind, InitStart][],
  ),
)(`namespaces (${support.reason ?? 'available'}), %s init via %s`, (kind, via) => {
  it('the engine sees only loopback and no route; a non-loopback connect fails at once; the model port answers', async () => {
    const fetchModel = `node -e "fetch('${modelUrl}').then((r) => r.text()).then((t) => console.log('model: ' + t))"`;
    const { result, output, record } = await runIsolated(
      kind,
      via,
      `node probe.cjs && cat net.json && echo && ${fetchModel}`,
    );
    // No mount plan was sent: the filesystem is the host's.
    expect(record).toEqual({
      mode: 'require',
      network: 'namespace',
      processes: 'pid-namespace',
      reason: null,
      filesystem: 'host',
    });
    expect(result.exitCode, output).toBe(0);
    const seen = JSON.parse(output.split('\n')[0]!);
    expect(seen).toEqual({ interfaces: ['lo'], routes: 0, connect: 'ENETUNREACH' });
    expect(output).toContain('model: scripted model here');
  });

  it('forwards a large streamed exchange both ways, byte for byte, and many connections at once', async () => {
    // 3 MiB up and back on each of 8 connections at once: more than either side's buffers, so both directions
    // wait for each other (backpressure), and the forwarder holds several connections at a time.
    const client = `
const crypto = require('crypto');
const body = crypto.randomBytes(3 * 1024 * 1024);
const want = crypto.createHash('sha256').update(body).digest('hex');
Promise.all(Array.from({ length: 8 }, () => fetch('${modelUrl}', { method: 'POST', body }).then((r) => r.arrayBuffer()).then((b) => crypto.createHash('sha256').update(Buffer.from(b)).digest('hex'))))
  .then((got) => console.log(got.every((h) => h === want) ? 'echo ok ' + got.length : 'echo differs'));`;
    fs.writeFileSync(path.join(tmp, 'echo-client.cjs'), client);
    const { result, output } = await runIsolated(kind, via, 'node echo-client.cjs');
    expect(result.exitCode, output).toBe(0);
    expect(output.trim()).toBe('echo ok 8');
  });

  it('starts the engine with exactly its arguments, environment and directory, whatever characters they hold', async () => {
    const odd = ['', 'two words', 'line\nbreak', 'ünïcödé ✓', 'a=b=c', '"quoted" \\ back', '-'];
    const cwd = fs.mkdtempSync(path.join(tmp, 'cwd with space-'));
    const isolation = await openIsolation({ mode: 'require', modelUrl, support: supportFor(kind) });
    try {
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ODD: 'x y\nz=ü', EMPTY: '' };
      const script =
        'console.log(JSON.stringify({ args: process.argv.slice(1), env: { ODD: process.env.ODD, EMPTY: process.env.EMPTY, HOME: process.env.HOME ?? null }, cwd: process.cwd() }))';
      const chunks: Buffer[] = [];
      const supervise = { onChunk: (_stream: string, chunk: Buffer) => chunks.push(chunk) };
      let result: ProcessResult;
      if (via === 'prestart') {
        isolation.prestart('ignore');
        result = await superviseSplit(
          isolation.launch({ file: process.execPath, args: ['-e', script, ...odd], env, cwd })!,
          supervise,
        );
      } else {
        const command = isolation.wrap({ file: process.execPath, args: ['-e', script, ...odd], env, cwd });
        result = await runProcess({
          file: command.file,
          args: command.args,
          cwd,
          env: command.env,
          stdin: 'ignore',
          ...supervise,
        });
      }
      result = await isolation.settle(result);
      const output = Buffer.concat(chunks).toString('utf8');
      expect(result.exitCode, output).toBe(0);
      expect(JSON.parse(output)).toEqual({ args: odd, env: { ODD: env.ODD, EMPTY: '', HOME: null }, cwd });
    } finally {
      await isolation.close();
    }
  });

  it.runIf(via === 'wrap')(
    'a process of the attempt that connects to the lifeline gets nothing from it and cannot forge a report',
    async () => {
      // The agent can read the lifeline's path and the init's token from its PID 1's command line. The path is gone by
      // the time the engine runs; were it not, it connects, greets, claims a clean exit and a spawn failure, and listens.
      fs.writeFileSync(
        path.join(tmp, 'rogue.cjs'),
        `
const fs = require('fs');
const net = require('net');
const argv = fs.readFileSync('/proc/1/cmdline', 'utf8').split('\\0');
const at = argv.findIndex((arg) => arg.endsWith('life.sock'));
const socket = net.connect(argv[at]);
let got = '';
const done = (how) => { fs.writeFileSync('rogue-${kind}-${via}.json', JSON.stringify({ how, got })); process.exit(3); };
// It even knows the init's token (the argument after the socket): the lifeline is taken by then.
socket.on('connect', () => socket.write('hello ' + argv[at + 1] + '\\n{"type":"exit","code":0,"signal":null}\\n{"type":"error","stage":"spawn","message":"forged","code":"EPERM"}\\n'));
socket.on('data', (chunk) => { got += chunk; });
socket.on('close', () => done('closed'));
socket.on('error', (error) => done('error ' + error.code));
setTimeout(() => done('still open'), ${scaled(3000)});
`,
      );
      const { result, output } = await runIsolated(kind, via, 'node rogue.cjs');
      expect(result, output).toMatchObject({ exitCode: 3, signal: null, spawnError: null });
      const rogue = JSON.parse(fs.readFileSync(path.join(tmp, `rogue-${kind}-${via}.json`), 'utf8')) as {
        how: string;
        got: string;
      };
      expect(rogue.got).toBe('');
      expect(rogue.how).not.toBe('still open');
    },
  );

  it('a connection to the lifeline before the init (another attempt racing it) is refused, and the init still gets its place', async () => {
    const isolation = await openIsolation({ mode: 'require', modelUrl, support: supportFor(kind) });
    try {
      const life = isolation.paths!.lifeline;
      const rogue = net.connect(life);
      let got = '';
      rogue.setEncoding('utf8');
      rogue.on('data', (text: string) => (got += text));
      rogue.on('error', () => undefined);
      const rogueClosed = new Promise<void>((resolve) => rogue.on('close', () => resolve()));
      rogue.write('{"type":"exit","code":0,"signal":null}\n');
      const refused = await Promise.race([
        rogueClosed.then(() => 'closed'),
        new Promise((resolve) => setTimeout(() => resolve('still open'), scaled(5000)).unref()),
      ]);
      expect(refused).toBe('closed');
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
      let result: ProcessResult;
      if (via === 'prestart') {
        isolation.prestart('ignore');
        result = await superviseSplit(
          isolation.launch({ file: '/bin/sh', args: ['-c', 'exit 5'], env, cwd: tmp })!,
          {},
        );
      } else {
        const command = isolation.wrap({ file: '/bin/sh', args: ['-c', 'exit 5'], env, cwd: tmp });
        result = await runProcess({
          file: command.file,
          args: command.args,
          cwd: tmp,
          env: command.env,
          stdin: 'ignore',
        });
      }
      expect(await isolation.settle(result)).toMatchObject({ exitCode: 5, signal: null, spawnError: null });
      expect(got).toBe('');
    } finally {
      await isolation.close();
    }
  });

  it('no process of the attempt can put itself between the engine and the model: the init reaches the harness through descriptors it inherited, or paths gone before the engine starts', async () => {
    // impostor.cjs (written in beforeAll) tries the attack on every socket path on PID 1's command line.
    const { result, output } = await runIsolated(kind, via, 'node impostor.cjs');
    expect(result.exitCode, output).toBe(0);
    expect(JSON.parse(output)).toEqual({
      replaced: 0,
      channels: via === 'prestart' ? 2 : 0,
      model: 'scripted model here',
    });
  });

  it("reports the engine's own exit: a code as is, a signal as the signal (not init's 128+n)", async () => {
    expect((await runIsolated(kind, via, 'exit 3')).result).toMatchObject({
      exitCode: 3,
      signal: null,
      spawnError: null,
    });
    expect((await runIsolated(kind, via, 'kill -TERM $$')).result).toMatchObject({
      exitCode: null,
      signal: 'SIGTERM',
      spawnError: null,
    });
  });

  it('a missing engine is a spawn error, as without namespaces', async () => {
    const { result } = await runIsolated(kind, via, '', { file: path.join(tmp, 'no-such-engine'), args: [] });
    expect(result.spawnError).toMatchObject({ code: 'ENOENT' });
  });

  it("a timeout ends every process of the attempt, a setsid'd one that ignores SIGTERM included", async () => {
    const sleeper = `sleep ${uniqueSleepSeconds()}`;
    const started = path.join(tmp, `sleeper-${kind}-${via}-${process.hrtime.bigint()}`);
    // Until the sleeper had started when the timeout fired (a loaded machine starts processes slowly).
    const { result } = await withGrowingTimeout(
      (timeoutMs) =>
        runIsolated(
          kind,
          via,
          `setsid sh -c "trap '' TERM; : > '${started}'; ${sleeper}" >/dev/null 2>&1 </dev/null & sleep 600`,
          { timeoutMs },
        ),
      () => fs.existsSync(started),
      1500,
      60_000,
    );
    expect(fs.existsSync(started)).toBe(true);
    expect(result.timedOut).toBe(true);
    expect(pidsWithMarker(sleeper)).toEqual([]);
  });

  it('the harness killed with -9 takes every process of the attempt with it (the lifeline closes)', async () => {
    const sleeper = `sleep ${uniqueSleepSeconds()}`;
    const harness = path.join(tmp, 'harness.mts');
    fs.writeFileSync(
      harness,
      `
import { openIsolation } from ${JSON.stringify(path.resolve('src/runtime/isolation/attempt-isolation.ts'))};
import { runProcess } from ${JSON.stringify(path.resolve('src/runtime/process.ts'))};
const isolation = await openIsolation({ mode: 'require', modelUrl: ${JSON.stringify(modelUrl)}, support: ${JSON.stringify(supportFor(kind))} });
const command = isolation.wrap({ file: '/bin/sh', args: ['-c', ${JSON.stringify(`setsid ${sleeper} >/dev/null 2>&1 </dev/null & sleep 60`)}], env: { PATH: process.env.PATH }, cwd: ${JSON.stringify(tmp)} });
await runProcess({ file: command.file, args: command.args, cwd: ${JSON.stringify(tmp)}, env: command.env, stdin: 'ignore' });
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', harness], { stdio: 'ignore' });
    try {
      expect(await eventually(() => pidsWithMarker(sleeper).length > 0, 30_000)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
    expect(await eventually(() => pidsWithMarker(sleeper).length === 0, 10_000)).toBe(true);
  });

  it.runIf(via === 'prestart')(
    'an init prestarted for an attempt that failed before its engine started is gone after close',
    async () => {
      const isolation = await openIsolation({ mode: 'require', modelUrl, support: supportFor(kind) });
      isolation.prestart('ignore');
      // Opened for either way, it made its path sockets; prestarted, it needs them no more.
      expect(fs.existsSync(path.dirname(isolation.paths!.lifeline))).toBe(false);
      // The init's command line carries its token: a marker unique to this attempt.
      const marker = isolation.paths!.token;
      expect(marker).toMatch(/^[0-9a-f]{32}$/);
      expect(await eventually(() => pidsWithMarker(marker).length > 0, 10_000)).toBe(true);
      await isolation.close();
      expect(await eventually(() => pidsWithMarker(marker).length === 0, 10_000)).toBe(true);
      expect(isolation.launch({ file: '/bin/true', args: [], env: {}, cwd: tmp })).toBeNull();
    },
  );
});

/** Runs `run` with TMPDIR (os.tmpdir(), where the isolation makes its directories) set to `dir`, then restores it. */
async function withTmpdir(dir: string, run: () => Promise<void>): Promise<void> {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    await run();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

describe.skipIf(!support.available || !support.filesystem?.available)('the new root', () => {
  it('is the skeleton the harness wrote, read-only at / with a writable /tmp, and nothing of it is left on the host once closed', async () => {
    const scratch = fs.mkdtempSync(path.join(tmp, 'tmpdir-'));
    const workspace = fs.mkdtempSync(path.join(tmp, 'ws-'));
    // Where the isolation makes the new root's host directory.
    await withTmpdir(scratch, async () => {
      const isolation = await openIsolation({ mode: 'require', modelUrl, support, newRootBase: scratch });
      let output = '';
      try {
        isolation.prestart('ignore');
        isolation.contain(
          buildMountPlan({
            workspace,
            readOnlyInWorkspace: [],
            writable: [],
            readOnly: [process.execPath],
            expose: [],
          }),
        );
        const [made] = fs.readdirSync(scratch);
        expect(made).toMatch(/^ah-root-/);
        expect(fs.readdirSync(path.join(scratch, made!)).sort()).toEqual([
          'fstab',
          'fstab-scratch',
          'root',
          'skeleton',
        ]);
        const script = [
          'ls -a /',
          'touch /outside 2>/dev/null && echo WROTE-ROOT',
          'touch /tmp/scratch && echo WROTE-TMP',
          `touch ${workspace}/inside && echo WROTE-WORKSPACE`,
          // Mounts whose mount point is `/` (field 5 of mountinfo).
          'awk \'$5 == "/"\' /proc/self/mountinfo | wc -l',
        ].join('; ');
        const child = isolation.launch({
          file: '/bin/sh',
          args: ['-c', script],
          env: { PATH: '/usr/bin:/bin' },
          cwd: workspace,
        });
        if (!child) throw new Error('prestart started nothing');
        const chunks: Buffer[] = [];
        const result = await isolation.settle(
          await superviseSplit(child, { onChunk: (_stream, chunk) => chunks.push(chunk), killGraceMs: 500 }),
        );
        output = Buffer.concat(chunks).toString('utf8');
        expect(result.exitCode, output).toBe(0);
        expect(await isolation.contained()).toBe(true);
        // The skeleton is the agent's `/` until the close (removing it from the host would detach the namespace's
        // mounts under the engine), and the agent's /tmp is a tmpfs of the namespace: its write is not in there.
        const skeleton = path.join(scratch, made!, 'skeleton');
        expect(fs.existsSync(path.join(skeleton, 'usr'))).toBe(true);
        expect(fs.readdirSync(path.join(skeleton, 'tmp'))).not.toContain('scratch');
      } finally {
        await isolation.close();
      }
      const lines = output.trim().split('\n');
      expect(lines).toEqual(expect.arrayContaining(['usr', 'tmp', 'proc', 'dev', 'WROTE-TMP', 'WROTE-WORKSPACE']));
      // Neither the harness's parts nor the old root, stacked under the new one by `pivot_root . .`, are seen.
      for (const absent of ['WROTE-ROOT', '.old-root', 'skeleton', 'fstab']) expect(lines).not.toContain(absent);
      // One mount at /: the old root is detached.
      expect(lines.at(-1)).toBe('1');
      expect(fs.existsSync(path.join(workspace, 'inside'))).toBe(true);
      expect(await eventually(() => fs.readdirSync(scratch).length === 0, 10_000)).toBe(true);
    });
  });
});

/**
 * Opens an isolation (mode `require`, its new root's parts in `newRootBase`, else the default place), contains an
 * empty plan over `tmp`, calls `contained` (the parts are made, the engine not yet started), runs `/bin/true` in it
 * and closes it.
 */
async function runTrueContained(newRootBase?: string, contained?: () => void): Promise<void> {
  const isolation = await openIsolation({
    mode: 'require',
    modelUrl,
    support,
    ...(newRootBase ? { newRootBase } : {}),
  });
  try {
    isolation.prestart('ignore');
    isolation.contain(
      buildMountPlan({ workspace: tmp, readOnlyInWorkspace: [], writable: [], readOnly: [], expose: [] }),
    );
    contained?.();
    const child = isolation.launch({ file: '/bin/true', args: [], env: {}, cwd: tmp });
    if (!child) throw new Error('prestart started nothing');
    await isolation.settle(await superviseSplit(child, { killGraceMs: 500 }));
  } finally {
    await isolation.close();
  }
}

/** True when /dev/shm is a tmpfs (statfs type TMPFS_MAGIC) this process may write. */
function shmIsWritableTmpfs(): boolean {
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK | fs.constants.X_OK);
    return fs.statfsSync('/dev/shm').type === 0x01021994;
  } catch {
    return false;
  }
}

describe.skipIf(!support.available || !support.filesystem?.available)("the new root's parts", () => {
  it("are made in /dev/shm when it is a writable tmpfs (not on the temp dir's disk), and removed by the close", async ({
    skip,
  }) => {
    if (!shmIsWritableTmpfs()) skip('/dev/shm is not a tmpfs this process may write here: the temp dir is used');
    const scratch = fs.mkdtempSync(path.join(tmp, 'tmpdir-'));
    const ours = () => fs.readdirSync('/dev/shm').filter((name) => name.startsWith(`ah-root-${process.pid}-`));
    const before = ours();
    await withTmpdir(scratch, () =>
      runTrueContained(undefined, () => {
        const made = ours().filter((name) => !before.includes(name));
        expect(made).toHaveLength(1);
        expect(fs.readdirSync(path.join('/dev/shm', made[0]!)).sort()).toEqual([
          'fstab',
          'fstab-scratch',
          'root',
          'skeleton',
        ]);
        expect(fs.readdirSync(scratch).filter((name) => name.startsWith('ah-root-'))).toEqual([]);
      }),
    );
    expect(await eventually(() => ours().every((name) => before.includes(name)), 10_000)).toBe(true);
  });
});

describe.skipIf(!support.available || !support.filesystem?.available)('what a harness killed with -9 left', () => {
  it("is swept by the next attempt's close: a gone owner's directories, only the harness's parts of them; a live owner's stay", async () => {
    const scratch = fs.mkdtempSync(path.join(tmp, 'stale-'));
    const outside = fs.mkdtempSync(path.join(tmp, 'outside-'));
    fs.writeFileSync(path.join(outside, 'keep'), 'not the harness');
    // A harness killed with SIGKILL while its init's socket was there: the socket stays, and its pid is no process's
    // (the child has been reaped).
    const socketDir = path.join(scratch, 'sockets');
    fs.mkdirSync(socketDir);
    const gone = spawnSync(process.execPath, [
      '-e',
      `require('net').createServer().listen(${JSON.stringify(path.join(socketDir, 'life.sock'))}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]).pid!;
    fs.renameSync(socketDir, path.join(scratch, `ah-ns-${gone}-dead03`));
    expect(fs.lstatSync(path.join(scratch, `ah-ns-${gone}-dead03`, 'life.sock')).isSocket()).toBe(true);
    const live = process.ppid;
    const newRoot = (name: string): string => {
      const dir = path.join(scratch, name);
      fs.mkdirSync(path.join(dir, 'root'), { recursive: true });
      fs.mkdirSync(path.join(dir, 'skeleton', 'usr'), { recursive: true });
      fs.symlinkSync(outside, path.join(dir, 'skeleton', 'usr', 'link'));
      fs.writeFileSync(path.join(dir, 'fstab'), '');
      fs.writeFileSync(path.join(dir, 'fstab-scratch'), '');
      return dir;
    };
    newRoot(`ah-root-${gone}-dead01`);
    newRoot(`ah-root-${live}-live01`);
    // Something the harness never makes there: it and the directory stay.
    fs.writeFileSync(path.join(newRoot(`ah-root-${gone}-dead02`), 'notes'), '');
    fs.symlinkSync(outside, path.join(scratch, `ah-root-${gone}-link01`));
    fs.mkdirSync(path.join(scratch, `ah-ns-${live}-live02`));
    await withTmpdir(scratch, async () => {
      await runTrueContained(scratch);
      const left = [
        `ah-ns-${live}-live02`,
        `ah-root-${gone}-dead02`,
        `ah-root-${gone}-link01`,
        `ah-root-${live}-live01`,
      ].sort();
      // The attempt's own directory goes too, in its close.
      await eventually(() => fs.readdirSync(scratch).sort().join() === left.join(), 10_000);
      expect(fs.readdirSync(scratch).sort()).toEqual(left);
      expect(fs.readdirSync(path.join(scratch, `ah-root-${gone}-dead02`))).toEqual(['notes']);
      expect(fs.readdirSync(path.join(scratch, `ah-root-${live}-live01`)).sort()).toEqual([
        'fstab',
        'fstab-scratch',
        'root',
        'skeleton',
      ]);
      expect(fs.readdirSync(outside)).toEqual(['keep']);
    });
  });
});

describe.skipIf(!support.available || !support.filesystem?.available)(
  "an older harness's new root in the temp dir",
  () => {
    it('is swept too when new roots are made elsewhere (/dev/shm)', async () => {
      const scratch = fs.mkdtempSync(path.join(tmp, 'stale-tmpdir-'));
      const elsewhere = fs.mkdtempSync(path.join(tmp, 'roots-'));
      // A pid no process has any more: a child that has exited and been reaped.
      const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
      const old = path.join(scratch, `ah-root-${gone}-old01`);
      fs.mkdirSync(path.join(old, 'root'), { recursive: true });
      fs.mkdirSync(path.join(old, 'skeleton', 'usr'), { recursive: true });
      fs.writeFileSync(path.join(old, 'fstab'), '');
      await withTmpdir(scratch, () => runTrueContained(elsewhere));
      expect(await eventually(() => !fs.existsSync(old), 10_000)).toBe(true);
      // The attempt's own parts were made, and removed, where it was told.
      expect(await eventually(() => fs.readdirSync(elsewhere).length === 0, 10_000)).toBe(true);
    });
  },
);

describe.skipIf(!support.available)("an init started before its attempt (the CLI's start)", () => {
  it('is adopted by a prestarting attempt: the model port comes over its lifeline, and the engine reaches the model', async () => {
    const early = startEarlyInit();
    expect(early).not.toBeNull();
    const isolation = await openIsolation({ mode: 'require', modelUrl, support, prestart: 'ignore', early });
    try {
      const fetchModel = `node -e "fetch('${modelUrl}').then((r) => r.text()).then((t) => console.log('model: ' + t))"`;
      const child = isolation.launch({
        file: '/bin/sh',
        args: ['-c', `tr '\\0' ' ' < /proc/1/cmdline; echo; ${fetchModel}`],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        cwd: tmp,
      });
      expect(child).not.toBeNull();
      const chunks: Buffer[] = [];
      const result = await isolation.settle(
        await superviseSplit(child!, { onChunk: (_stream, chunk) => chunks.push(chunk), killGraceMs: 500 }),
      );
      const output = Buffer.concat(chunks).toString('utf8');
      expect(result.exitCode, output).toBe(0);
      // PID 1 is the early init: its one forward's port was 0 on its command line.
      const initArgv = output.split('\n')[0]!.trim();
      expect(initArgv).toContain(` fd:3 ${early!.token} `);
      expect(initArgv).toMatch(/ 1 0 fd:4$/);
      expect(output).toContain('model: scripted model here');
    } finally {
      await isolation.close();
    }
  });

  it.each([
    ['isolation off', { mode: 'off' as const }],
    ['an init started in a terminal (no prestart)', { mode: 'require' as const, support }],
  ])('is killed when the attempt cannot adopt it: %s', async (_name, options) => {
    const early = startEarlyInit()!;
    expect(await eventually(() => pidsWithMarker(early.token).length > 0, 10_000)).toBe(true);
    const isolation = await openIsolation({ ...options, modelUrl, early });
    try {
      expect(early.take()).toBeNull();
      expect(await eventually(() => pidsWithMarker(early.token).length === 0, 10_000)).toBe(true);
    } finally {
      await isolation.close();
    }
  });
});

describe.skipIf(!support.available || !findScriptBinary())('a `script` attempt', () => {
  it.each(initKinds)(
    "passes the %s init its lifeline and model channel through `script`: no path of the harness, the scripted model answers, the exit is the engine's",
    async (kind) => {
      const isolation = await openIsolation({ mode: 'require', modelUrl, support: supportFor(kind) });
      try {
        const logOut = path.join(tmp, `script-${kind}.log`);
        const command = isolation.wrap(
          {
            file: '/bin/sh',
            args: ['-c', 'node impostor.cjs; exit 4'],
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
            cwd: tmp,
          },
          { passing: true },
        );
        expect(command.passSockets).toBe(2);
        const result = await isolation.settle(
          await runPassthrough({
            ...command,
            cwd: tmp,
            stdin: 'ignore',
            stdout: 'ignore',
            logOut,
            logTiming: path.join(tmp, `script-${kind}.timing`),
            passSockets: command.passSockets,
            onPassed: command.attach!,
          }),
        );
        const log = fs.readFileSync(logOut, 'utf8');
        expect(result, log).toMatchObject({ exitCode: 4, signal: null, spawnError: null });
        expect(JSON.parse(log.slice(log.indexOf('{'), log.lastIndexOf('}') + 1))).toEqual({
          replaced: 0,
          channels: 2,
          model: 'scripted model here',
        });
      } finally {
        await isolation.close();
      }
    },
  );
});

describe.skipIf(!support.available)('descriptors', () => {
  it.each(
    initKinds.flatMap(
      (kind) =>
        [
          [kind, 'wrap'],
          [kind, 'prestart'],
        ] as [InitKind, InitStart][],
    ),
  )('the engine inherits none but its stdio, whatever the harness inherited (%s init via %s)', async (kind, via) => {
    // The harness here runs with a descriptor it inherited (as from a CI runner or a terminal), not close-on-exec:
    // bash opens it (dash takes no descriptor above 9, and Node keeps its low ones from what it starts), and Node
    // passes it on.
    const marker = path.join(tmp, `inherited-${kind}-${via}.txt`);
    fs.writeFileSync(marker, "the host's");
    const script = path.join(tmp, `fds-${kind}-${via}.mts`);
    fs.writeFileSync(
      script,
      `
import fs from 'node:fs';
import { openIsolation } from ${JSON.stringify(path.resolve('src/runtime/isolation/attempt-isolation.ts'))};
import { runProcess, superviseSplit } from ${JSON.stringify(path.resolve('src/runtime/process.ts'))};
const isolation = await openIsolation({ mode: 'require', modelUrl: ${JSON.stringify(modelUrl)}, support: ${JSON.stringify(supportFor(kind))} });
const chunks = [];
const list = ['-e', "const fs = require('fs'); console.log(JSON.stringify(fs.readdirSync('/proc/self/fd').map((fd) => { try { return fs.readlinkSync('/proc/self/fd/' + fd); } catch { return null; } })))"];
const supervise = { onChunk: (_stream, chunk) => chunks.push(chunk) };
const env = { PATH: process.env.PATH };
let result;
if (${JSON.stringify(via)} === 'prestart') {
  isolation.prestart('ignore');
  result = await superviseSplit(isolation.launch({ file: process.execPath, args: list, env, cwd: '/' }), supervise);
} else {
  const command = isolation.wrap({ file: process.execPath, args: list, env, cwd: '/' });
  result = await runProcess({ file: command.file, args: command.args, cwd: '/', env: command.env, stdin: 'ignore', ...supervise });
}
await isolation.settle(result);
await isolation.close();
process.stdout.write(JSON.stringify({ inherited: fs.readlinkSync('/proc/self/fd/200'), engine: Buffer.concat(chunks).toString().trim() }));
`,
    );
    const child = spawn('/bin/bash', ['-c', 'exec "$0" --import tsx "$1" 200<"$2"', process.execPath, script, marker], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk));
    await new Promise((resolve) => child.on('close', resolve));
    const { inherited, engine } = JSON.parse(out) as { inherited: string; engine: string };
    expect(inherited).toBe(marker);
    // What each of the engine's descriptors is: none is the socket the harness inherited.
    const links = JSON.parse(engine) as Array<string | null>;
    expect(links.length).toBeGreaterThan(3);
    expect(links).not.toContain(inherited);
  });
});

describe('the probe', () => {
  it('the non-blocking probe (started first by an attempt) finds what the blocking one finds, and shares its cache', async () => {
    const blocking = probeNamespaces({ refresh: true });
    const started = probeNamespacesAsync({ refresh: true });
    expect(probeNamespacesAsync()).toBe(started);
    expect(await started).toEqual(blocking);
    expect(probeNamespaces()).toEqual(blocking);
  });
});

describe('fallback and refusal', () => {
  const unavailable = { available: false, unshare: null, ip: null, reason: 'user namespaces are disabled (test)' };

  it('auto falls back and records why: proxy-only network (scripted), host network (live), process group', async () => {
    const scripted = await openIsolation({ mode: 'auto', modelUrl: 'http://127.0.0.1:1', support: unavailable });
    expect(scripted.record).toEqual({
      mode: 'auto',
      network: 'proxy-only',
      processes: 'process-group',
      reason: 'user namespaces are disabled (test)',
      filesystem: 'host',
    });
    expect(scripted.wrap({ file: '/bin/true', args: ['x'], env: { A: '1' }, cwd: tmp }, { passing: true })).toEqual({
      file: '/bin/true',
      args: ['x'],
      env: { A: '1' },
      passSockets: 0,
    });
    const live = await openIsolation({ mode: 'auto', modelUrl: null, support: unavailable });
    expect(live.record.network).toBe('host');
  });

  it('require refuses with ISOLATION_UNAVAILABLE; off never uses namespaces', async () => {
    const refused = await openIsolation({
      mode: 'require',
      modelUrl: 'http://127.0.0.1:1',
      support: unavailable,
    }).catch((e: unknown) => e);
    expect(isAgentHarnessError(refused, 'ISOLATION_UNAVAILABLE')).toBe(true);
    expect((refused as Error).message).toContain('user namespaces are disabled (test)');
    const off = await openIsolation({ mode: 'off', modelUrl: 'http://127.0.0.1:1' });
    expect(off.record).toMatchObject({ mode: 'off', network: 'proxy-only', processes: 'process-group' });
  });

  it.runIf(support.available)(
    'filesystem containment unavailable: refused under require, recorded under auto with the host filesystem',
    async () => {
      const noMounts = {
        ...support,
        filesystem: { available: false, tools: null, reason: 'mounts are forbidden here (test)' },
      };
      const required = await openIsolation({ mode: 'require', modelUrl, support: noMounts, filesystem: true }).catch(
        (error: unknown) => error,
      );
      expect(isAgentHarnessError(required, 'ISOLATION_UNAVAILABLE')).toBe(true);
      expect((required as Error).message).toContain('mounts are forbidden here (test)');
      const auto = await openIsolation({ mode: 'auto', modelUrl, support: noMounts, filesystem: true });
      try {
        expect(auto.record).toMatchObject({ processes: 'pid-namespace', filesystem: 'host' });
        expect(auto.record.reason).toContain('mounts are forbidden here (test)');
        // A plan is not carried out where mounts are unavailable.
        auto.contain({ skeleton: [], mounts: [], exposed: [] });
        expect(auto.record.filesystem).toBe('host');
        expect(await auto.contained()).toBe(false);
      } finally {
        await auto.close();
      }
    },
  );

  it('a model URL off loopback cannot be forwarded: refused under require, recorded under auto', async () => {
    const available = { available: true, unshare: '/usr/bin/unshare', ip: '/usr/sbin/ip', reason: null };
    const refused = await openIsolation({
      mode: 'require',
      modelUrl: 'http://10.0.0.5:8080',
      support: available,
    }).catch((e: unknown) => e);
    expect(isAgentHarnessError(refused, 'ISOLATION_UNAVAILABLE')).toBe(true);
    const auto = await openIsolation({ mode: 'auto', modelUrl: 'http://10.0.0.5:8080', support: available });
    expect(auto.record).toMatchObject({ network: 'proxy-only', processes: 'process-group' });
    expect(auto.record.reason).toContain('not on loopback');
  });

  it('AGENT_HARNESS_ISOLATION sets the default; a bad value is CONFIG_INVALID', () => {
    expect(resolveIsolationMode(undefined, {})).toBe('auto');
    expect(resolveIsolationMode(undefined, { AGENT_HARNESS_ISOLATION: 'require' })).toBe('require');
    expect(resolveIsolationMode('off', { AGENT_HARNESS_ISOLATION: 'require' })).toBe('off');
    expect(
      isAgentHarnessError(
        thrownBy(() => resolveIsolationMode(undefined, { AGENT_HARNESS_ISOLATION: 'sometimes' })),
        'CONFIG_INVALID',
      ),
    ).toBe(true);
  });
});

describe("an init started before the probe's verdict", () => {
  /**
   * The inits this process started, by pid, with their lifeline: `unshare`, this process's child, has the init
   * script and its config on its command line (a zombie's is empty: gone).
   */
  const ownInits = (): Map<number, string> => {
    const found = new Map<number, string>();
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid) continue;
        const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        const at = argv.indexOf(NAMESPACE_INIT);
        if (at >= 0) found.set(Number(entry), argv[at + 1]!);
      } catch {
        // exited meanwhile
      }
    }
    return found;
  };

  it.runIf(findNamespaceTools().verdict === null)(
    'is killed, with its sockets, when the verdict is that namespaces are unavailable: fallback under auto, refusal under require',
    async () => {
      for (const mode of ['auto', 'require'] as const) {
        const before = ownInits();
        let verdict: (support: NamespaceSupport) => void = () => undefined;
        const trial = new Promise<NamespaceSupport>((resolve) => {
          verdict = resolve;
        });
        const opening = openIsolation({ mode, modelUrl, support: trial, prestart: 'ignore' }).catch((e: unknown) => e);
        // The init runs while the trial has not answered yet.
        let init: [number, string] | undefined;
        const started = await eventually(
          () => (init = [...ownInits()].find(([pid]) => !before.has(pid))) !== undefined,
          10_000,
          10,
        );
        expect(started, 'no init started before the verdict').toBe(true);
        const [pid] = init!;
        verdict({ available: false, unshare: null, ip: null, reason: 'user namespaces are disabled (test)' });
        const opened = await opening;
        if (mode === 'auto')
          expect((opened as { record: unknown }).record).toEqual({
            mode: 'auto',
            network: 'proxy-only',
            processes: 'process-group',
            reason: 'user namespaces are disabled (test)',
            filesystem: 'host',
          });
        else expect(isAgentHarnessError(opened, 'ISOLATION_UNAVAILABLE')).toBe(true);
        // openIsolation waited for the kill: the init is gone (its lifeline and model channel were descriptors).
        expect(ownInits().has(pid)).toBe(false);
      }
    },
  );
});

describe('an attempt that fails before its run directory exists', () => {
  it('closes the model server and the namespaces it started alongside the run store: no server, socket or init left', async () => {
    const paths = resolveHarnessPaths({ env: {}, projectRoot: path.join(tmp, 'store-fails'), skillRoots: [] });
    const run = await createRun(paths.runRoot, {
      engine: 'codex',
      translateMode: 0,
      modelMode: 'scripted',
      script: null,
    });
    /** This process's listening servers, sockets and child processes. */
    const held = () =>
      process
        .getActiveResourcesInfo()
        .filter((kind) => /ServerWrap|TCPWrap|PipeWrap|ProcessWrap/.test(kind))
        .sort();
    const before = held();
    // The run store refuses the run directory (it already holds a run), after the server and the init started.
    const error = await runAttempt({
      paths,
      engine: 'codex',
      launch: 'start',
      runDir: run.run_dir,
      prompt: 'hi',
      isolation: support.available ? 'require' : 'auto',
    }).catch((e: unknown) => e);
    expect(isAgentHarnessError(error, 'USAGE_ERROR')).toBe(true);
    expect((error as Error).message).toMatch(/already holds a run/);
    // Handles close a moment after what they belong to (a killed child's pipes after its exit): wait, bounded.
    const same = () => JSON.stringify(held()) === JSON.stringify(before);
    if (!(await eventually(same, 5_000, 20))) expect(held()).toEqual(before);
  });
});
