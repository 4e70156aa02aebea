/**
 * A mount plan the harness writes while its namespace init starts is acted on at once: the harness sends lines on a
 * socket it passed to the init before the init has greeted (only the init holds the other end), and the init reads
 * what was sent before the rest of its start-up, so the filesystem's setup runs beside that start-up, not after it
 * (issue 44, containment). Neither needs a namespace: the init runs here with a stand-in `sh` for the setup.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NAMESPACE_INIT, mountsLine } from '../../src/runtime/isolation/init-scripts.js';
import { createLifeline } from '../../src/runtime/isolation/isolation-lifeline.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-init-early-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Two connected Unix sockets: [the harness's end, the other end]. */
async function socketPair(name: string): Promise<[net.Socket, net.Socket]> {
  const file = path.join(tmp, `${name}.sock`);
  const accepted = new Promise<net.Socket>((resolve) => {
    const server = net.createServer((socket) => {
      server.close();
      resolve(socket);
    });
    server.listen(file);
  });
  const client = net.connect(file);
  await new Promise((resolve) => client.once('connect', resolve));
  return [await accepted, client];
}

/** The first `count` bytes the socket receives, as text. */
function firstBytes(socket: net.Socket, count: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('utf8');
      if (text.length >= count) {
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
  });
}

/** The children of `pid` (from /proc), with their command lines. */
function childrenOf(pid: number): Array<{ pid: number; cmdline: string }> {
  const found: Array<{ pid: number; cmdline: string }> = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The parent's pid is the second field after the parenthesised command name.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid)
        found.push({
          pid: Number(entry),
          cmdline: fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim(),
        });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('the lifeline to an init', () => {
  it('sends on a socket passed to the init before its greeting; a connection by path gets nothing before it', async () => {
    const lifeline = createLifeline('t0ken', () => undefined);
    const [passedEnd, init] = await socketPair('passed');
    lifeline.send('mounts a');
    lifeline.accept(passedEnd, true);
    lifeline.send('launch b');
    expect(await firstBytes(init, 'mounts a\nlaunch b\n'.length)).toBe('mounts a\nlaunch b\n');

    // The init's end closing before its greeting (an init that died starting) closes the lifeline all the same.
    const early = createLifeline('t0ken', () => undefined);
    const [earlyEnd, dying] = await socketPair('dying');
    early.accept(earlyEnd, true);
    dying.destroy();
    await early.closed;

    // By path anyone may connect: one that does not greet with the token is closed, and was sent nothing.
    const byPath = createLifeline('t0ken', () => undefined);
    const [pathEnd, stranger] = await socketPair('path');
    const received: Buffer[] = [];
    stranger.on('data', (chunk: Buffer) => received.push(chunk));
    const closed = new Promise((resolve) => stranger.once('close', resolve));
    byPath.send('mounts a');
    byPath.accept(pathEnd);
    stranger.write('hello not-the-token\n');
    await closed;
    expect(Buffer.concat(received).toString('utf8')).toBe('');
    for (const socket of [...lifeline.sockets, ...byPath.sockets, init, stranger]) socket.destroy();
  });
});

describe('an init whose mount plan was sent while it started', () => {
  it('begins the setup before it greets', async () => {
    // The setup's `sh`: stays until it is killed (bounded by its own sleep), so it is seen among the init's children,
    // with the same command line from its exec on (no `exec` of its own: spawn returns once it has started).
    const fakeSh = path.join(tmp, 'setup-sh');
    fs.writeFileSync(fakeSh, '#!/bin/sh\nsleep 60\n', { mode: 0o755 });
    const line = mountsLine(
      { root: '/r', skeleton: '/s', fstab: '/f', scratchFstab: '/g', scratchTops: [] },
      { sh: fakeSh, mount: '/m', cp: '/c', pivotRoot: '/p', umount: '/u', unshare: '/n' },
    );
    // The init is started only once the plan is on its lifeline: a shell holds the exec until told to go (fd 4), so
    // the order does not depend on how fast either side runs.
    const child = spawn(
      '/bin/sh',
      ['-c', 'read go <&4; exec "$0" "$@"', process.execPath, NAMESPACE_INIT, 'fd:3', 't0ken', '-', '0'],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    const [lifeline, go] = [child.stdio[3] as net.Socket, child.stdio[4] as net.Socket];
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    try {
      lifeline.write(`${line}\n`);
      go.write('go\n');
      const hello = await firstBytes(lifeline, 'hello t0ken\n'.length);
      expect(hello, stderr).toBe('hello t0ken\n');
      // At its greeting the setup runs already (spawn returns once the child has started).
      expect(childrenOf(child.pid!).map((c) => c.cmdline.split(' ').slice(0, 3))).toEqual([['/bin/sh', fakeSh, '-c']]);
    } finally {
      for (const setup of childrenOf(child.pid!)) {
        for (const sleep of childrenOf(setup.pid)) process.kill(sleep.pid, 'SIGKILL');
        process.kill(setup.pid, 'SIGKILL');
      }
      child.kill('SIGKILL');
      lifeline.destroy();
      go.destroy();
    }
  });
});
