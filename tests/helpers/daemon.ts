/**
 * What the attempt daemon's tests share (tests/contract/daemon*.contract.test.ts): environments with the daemon on,
 * whose daemons are stopped when the file ends; the daemons of an environment; an attempt's meta from the command's
 * output; the command run by either client: `node bin/agent-harness.js` (the Node client) or the bin itself, as a
 * user's shell runs the command's link (its sh line, then the Perl client).
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { AttemptMetaSchema } from '../../src/protocol/index.js';
import { isOwnerAlive } from '../../src/runtime/lease.js';
import { BIN, createCliSandbox, installFakeEngine, REPO, runCliProcess, type CliRun, type CliSandbox } from './cli.js';
import { eventually } from './processes.js';

/** What the daemon tests read of the Node client (bin/daemon-client.js). */
export const nodeClient = createRequire(import.meta.url)('../../bin/daemon-client.js') as {
  ATTEMPT_COMMANDS: readonly string[];
  FRAME: Record<string, number>;
  FrameReader: new () => { push(chunk: Buffer): Array<{ type: number; payload: Buffer }> };
  HINTS: Record<string, string>;
  PROTOCOL: number;
};

/** The fake codex's stream: a completed turn with the done marker. */
export const DONE_STREAM = path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl');

/** How a test runs the command: `node bin/agent-harness.js`, or the bin as an executable (sh, then Perl or Node). */
export type Client = 'node' | 'bin';

/** The executable and arguments of the command `args` run by `client`. */
function commandLine(client: Client, args: readonly string[]): [string, string[]] {
  return client === 'node' ? [process.execPath, [BIN, ...args]] : [BIN, [...args]];
}

/** The command `args` in `cwd`, not blocking this process. */
export function spawnCommand(client: Client, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; stdio?: StdioOptions }): ChildProcess {
  const [file, argv] = commandLine(client, args);
  return spawn(file, argv, { cwd: options.cwd, env: options.env, stdio: options.stdio ?? ['ignore', 'pipe', 'pipe'] });
}

/** The command `args` in the sandbox, run to its end by `client`. */
export function runCommand(client: Client, box: CliSandbox, args: readonly string[], env: NodeJS.ProcessEnv, cwd = box.root): CliRun & { pid: number } {
  if (client === 'node' && cwd === box.root) return { ...runCliProcess(box, [...args], env), pid: -1 };
  const [file, argv] = commandLine(client, args);
  const result = spawnSync(file, argv, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, pid: result.pid };
}

/** Every environment a file ran the command in with the daemon on: `stopAll` stops their daemons. */
export class DaemonEnvs {
  private readonly envs: Array<{ box: CliSandbox; env: NodeJS.ProcessEnv }> = [];

  /**
   * The sandbox's environment with the daemon on, its daemons in the sandbox's own directory unless `extra` says
   * otherwise. PWD is the sandbox's, as the bin's sh sets it: both clients then name the same daemon.
   */
  env(box: CliSandbox, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    const env = { ...box.env, PWD: box.root, AGENT_HARNESS_DAEMON: 'on', AGENT_HARNESS_DAEMON_DIR: path.join(box.root, 'daemons'), AGENT_HARNESS_DAEMON_IDLE_MS: '120000', ...extra };
    this.envs.push({ box, env });
    return env;
  }

  /** Stops every daemon of every environment handed out. */
  stopAll(): void {
    for (const { box, env } of this.envs) runCliProcess(box, ['daemon', 'stop'], env);
  }
}

/** What `daemon status --json` says of a daemon. */
export interface DaemonInfo {
  pid: number;
  served: number;
  running: number;
  key: string;
  cwd: string;
}

/** `daemon status --json` in `env`. */
export function daemons(box: CliSandbox, env: NodeJS.ProcessEnv): DaemonInfo[] {
  const run = runCliProcess(box, ['daemon', 'status', '--json'], env);
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as DaemonInfo[];
}

/** The pids whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number).filter((child) => {
    try {
      const stat = fs.readFileSync(`/proc/${child}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
    } catch {
      return false;
    }
  });
}

/** A process's command line, '' once it is gone. */
export function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** True while `pid` runs: a zombie (ended, not yet reaped by its parent, PID 1 for a daemon) does not. */
export function alive(pid: number): boolean {
  return isOwnerAlive({ pid, start_time: null });
}

/** The meta of the attempt whose output `stderr` is. */
export function metaOf(stderr: string, attempt = 1) {
  const runDir = /^run_dir: (.+)$/m.exec(stderr)?.[1];
  if (!runDir) throw new Error(`no run_dir in:\n${stderr}`);
  return AttemptMetaSchema.parse(JSON.parse(fs.readFileSync(path.join(runDir, '.audit', `meta.${attempt}.json`), 'utf8')));
}

/** stderr with the run's own names (ids, handles, dirs, ports, times) blanked: what two runs of one command share. */
export function shape(stderr: string): string {
  return stderr
    .replace(/^(run_id|run_dir|config_roots|model|Run id|Run directory|Run handle|Session|Audit): .*$/gm, '$1: …')
    .replace(/^(agent-harness: warning DAEMON_UNAVAILABLE).*$/gm, '$1');
}

/** A command started on a sandbox whose fake engine hangs after its output, once the engine printed. */
export interface Hanging {
  child: ChildProcess;
  out: { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

/** Starts `start --prompt hang codex` on the hanging sandbox `box` in `env`; resolves once the engine printed. */
export async function startHanging(box: CliSandbox, env: NodeJS.ProcessEnv, client: Client = 'node'): Promise<Hanging> {
  const child = spawnCommand(client, ['start', '--prompt', 'hang', 'codex'], { cwd: box.root, env });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  expect(await eventually(() => out.stdout.length > 0, 30_000), out.stderr).toBe(true);
  return { child, out, exited };
}

/** A test file's two sandboxes (one whose fake codex prints `stream`, one whose fake then hangs) and its environments. */
export interface DaemonSandboxes {
  readonly sandbox: CliSandbox;
  readonly hanging: CliSandbox;
  readonly envs: DaemonEnvs;
}

/**
 * Makes the sandboxes before the file's tests and, after them, stops every daemon a test started (whatever the test
 * did) and removes the sandboxes.
 */
export function useDaemonSandboxes(stream: string = DONE_STREAM): DaemonSandboxes {
  let sandbox: CliSandbox | null = null;
  let hanging: CliSandbox | null = null;
  const envs = new DaemonEnvs();
  beforeAll(() => {
    sandbox = createCliSandbox();
    installFakeEngine(sandbox, 'codex', { stdoutFile: stream });
    hanging = createCliSandbox();
    installFakeEngine(hanging, 'codex', { stdoutFile: stream, hangAfterOutput: true });
  });
  afterAll(() => {
    envs.stopAll();
    sandbox?.cleanup();
    hanging?.cleanup();
  }, 120_000);
  return {
    get sandbox() {
      return sandbox!;
    },
    get hanging() {
      return hanging!;
    },
    envs,
  };
}
