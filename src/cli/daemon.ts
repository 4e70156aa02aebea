/**
 * `agent-harness daemon status|stop`: the attempt daemons of this user (on by default outside a CI job; bin/daemon-client.js
 * starts them, src/cli/daemon-serve.ts is what they run). `status` lists the live ones; `stop` ends them all, their
 * running attempts canceled and sealed. A socket nobody answers at (a daemon killed with -9) is removed on the way.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AgentHarnessError } from '../errors/index.js';
import { daemonShared } from './daemon-shared.js';
import type { CliStreams } from './output.js';
import { parsePositiveInt } from './options.js';

/** How long `daemon stop` waits for the daemons to end, by default. */
const STOP_WAIT_MS = 30_000;

/** The sockets in the daemon directory (none when it does not exist). */
function daemonSockets(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((name) => /^[0-9a-f]{32}\.sock$/.test(name)).sort().map((name) => path.join(dir, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new AgentHarnessError('DAEMON_UNAVAILABLE', `The daemon directory ${dir} cannot be read: ${(error as Error).message}`, { details: { dir } });
  }
}

/** Asks every daemon of the directory for `control`; removes the sockets (and logs) of the dead ones. */
export async function askAll(dir: string, control: 'status' | 'stop'): Promise<Array<import('./daemon-serve.js').DaemonStatus>> {
  const { controlDaemon } = await import('./daemon-serve.js');
  const replies = await Promise.all(daemonSockets(dir).map(async (socket) => {
    const reply = await controlDaemon(socket, control);
    if (reply === null) {
      fs.rmSync(socket, { force: true });
      fs.rmSync(daemonShared().logPathFor(socket), { force: true });
    }
    return reply;
  }));
  return replies.filter((reply) => reply !== null);
}


/** Registers `daemon status`, `daemon stop` and the hidden `daemon serve`. */
export function registerDaemon(program: Command, streams: CliStreams, setExit: (code: number) => void): void {
  const daemon = program
    .command('daemon')
    .description('the attempt daemons (on by default outside a CI job; status, stop)')
    .addHelpText('after', `
start, resume and the direct <engine> form run their attempt in a daemon: a process of the harness that stays after
the command, for AGENT_HARNESS_DAEMON_IDLE_MS (default 600000) without an attempt, so the next command skips Node's
cold start of the harness. The first command of an environment runs its attempt itself and leaves a daemon starting
for the next (none where four others run or start). A daemon serves only commands given with the same environment, directory, umask, Node and build of the
harness; another gets a daemon of its own. Daemons listen in AGENT_HARNESS_DAEMON_DIR (default
$XDG_RUNTIME_DIR/agent-harness, else /tmp/agent-harness-<uid>; 0700).

AGENT_HARNESS_DAEMON unset: on, except in a CI job (CI, CONTINUOUS_INTEGRATION, BUILD_NUMBER, TF_BUILD or
CODEBUILD_BUILD_ID set to anything but empty, false or 0). off or 0: every command runs its attempt itself. on or 1:
in a CI job too, and the first command starts the daemon and runs in it.

Examples:
  agent-harness daemon status
  AGENT_HARNESS_DAEMON=off agent-harness start codex exec --json --skip-git-repo-check hi
  agent-harness daemon stop`);
  daemon
    .command('status')
    .description('list the running daemons of this user (pid, attempts served and running, idle time, directory)')
    .option('--json', 'print them as JSON')
    .action(async (options: { json?: boolean }) => {
      const dir = daemonShared().daemonDirectory();
      const daemons = await askAll(dir, 'status');
      if (options.json) {
        streams.stdout.write(`${JSON.stringify(daemons, null, 2)}\n`);
        return;
      }
      if (daemons.length === 0) {
        streams.stderr.write(`No daemon runs (directory ${dir}). The next attempt command starts one (outside a CI job, or with AGENT_HARNESS_DAEMON=on).\n`);
        return;
      }
      const rows = daemons.map((d) => [String(d.pid), String(d.served), String(d.running), d.running > 0 ? '-' : `${Math.round(d.idle_ms / 1000)}s`, d.started_at, d.cwd]);
      const header = ['PID', 'SERVED', 'RUNNING', 'IDLE', 'STARTED', 'DIRECTORY'];
      const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
      const format = (row: string[]): string => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
      streams.stdout.write(`${[header, ...rows].map(format).join('\n')}\n`);
    });
  daemon
    .command('stop')
    .description('stop every daemon of this user: running attempts are canceled (the engine stopped, the audit sealed)')
    .option('--wait-ms <ms>', `how long to wait for them to end (default ${STOP_WAIT_MS})`, parsePositiveInt('--wait-ms'))
    .action(async (options: { waitMs?: number }) => {
      // Loaded here, not at the top: every start of the CLI loads this file (to register `daemon`).
      const [stopped, { isOwnerAlive }] = await Promise.all([askAll(daemonShared().daemonDirectory(), 'stop'), import('../runtime/lease.js')]);
      // A zombie (ended, not yet reaped by its parent) has ended.
      const alive = (pid: number): boolean => isOwnerAlive({ pid, start_time: null });
      const deadline = Date.now() + (options.waitMs ?? STOP_WAIT_MS);
      let left = stopped.filter((d) => alive(d.pid));
      while (left.length > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        left = left.filter((d) => alive(d.pid));
      }
      if (left.length > 0) {
        throw new AgentHarnessError('DAEMON_UNAVAILABLE', `${left.length} daemon(s) did not end in time: pid ${left.map((d) => d.pid).join(', ')}.`, { details: { pids: left.map((d) => d.pid) } });
      }
      streams.stderr.write(`${stopped.length === 0 ? 'No daemon was running.' : `Stopped ${stopped.length} daemon(s): pid ${stopped.map((d) => d.pid).join(', ')}.`}\n`);
      setExit(0);
    });
  daemon
    .command('serve', { hidden: true })
    .description('run a daemon (started by the command itself)')
    .requiredOption('--socket <path>', 'where to listen')
    .requiredOption('--key <key>', 'the name of the environment it serves')
    .option('--ready-fd <fd>', 'write "ready" there once listening', parsePositiveInt('--ready-fd'))
    .action(async (options: { socket: string; key: string; readyFd?: number }) => {
      const { serveDaemon } = await import('./daemon-serve.js');
      const shared = daemonShared();
      await serveDaemon({ socket: options.socket, key: options.key, readyFd: options.readyFd ?? null, idleMs: shared.daemonIdleMs(), logFile: shared.logPathFor(options.socket) });
      // Whatever a served attempt left open (a timer, a stray handle) does not keep a stopped daemon alive.
      setTimeout(() => process.exit(process.exitCode ?? 0), 2_000).unref();
    });
}
