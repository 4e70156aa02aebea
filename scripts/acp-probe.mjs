#!/usr/bin/env node
// Probes an engine's native ACP mode: spawns `<command…>` in fresh network and user namespaces (nothing leaves the
// host; no vendor is reached) with an empty HOME, then sends `initialize` and `session/new` through the SDK client
// and prints what it answered as JSON. No prompt is sent.
// Usage: node scripts/acp-probe.mjs [--env KEY=VALUE]… <command> [args…]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { client, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';

const argv = process.argv.slice(2);
const extraEnv = {};
while (argv[0] === '--env') {
  const [key, ...value] = argv[1].split('=');
  extraEnv[key] = value.join('=');
  argv.splice(0, 2);
}
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-probe-'));
const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'acp-probe-cwd-'));
const child = spawn('unshare', ['--map-root-user', '--net', '--', ...argv], {
  cwd,
  env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', ...extraEnv },
  stdio: ['pipe', 'pipe', 'pipe'],
});
let stderr = '';
child.stderr.on('data', (chunk) => (stderr += chunk));
const started = Date.now();
const report = { command: argv.join(' '), env: Object.keys(extraEnv) };
const connection = client({ name: 'acp-probe' })
  .onNotification('session/update', () => undefined)
  .connect(ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
const within = (promise, ms) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms))]);
try {
  report.initialize = await within(
    connection.agent.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'acp-probe', version: '0' },
    }),
    60_000,
  );
  report.initializeMs = Date.now() - started;
  try {
    report.sessionNew = await within(connection.agent.request('session/new', { cwd, mcpServers: [] }), 60_000);
  } catch (error) {
    report.sessionNewError = { message: error.message, code: error.code, data: error.data };
  }
} catch (error) {
  report.initializeError = error.message;
}
child.kill('SIGTERM');
report.stderrTail = stderr
  .split('\n')
  .filter(Boolean)
  .slice(-Number(process.env.ACP_PROBE_STDERR_LINES ?? 5));
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
fs.rmSync(home, { recursive: true, force: true });
fs.rmSync(cwd, { recursive: true, force: true });
process.exit(0);
