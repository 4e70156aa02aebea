/**
 * Test helpers for the CLI contract: run `bin/agent-harness.js` as a real subprocess in a sandbox whose
 * managed prefix holds a fake engine executable (a shell script replaying a recorded stream and logging its
 * argv), so the CLI's whole path runs without an engine process.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { scaled } from './load-scaled.js';

/** Repository root. */
export const REPO = path.resolve(import.meta.dirname, '..', '..');
/** The CLI entry point. */
export const BIN = path.join(REPO, 'bin', 'agent-harness.js');

/** A sandbox: project root, data dirs, a fake HOME. */
export interface CliSandbox {
  root: string;
  home: string;
  prefix: string;
  env: NodeJS.ProcessEnv;
  /**
   * Where the fake engine logs (`argv.log` in each run's own HOME, which the contained engine can write; the
   * managed prefix it runs from is read-only to it). Read with {@link fakeEngineCalls}.
   */
  argvLog: string;
  cleanup(): void;
}

/** Creates a sandbox project with its own run root, agent home, managed prefix and host HOME. */
export function createCliSandbox(): CliSandbox {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-cli-'));
  fs.writeFileSync(path.join(root, 'package.json'), '{"name":"sandbox","private":true}\n');
  const home = path.join(root, 'host-home');
  const prefix = path.join(root, 'prefix');
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(path.join(prefix, 'bin'), { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    SKILL_RUNNER_NPM_PREFIX: prefix,
    AGENT_HARNESS_SKILL_ROOTS: path.join(REPO, 'fixtures', 'skills'),
    NO_COLOR: '1',
  };
  return {
    root,
    home,
    prefix,
    env,
    // The runs' homes: the fake engine runs in the attempt's mount namespace, where it sees its prefix read-only,
    // its run's home read-write and nothing of the sandbox above it (docs/isolation.md).
    argvLog: path.join(root, '.agent-harness', 'agent_cache', 'agent_home', 'runs', '*', 'argv.log'),
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * Installs a fake engine executable in the sandbox's managed prefix: it appends its argv (one JSON array per
 * call) to `argvLog`, prints `stdoutFile` to stdout and `stderrText` to stderr, and exits with `exitCode`. The
 * stream is copied beside it: the engine sees its prefix, not the fixtures.
 */
export function installFakeEngine(
  sandbox: CliSandbox,
  name: string,
  options: { stdoutFile: string; stderrText?: string; exitCode?: number; hangAfterOutput?: boolean },
): void {
  const stream = path.join(sandbox.prefix, 'streams', `${name}.stdout`);
  fs.mkdirSync(path.dirname(stream), { recursive: true });
  fs.copyFileSync(options.stdoutFile, stream);
  const script = `#!/usr/bin/env node
const fs = require('node:fs');
${options.hangAfterOutput ? "process.on('SIGTERM', () => {});" : ''}
fs.appendFileSync(require('node:path').join(process.env.HOME, 'argv.log'), JSON.stringify({ at: Date.now(), argv: process.argv.slice(2), cwd: process.cwd(), home: process.env.HOME, codexHome: process.env.CODEX_HOME, hasSecret: Object.keys(process.env).some((k) => k === 'LEAKY_SECRET') }) + '\\n');
process.stdout.write(fs.readFileSync(${JSON.stringify(stream)}));
process.stderr.write(${JSON.stringify(options.stderrText ?? '')});
process.exitCode = ${options.exitCode ?? 0};
${options.hangAfterOutput ? 'setInterval(() => {}, 1000);' : ''}
`;
  const file = path.join(sandbox.prefix, 'bin', name);
  fs.writeFileSync(file, script, { mode: 0o755 });
}

/**
 * Installs a fake codex that prints the first `head` lines of `stdoutFile`, waits until the returned release file
 * exists, then prints the rest: a running attempt a test can look at, with no clock. Stream and release file live in
 * the managed prefix, where the contained engine sees them.
 */
export function installGatedCodex(sandbox: CliSandbox, stdoutFile: string, head = 3): string {
  const stream = path.join(sandbox.prefix, 'streams', 'gated-codex.stdout');
  const release = path.join(sandbox.prefix, 'release');
  fs.mkdirSync(path.dirname(stream), { recursive: true });
  fs.copyFileSync(stdoutFile, stream);
  const script = `#!/usr/bin/env node
const fs = require('node:fs');
const lines = fs.readFileSync(${JSON.stringify(stream)}, 'utf8').split('\\n');
process.stdout.write(lines.slice(0, ${head}).join('\\n') + '\\n');
const wait = setInterval(() => {
  if (!fs.existsSync(${JSON.stringify(release)})) return;
  clearInterval(wait);
  process.stdout.write(lines.slice(${head}).join('\\n'));
}, 20);
`;
  fs.writeFileSync(path.join(sandbox.prefix, 'bin', 'codex'), script, { mode: 0o755 });
  return release;
}

/** The argv records the fake engine logged. */
export function fakeEngineCalls(
  sandbox: CliSandbox,
): Array<{ argv: string[]; cwd: string; home: string; codexHome: string; hasSecret: boolean }> {
  const homes = path.dirname(path.dirname(sandbox.argvLog));
  const logs = fs.existsSync(homes)
    ? fs
        .readdirSync(homes)
        .map((run) => path.join(homes, run, 'argv.log'))
        .filter((file) => fs.existsSync(file))
    : [];
  return logs
    .flatMap((file) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean))
    .map(
      (line) =>
        JSON.parse(line) as {
          at: number;
          argv: string[];
          cwd: string;
          home: string;
          codexHome: string;
          hasSecret: boolean;
        },
    )
    .sort((a, b) => a.at - b.at)
    .map(({ at: _at, ...call }) => call);
}

/** Result of one CLI run. */
export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI synchronously in the sandbox (cwd = sandbox root). */
export function runCliProcess(sandbox: CliSandbox, args: string[], extraEnv: NodeJS.ProcessEnv = {}): CliRun {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: sandbox.root,
    env: { ...sandbox.env, ...extraEnv },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: scaled(120_000),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs the CLI with stdout and stderr on one pipe, to check the order of what it prints. */
export function runCliMerged(sandbox: CliSandbox, args: string[]): CliRun {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const result = spawnSync('/bin/sh', ['-c', `${quoted} 2>&1`], {
    cwd: sandbox.root,
    env: sandbox.env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: scaled(120_000),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * A sandbox with the gated fake codex (turn1's first 3 lines: thread, turn, tool call started; then it waits for
 * `release`, then the rest) for a whole test file: made before its tests; after them its engine is let go (a failed
 * assertion may leave it waiting) and the sandbox removed. Read the fields inside tests.
 */
export function useGatedCodexSandbox(): { sandbox: CliSandbox; release: string } {
  const gated = {} as { sandbox: CliSandbox; release: string };
  beforeAll(() => {
    gated.sandbox = createCliSandbox();
    gated.release = installGatedCodex(
      gated.sandbox,
      path.join(REPO, 'fixtures', 'streams', 'codex', 'turn1.stdout.jsonl'),
    );
  });
  afterAll(() => {
    fs.writeFileSync(gated.release, '');
    gated.sandbox.cleanup();
  });
  return gated;
}
