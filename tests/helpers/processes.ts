/**
 * Finding processes by a marker in their command line (a `sleep 600.1234` no other process runs), to prove that
 * nothing an attempt started outlives it.
 */
import fs from 'node:fs';
import { execa } from 'execa';
import { readProcessStartTime, type LeaseOwner } from '../../src/runtime/lease.js';
import { scaled, waitUntil } from './load-scaled.js';

/**
 * A `sleep` duration unique to this call: its command line is the marker. Ten minutes: longer than any test runs, so
 * the sleep never ends by itself while a test waits for it to be killed, however slow the machine.
 */
export function uniqueSleepSeconds(): string {
  return `600.${String(process.pid).padStart(6, '0')}${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
}

/**
 * A shell command that sleeps `seconds` in the foreground and does not start with `sleep`: qwen 0.24.4 and claude
 * 2.1.332 refuse a command whose first part is `sleep N` ("Blocked: standalone sleep …, run blocking commands in the
 * background"), and the turn would end before the test gets to the running sleep.
 */
export function foregroundSleep(seconds: string): string {
  return `cd . && sleep ${seconds}`;
}

/** Host pids whose command line contains `marker` (this process excluded). */
export function pidsWithMarker(marker: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      // A zombie has an empty command line; it is gone for our purposes.
      if (cmdline.includes(marker)) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/**
 * For a test whose verdict is a timeout: runs `attempt` with a timeout of `firstMs`, then twice that (up to `maxMs`)
 * while `reached` says the process had not yet got to the point under test when the timeout fired (a slow start on a
 * loaded machine), so no test depends on how fast a process starts. Returns the last result either way: the caller
 * asserts `reached` on it, so a process that never gets there still fails the test.
 */
export async function withGrowingTimeout<T>(
  attempt: (timeoutMs: number) => Promise<T>,
  reached: (result: T) => boolean,
  firstMs: number,
  maxMs: number,
): Promise<T> {
  // The bound grows with the load too; the first try stays short (a timeout that fires costs all of it).
  const limitMs = scaled(maxMs);
  for (let timeoutMs = firstMs; ; timeoutMs *= 2) {
    const result = await attempt(timeoutMs);
    if (reached(result) || timeoutMs * 2 > limitMs) return result;
  }
}

/** Polls until `check` holds or `timeoutMs`, scaled by the load (`waitUntil`), passes; returns whether it held. */
export function eventually(check: () => boolean, timeoutMs: number, stepMs = 100): Promise<boolean> {
  return waitUntil(check, timeoutMs, stepMs);
}

/**
 * A Node script for the agent's shell (`node probe.cjs`; CommonJS): writes `net.json` with the network interfaces and the
 * IPv4 routes it sees (from /proc, as `ip` would list them) and how a TCP connect to a non-loopback address
 * (10.255.255.1, never routed off a host with no route) ended. Run it only inside a network namespace.
 */
export const NETWORK_PROBE = `const fs = require('fs');
const net = require('net');
const interfaces = fs.readFileSync('/proc/net/dev', 'utf8').split('\\n').slice(2).map((l) => l.split(':')[0].trim()).filter(Boolean);
const routes = fs.readFileSync('/proc/net/route', 'utf8').split('\\n').slice(1).filter(Boolean).length;
const write = (connect) => fs.writeFileSync('net.json', JSON.stringify({ interfaces, routes, connect }));
if (routes > 0) { write('not-tried: a route exists'); process.exit(0); }
const socket = net.connect(9, '10.255.255.1');
socket.on('connect', () => { write('connected'); socket.destroy(); });
socket.on('error', (e) => write(e.code));
`;

/** The owner record (pid + kernel start time) of a real process that has exited by the time this returns. */
export async function deadOwner(): Promise<LeaseOwner> {
  const child = execa('sleep', ['30']);
  const owner = { pid: child.pid!, start_time: readProcessStartTime(child.pid!) };
  // Without its start time a dead owner could not be told from a recycled pid: the tests would prove nothing.
  if (owner.start_time === null) throw new Error(`no kernel start time for pid ${owner.pid}`);
  child.kill('SIGKILL');
  await child.catch(() => undefined);
  return owner;
}
