/**
 * The attempt daemon (AGENT_HARNESS_DAEMON=on, issue 13): the command hands its attempt to a resident process of the
 * harness, started on first use. What it must keep: the command's output, exit status and audit are what the command
 * itself gives; a daemon serves one environment only; signals reach the attempt; a client or daemon that dies loses
 * no audit and leaves no engine; an idle daemon ends by itself; bad settings and unsafe directories are refused.
 * The engine is the fake codex of the CLI tests (a stream replayed), so each attempt is quick.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors/codes.js';
import { engineIds } from '../../src/engines/registry.js';
import { findOnPath } from '../../src/runtime/isolation/probe.js';
import { BIN, fakeEngineCalls, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';
import { alive, childrenOf, cmdline, daemons, metaOf, shape, startHanging, useDaemonSandboxes, nodeClient, DONE_STREAM } from '../helpers/daemon.js';
import { eventually, pidsWithMarker } from '../helpers/processes.js';

const client = nodeClient;
const STREAM = DONE_STREAM;
const boxes = useDaemonSandboxes(STREAM);
const { envs } = boxes;
let sandbox: CliSandbox;
let hanging: CliSandbox;
// After the sandboxes are made (hooks run in the order they are registered).
beforeAll(() => ({ sandbox, hanging } = boxes));
const daemonEnv = (box: CliSandbox, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => envs.env(box, extra);

/** `start --prompt hi codex` in the sandbox, not blocking this process; resolves its exit status and stderr. */
function startAsync(env: NodeJS.ProcessEnv): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'start', '--prompt', 'hi', 'codex'], { cwd: sandbox.root, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (status) => resolve({ status, stderr }));
  });
}


describe('AGENT_HARNESS_DAEMON=on', () => {
  it('runs the attempt in a daemon it starts, then in the same daemon; output, status and audit are the command\'s own', () => {
    const env = daemonEnv(sandbox);
    const first = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    const second = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    const local = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], { ...env, AGENT_HARNESS_DAEMON: 'off' });
    for (const run of [first, second, local]) expect(run.status, run.stderr).toBe(0);
    expect(first.stdout).toBe(fs.readFileSync(STREAM, 'utf8'));
    expect(second.stdout).toBe(first.stdout);
    expect(local.stdout).toBe(first.stdout);
    expect(shape(first.stderr)).toBe(shape(local.stderr));

    const [daemon, ...others] = daemons(sandbox, env);
    expect(others).toEqual([]);
    expect(daemon).toMatchObject({ served: 2, running: 0, cwd: sandbox.root });
    // The attempts ran in the daemon: it owned them. The one with the daemon off ran in its own command.
    expect(metaOf(first.stderr).owner?.pid).toBe(daemon!.pid);
    expect(metaOf(second.stderr).owner?.pid).toBe(daemon!.pid);
    expect(metaOf(local.stderr).owner?.pid).not.toBe(daemon!.pid);
    expect(metaOf(first.stderr)).toMatchObject({ status: 'finished', completion: { state: 'completed' } });
    // The engine saw what it sees when the command runs it: same directory layout, HOME, no host secret.
    const calls = fakeEngineCalls(sandbox);
    expect(calls).toHaveLength(3);
    expect(calls[0]!.home).toBe(calls[2]!.home);
    expect(calls.every((call) => !call.hasSecret)).toBe(true);
  });

  it('serves one environment: a command with another variable gets a daemon of its own, which sees that variable', () => {
    const env = daemonEnv(sandbox, { LEAKY_SECRET: 'only-here' });
    const before = daemons(sandbox, env).map((d) => d.pid);
    const run = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    expect(run.status, run.stderr).toBe(0);
    const after = daemons(sandbox, env);
    expect(after).toHaveLength(before.length + 1);
    const fresh = after.find((d) => !before.includes(d.pid))!;
    expect(metaOf(run.stderr).owner?.pid).toBe(fresh.pid);
    expect(fs.readFileSync(`/proc/${fresh.pid}/environ`, 'utf8').split('\0')).toContain('LEAKY_SECRET=only-here');
    // The harness keeps a host secret from the engine, in the daemon as in the command.
    expect(fakeEngineCalls(sandbox).at(-1)!.hasSecret).toBe(false);
  });

  it('leaves out only `_` (bash sets it to the program it runs): commands given through `time` and directly share a daemon', () => {
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'underscore') });
    const direct = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], { ...env, _: BIN });
    const timed = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], { ...env, _: '/usr/bin/time' });
    for (const run of [direct, timed]) expect(run.status, run.stderr).toBe(0);
    const [daemon, ...others] = daemons(sandbox, env);
    expect(others).toEqual([]);
    expect(daemon).toMatchObject({ served: 2 });
    expect(metaOf(timed.stderr).owner?.pid).toBe(daemon!.pid);
  });

  it('a reader that goes away (`| head`) does not end the attempt: it finishes, is sealed, and the status is the engine\'s', async () => {
    const child = spawn(process.execPath, [BIN, 'start', '--prompt', 'hi', 'codex'], { cwd: sandbox.root, env: daemonEnv(sandbox), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.destroy();
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const status = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    expect(status, stderr).toBe(0);
    expect(metaOf(stderr)).toMatchObject({ status: 'finished', completion: { state: 'completed' } });
  });

  it('passes SIGINT on: exit 130, the attempt canceled and sealed, as without the daemon', async () => {
    const { child, out, exited } = await startHanging(hanging, daemonEnv(hanging));
    try {
      child.kill('SIGINT');
      expect(await exited, out.stderr).toBe(130);
      expect(out.stderr).toMatch(/Start interrupted\. exitCode=130 \(SIGINT; engine exit /);
      expect(metaOf(out.stderr)).toMatchObject({ status: 'finished', completion: { state: 'failed', code: 'ENGINE_CANCELED' }, exit: { canceled: true } });
      expect(metaOf(out.stderr).owner?.pid).not.toBe(child.pid);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('a client killed with -9: the daemon cancels its attempt, kills the engine and seals the audit', async () => {
    const env = daemonEnv(hanging);
    const { child, out, exited } = await startHanging(hanging, env);
    const engine = path.join(hanging.prefix, 'bin', 'codex');
    expect(pidsWithMarker(engine).length).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await exited;
    const runDir = /^run_dir: (.+)$/m.exec(out.stderr)![1]!;
    const sealed = () => {
      try {
        return JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8')).status === 'finished';
      } catch {
        return false;
      }
    };
    expect(await eventually(sealed, 30_000)).toBe(true);
    expect(metaOf(out.stderr)).toMatchObject({ completion: { state: 'failed', code: 'ENGINE_CANCELED' }, exit: { canceled: true } });
    expect(await eventually(() => pidsWithMarker(engine).length === 0, 15_000)).toBe(true);
    expect(daemons(hanging, env).find((d) => d.pid === metaOf(out.stderr).owner!.pid)).toMatchObject({ running: 0 });
  });

  it('a daemon killed with -9: the client says DAEMON_LOST (exit 1), no engine is left, and `runs` seals the attempt', async () => {
    const env = daemonEnv(hanging, { AGENT_HARNESS_DAEMON_DIR: path.join(hanging.root, 'killed') });
    const { out, exited } = await startHanging(hanging, env);
    const [daemon, ...others] = daemons(hanging, env);
    expect(others).toEqual([]);
    process.kill(daemon!.pid, 'SIGKILL');
    expect(await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000))]), out.stderr).toBe(1);
    expect(out.stderr).toContain('agent-harness: error DAEMON_LOST:');
    expect(out.stderr).toContain(`hint: ${ERROR_CODES.DAEMON_LOST}`);
    // The engine's init saw its lifeline close with the daemon: nothing of the attempt runs on.
    const engine = path.join(hanging.prefix, 'bin', 'codex');
    expect(await eventually(() => pidsWithMarker(engine).length === 0, 15_000)).toBe(true);
    const runs = runCliProcess(hanging, ['runs', '--json'], { ...env, AGENT_HARNESS_DAEMON: 'off' });
    expect(runs.status, runs.stderr).toBe(0);
    expect(metaOf(out.stderr)).toMatchObject({ status: 'finished', completion: { state: 'failed', reason: 'HARNESS_INTERRUPTED' } });
    // The dead daemon's socket is cleared by the next look at the directory.
    expect(daemons(hanging, env).map((d) => d.pid)).not.toContain(daemon!.pid);
  });

  it('commands started at once start one daemon between them, and all run in it', async () => {
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'race') });
    const runs = await Promise.all([1, 2, 3].map(() => startAsync(env)));
    for (const run of runs) expect(run.status, run.stderr).toBe(0);
    const [daemon, ...others] = daemons(sandbox, env);
    expect(others).toEqual([]);
    expect(daemon).toMatchObject({ served: 3, running: 0 });
    expect(runs.map((run) => metaOf(run.stderr).owner?.pid)).toEqual([daemon!.pid, daemon!.pid, daemon!.pid]);
  });

  it('a daemon that closes the command\'s connection unanswered (ending as it connects) is tried again: a new one runs it', async () => {
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'closing') });
    expect(runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env).status).toBe(0);
    const [first] = daemons(sandbox, env);
    expect(runCliProcess(sandbox, ['daemon', 'stop'], env).status).toBe(0);
    // In its place, a listener that takes one connection, closes it without a word, and goes (as an ending daemon).
    const socketPath = path.join(env.AGENT_HARNESS_DAEMON_DIR!, `${first!.key}.sock`);
    // It stops listening before it drops the connection, as a daemon does: dropped first, the client could retry and
    // be taken by the listener in the moment between the two (a flake seen once on a loaded machine).
    const closer = net.createServer((connection) => {
      closer.close();
      connection.destroy();
    });
    await new Promise<void>((resolve) => closer.listen(socketPath, resolve));
    // Not spawnSync: this process's event loop must run, for the listener above.
    const run = await startAsync(env);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('DAEMON_UNAVAILABLE');
    const [second] = daemons(sandbox, env);
    expect(second!.pid).not.toBe(first!.pid);
    expect(metaOf(run.stderr).owner?.pid).toBe(second!.pid);
  });

  it('ends by itself after its idle time, and removes its socket', async () => {
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_IDLE_MS: '400', AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'idle') });
    const run = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    expect(run.status, run.stderr).toBe(0);
    const pid = metaOf(run.stderr).owner!.pid;
    expect(pid).not.toBe(process.pid);
    expect(await eventually(() => !alive(pid), 20_000)).toBe(true);
    // Its socket and its log: a daemon that ended as it should leaves nothing.
    expect(await eventually(() => fs.readdirSync(path.join(sandbox.root, 'idle')).length === 0, 5_000)).toBe(true);
  });

  it('keeps the next attempt\'s namespaces\' init ready while it waits; the next attempt takes it; stop ends it', async () => {
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'prepared') });
    const first = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    expect(first.status, first.stderr).toBe(0);
    const daemon = metaOf(first.stderr).owner!.pid;
    // The init the first attempt left for the next one: a child of the daemon, waiting.
    const prepared = () => childrenOf(daemon).filter((pid) => cmdline(pid).includes('namespace-init'));
    expect(await eventually(() => prepared().length === 1, 10_000)).toBe(true);
    const [ready] = prepared();
    const second = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    expect(second.status, second.stderr).toBe(0);
    expect(metaOf(second.stderr)).toMatchObject({ status: 'finished', completion: { state: 'completed' }, isolation: { network: 'namespace' } });
    // It ran the second attempt's engine and ended with it; another waits for the third.
    expect(await eventually(() => !alive(ready!) && prepared().length === 1, 10_000)).toBe(true);
    const [next] = prepared();
    expect(runCliProcess(sandbox, ['daemon', 'stop'], env).status).toBe(0);
    expect(alive(daemon)).toBe(false);
    expect(await eventually(() => !alive(next!), 10_000)).toBe(true);
  });

  it('`daemon stop` ends every daemon of the directory', () => {
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'stop') });
    expect(runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env).status).toBe(0);
    expect(runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], { ...env, EXTRA: '1' }).status).toBe(0);
    const pids = daemons(sandbox, env).map((d) => d.pid);
    expect(pids).toHaveLength(2);
    const stop = runCliProcess(sandbox, ['daemon', 'stop'], env);
    expect(stop.status, stop.stderr).toBe(0);
    expect(stop.stderr).toContain('Stopped 2 daemon(s)');
    expect(pids.filter(alive)).toEqual([]);
    expect(daemons(sandbox, env)).toEqual([]);
  });

  it('unset, is on outside a CI job: the first command runs itself and leaves a daemon starting, the next run in it', async () => {
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON: undefined, AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'by-default') });
    const first = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    expect(first.status, first.stderr).toBe(0);
    // Its stderr is the command's own: no warning, and no notice (stderr is not a terminal).
    expect(shape(first.stderr)).toBe(shape(runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], { ...env, AGENT_HARNESS_DAEMON: 'off' }).stderr));
    expect(await eventually(() => daemons(sandbox, env).length === 1, 30_000)).toBe(true);
    const [daemon] = daemons(sandbox, env);
    expect(metaOf(first.stderr).owner?.pid).not.toBe(daemon!.pid);
    // Listening, it has removed the mark of its start.
    expect(fs.readdirSync(env.AGENT_HARNESS_DAEMON_DIR!).filter((name) => name.endsWith('.starting'))).toEqual([]);
    const second = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(shape(second.stderr)).toBe(shape(first.stderr));
    expect(metaOf(second.stderr).owner?.pid).toBe(daemon!.pid);
    expect(daemons(sandbox, env)).toEqual([expect.objectContaining({ pid: daemon!.pid, served: 1 })]);
  });

  it('unset, is off in a CI job (CI, BUILD_NUMBER, TF_BUILD, …) unless CI is false or 0; set, the setting wins', async () => {
    const run = (name: string, extra: NodeJS.ProcessEnv) => {
      const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON: undefined, AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, `ci-${name}`), ...extra });
      const result = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env);
      expect(result.status, result.stderr).toBe(0);
      expect(result.stderr).not.toMatch(/DAEMON_UNAVAILABLE|attempt daemon/);
      return { env, ownerPid: metaOf(result.stderr).owner?.pid };
    };
    for (const [name, extra] of Object.entries({ ci: { CI: 'true' }, one: { CI: '1' }, jenkins: { BUILD_NUMBER: '17' }, azure: { TF_BUILD: 'True' }, codebuild: { CODEBUILD_BUILD_ID: 'b:1' }, off: { CI: 'false', AGENT_HARNESS_DAEMON: 'off' } })) {
      const { env } = run(name, extra);
      expect(daemons(sandbox, env), name).toEqual([]);
      // Nothing started, nothing marked as starting.
      expect(fs.existsSync(env.AGENT_HARNESS_DAEMON_DIR!) ? fs.readdirSync(env.AGENT_HARNESS_DAEMON_DIR!) : [], name).toEqual([]);
    }
    // Not a CI job: a daemon is left for the next command.
    const notCi = run('false', { CI: 'false', BUILD_NUMBER: '0' });
    expect(await eventually(() => daemons(sandbox, notCi.env).length === 1, 30_000)).toBe(true);
    // Asked for, the daemon runs even the first command, in a CI job too.
    const asked = run('on', { CI: 'true', AGENT_HARNESS_DAEMON: 'on' });
    expect(asked.ownerPid).toBe(daemons(sandbox, asked.env)[0]?.pid);
  });

  it('on by default, tells a terminal once that it started a daemon that outlives the command', async () => {
    const dir = path.join(sandbox.root, 'notice');
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON: undefined, AGENT_HARNESS_DAEMON_DIR: dir });
    // Under `script`, stdin and stderr are a terminal; stdout goes to a file, so the command is not live passthrough.
    const onTerminal = (out: string) => {
      const command = `${[process.execPath, BIN, 'start', '--prompt', 'hi', 'codex'].map((a) => `'${a}'`).join(' ')} > '${out}'`;
      const result = spawnSync('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: sandbox.root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
      expect(result.status, result.stdout + result.stderr).toBe(0);
      return result.stdout;
    };
    const first = onTerminal(path.join(sandbox.root, 'notice-1.jsonl'));
    expect(await eventually(() => daemons(sandbox, env).length === 1, 30_000)).toBe(true);
    const second = onTerminal(path.join(sandbox.root, 'notice-2.jsonl'));
    const [daemon] = daemons(sandbox, env);
    expect(first).toContain(`agent-harness: started an attempt daemon (pid ${daemon!.pid}) for the next commands of this environment; it ends after 120 s without one`);
    expect(second).not.toContain('attempt daemon');
    expect(fs.readFileSync(path.join(sandbox.root, 'notice-2.jsonl'), 'utf8')).toBe(fs.readFileSync(STREAM, 'utf8'));
    expect(daemon).toMatchObject({ served: 1 });
  });

  it('only attempt commands go to a daemon; --pty runs in the command', () => {
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'others') });
    expect(runCliProcess(sandbox, ['runs'], env).status).toBe(0);
    expect(runCliProcess(sandbox, ['start', '--pty', '--prompt', 'hi', 'codex'], env).status).toBe(0);
    expect(daemons(sandbox, env)).toEqual([]);
  });

  it('refuses a bad setting with CONFIG_INVALID (exit 2) before anything runs', () => {
    for (const extra of [{ AGENT_HARNESS_DAEMON: 'maybe' }, { AGENT_HARNESS_DAEMON_IDLE_MS: '10s' }]) {
      const run = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], { ...daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'bad') }), ...extra });
      expect(run.status, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/^agent-harness: error CONFIG_INVALID: AGENT_HARNESS_DAEMON/m);
      expect(run.stderr).toContain(`hint: ${ERROR_CODES.CONFIG_INVALID}`);
    }
    expect(fs.existsSync(path.join(sandbox.root, 'bad'))).toBe(false);
  });

  it('`doctor` reports the daemon: its setting, directory and running daemons; a bad setting is its failed check', () => {
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'doctor') });
    expect(runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env).status).toBe(0);
    const check = (extra: NodeJS.ProcessEnv) => {
      const run = runCliProcess(sandbox, ['doctor', '--json'], { ...env, ...extra });
      return (JSON.parse(run.stdout) as { checks: Array<{ name: string; ok: boolean; detail: string; error: { code: string } | null }> }).checks.find((c) => c.name === 'daemon');
    };
    expect(check({})).toMatchObject({ ok: true, detail: expect.stringContaining(`on (AGENT_HARNESS_DAEMON=on): daemons in ${env.AGENT_HARNESS_DAEMON_DIR} (1 running)`) });
    expect(check({ AGENT_HARNESS_DAEMON: 'off' })).toMatchObject({ ok: true, detail: 'off (AGENT_HARNESS_DAEMON=off): every command runs its attempt itself' });
    expect(check({ AGENT_HARNESS_DAEMON: undefined, CI: 'true' })).toMatchObject({ ok: true, detail: 'off (a CI job: CI is set; AGENT_HARNESS_DAEMON=on turns it on): every command runs its attempt itself' });
    expect(check({ AGENT_HARNESS_DAEMON: undefined })!.detail).toMatch(/^on \(the default outside a CI job\): daemons in /);
    // Which client the command's link starts: Perl where there is one, else Node.
    const perl = findOnPath('perl', (env.PATH ?? '').split(path.delimiter).filter(Boolean));
    expect(check({})!.detail).toContain(perl ? `the command's client is Perl (${perl})` : "the command's client is Node");
    expect(check({ PATH: path.dirname(process.execPath) === path.dirname(perl ?? '') ? '/nonexistent' : path.dirname(process.execPath) })!.detail).toContain("no perl on PATH: the command's client is Node");
    expect(check({ AGENT_HARNESS_DAEMON: 'maybe' })).toMatchObject({ ok: false, error: { code: 'CONFIG_INVALID' } });
  });

  it('does not use a daemon directory others can enter: a warning, and the attempt runs in the command', () => {
    const dir = path.join(sandbox.root, 'open');
    fs.mkdirSync(dir, { mode: 0o777 });
    fs.chmodSync(dir, 0o777);
    const run = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_DIR: dir }));
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^agent-harness: warning DAEMON_UNAVAILABLE: .*open to other users \(mode 777\).*running the attempt in this process$/m);
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(metaOf(run.stderr)).toMatchObject({ status: 'finished', completion: { state: 'completed' } });
  });

  it('on by default, says nothing of a daemon directory it cannot use: the attempt runs in the command, as with it off', () => {
    const dir = path.join(sandbox.root, 'open-by-default');
    fs.mkdirSync(dir, { mode: 0o777 });
    fs.chmodSync(dir, 0o777);
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON: undefined, AGENT_HARNESS_DAEMON_DIR: dir });
    const run = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    expect(run.status, run.stderr).toBe(0);
    expect(shape(run.stderr)).toBe(shape(runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], { ...env, AGENT_HARNESS_DAEMON: 'off' }).stderr));
    expect(fs.readdirSync(dir)).toEqual([]);
    // `doctor` is where it says why.
    const doctor = JSON.parse(runCliProcess(sandbox, ['doctor', '--json'], env).stdout) as { checks: Array<{ name: string; detail: string }> };
    expect(doctor.checks.find((c) => c.name === 'daemon')!.detail).toMatch(/^WARNING .*open to other users \(mode 777\)/);
  });

  it('a daemon started in the background is started once: the command that marks it starting starts it; a mark older than the start timeout is taken over', async () => {
    const background = client as unknown as { startDaemonInBackground(bin: string, dir: string, key: string): Promise<number | null>; socketPathFor(dir: string, key: string): string; startingPathFor(socketPath: string): string };
    const dir = fs.mkdtempSync(path.join(sandbox.root, 'background-'));
    // A stand-in for the bin: it records the arguments it was started with, as `daemon serve` would get them.
    const bin = path.join(dir, 'fake-bin.cjs');
    const started = path.join(dir, 'started.log');
    fs.writeFileSync(bin, `require('node:fs').appendFileSync(${JSON.stringify(started)}, JSON.stringify(process.argv.slice(2)) + '\\n');\n`);
    const key = 'b'.repeat(32);
    const marker = background.startingPathFor(background.socketPathFor(dir, key));
    expect(await background.startDaemonInBackground(bin, dir, key)).toEqual(expect.any(Number));
    expect(await background.startDaemonInBackground(bin, dir, key)).toBe(null);
    expect(fs.readFileSync(marker, 'utf8')).toBe(`${process.pid}\n`);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(marker, old, old);
    expect(await background.startDaemonInBackground(bin, dir, key)).toEqual(expect.any(Number));
    expect(await eventually(() => fs.existsSync(started) && fs.readFileSync(started, 'utf8').trim().split('\n').length === 2, 30_000)).toBe(true);
    const lines = fs.readFileSync(started, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as string[]);
    expect(lines).toEqual([['daemon', 'serve', '--socket', background.socketPathFor(dir, key), '--key', key], ['daemon', 'serve', '--socket', background.socketPathFor(dir, key), '--key', key]]);
  });

  it('on by default, starts no daemon where four others listen or start (an environment per command must not leave a daemon per command); dead sockets do not count', async () => {
    const max = (client as unknown as { DEFAULT_MAX_DAEMONS: number }).DEFAULT_MAX_DAEMONS;
    expect(max).toBe(4);
    const dir = fs.mkdtempSync(path.join(sandbox.root, 'crowded-'));
    // Others' daemons: three listening sockets (in a process of their own: this one blocks while a command runs) and
    // one fresh mark of a start; then the command's own starts none.
    const sockets = [0, 1, 2].map((i) => path.join(dir, `${String(i).repeat(32)}.sock`));
    const others = spawn(process.execPath, ['-e', `const net = require('node:net'); let n = 0; for (const file of ${JSON.stringify(sockets)}) net.createServer((s) => s.destroy()).listen(file, () => ++n === 3 && console.log('ready'));`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve) => others.stdout!.once('data', resolve));
    fs.writeFileSync(path.join(dir, `${'3'.repeat(32)}.starting`), '1\n');
    // And four dead sockets (daemons killed with -9 leave theirs), which do not count.
    for (const i of [5, 6, 7, 8]) fs.writeFileSync(path.join(dir, `${String(i).repeat(32)}.sock`), '');
    try {
      const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON: undefined, AGENT_HARNESS_DAEMON_DIR: dir });
      const before = fs.readdirSync(dir).sort();
      const run = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).not.toMatch(/DAEMON_UNAVAILABLE|attempt daemon/);
      expect(fs.readdirSync(dir).sort()).toEqual(before);
      // One fewer, and the command leaves its daemon starting.
      fs.rmSync(path.join(dir, `${'3'.repeat(32)}.starting`));
      expect(runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env).status).toBe(0);
      expect(await eventually(() => daemons(sandbox, env).length === 1, 30_000)).toBe(true);
    } finally {
      others.kill();
    }
  });

  it('turns down what is not an attempt command of its own environment, before running anything', async () => {
    const env = daemonEnv(sandbox);
    expect(runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], env).status).toBe(0);
    const [daemon] = daemons(sandbox, env);
    const socket = path.join(env.AGENT_HARNESS_DAEMON_DIR!, `${daemon!.key}.sock`);
    const ask = (request: object) => new Promise<Array<{ type: number; text: string }>>((resolve, reject) => {
      const reader = new client.FrameReader();
      const frames: Array<{ type: number; text: string }> = [];
      const connection = net.connect(socket);
      connection.on('data', (chunk: Buffer) => frames.push(...reader.push(chunk).map((f) => ({ type: f.type, text: f.payload.toString('utf8') }))));
      connection.on('error', reject);
      connection.on('close', () => resolve(frames));
      connection.write(`${JSON.stringify(request)}\n`);
    });
    const refused = (frames: Array<{ type: number; text: string }>) => frames.filter((f) => f.type === client.FRAME.refused).map((f) => (JSON.parse(f.text) as { reason: string }).reason);
    expect(refused(await ask({ v: client.PROTOCOL, key: 'f'.repeat(32), argv: ['start', '--prompt', 'hi', 'codex'] }))).toEqual([expect.stringContaining('another environment')]);
    expect(refused(await ask({ v: client.PROTOCOL, key: daemon!.key, argv: ['daemon', 'serve'] }))).toEqual(['"daemon" is not an attempt command']);
    expect(refused(await ask({ v: 99, key: daemon!.key, argv: ['start'] }))).toEqual([`protocol 99, not ${client.PROTOCOL}`]);
    expect(refused(await ask([1, 2]))).toEqual(['the request is not a JSON object']);
    expect(refused(await ask({ v: client.PROTOCOL, key: daemon!.key, argv: ['start', 'x'.repeat(1 << 20)] }))).toEqual([`the request is longer than ${1 << 20} bytes`]);
    expect(daemons(sandbox, env)[0]).toMatchObject({ pid: daemon!.pid, served: daemon!.served });
  });

  it('in a checkout whose sources changed since it started, turns the command down quietly and ends; the command runs the new code', async () => {
    // A copy of the package (its node_modules linked), so that editing its sources leaves this checkout's alone.
    const copy = path.join(sandbox.root, 'package-copy');
    for (const entry of ['bin', 'dist', 'src', 'runtime', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
      fs.cpSync(path.join(REPO, entry), path.join(copy, entry), { recursive: true, preserveTimestamps: true });
    }
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(copy, 'node_modules'));
    const bin = path.join(copy, 'bin', 'agent-harness.js');
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'copy-daemons') });
    const run = () => {
      const result = spawnSync(process.execPath, [bin, 'start', '--prompt', 'hi', 'codex'], { cwd: sandbox.root, env, encoding: 'utf8', timeout: 120_000 });
      expect(result.status, result.stderr).toBe(0);
      return result;
    };
    const first = run();
    const daemon = metaOf(first.stderr).owner!.pid;
    expect(daemon).not.toBe(first.pid);
    const edited = path.join(copy, 'src', 'cli', 'daemon.ts');
    fs.appendFileSync(edited, '\n');
    const second = run();
    expect(second.stderr).not.toContain('DAEMON_UNAVAILABLE');
    expect(metaOf(second.stderr).owner!.pid).toBe(second.pid);
    expect(await eventually(() => !alive(daemon), 20_000)).toBe(true);
  });

  it('a daemon whose directory was replaced at its path turns the command down quietly and ends; the command runs itself', async () => {
    const project = path.join(sandbox.root, 'project');
    const make = () => {
      fs.mkdirSync(project);
      fs.writeFileSync(path.join(project, 'package.json'), '{"name":"replaced","private":true}\n');
    };
    make();
    const env = daemonEnv(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'replaced') });
    const run = () => {
      const result = spawnSync(process.execPath, [BIN, 'start', '--prompt', 'hi', 'codex'], { cwd: project, env, encoding: 'utf8', timeout: 120_000 });
      expect(result.status, result.stderr).toBe(0);
      return result;
    };
    const first = run();
    const daemon = metaOf(first.stderr).owner!.pid;
    expect(daemon).not.toBe(first.pid);
    fs.renameSync(project, `${project}-old`);
    make();
    const second = run();
    expect(second.stderr).not.toContain('DAEMON_UNAVAILABLE');
    expect(metaOf(second.stderr).owner!.pid).toBe(second.pid);
    expect(metaOf(second.stderr).command.cwd.startsWith(project)).toBe(true);
    expect(await eventually(() => !alive(daemon), 20_000)).toBe(true);
    // The next command starts a daemon in the new directory.
    const third = run();
    expect(metaOf(third.stderr).owner!.pid).not.toBe(third.pid);
  });

  it('prints the same hints as the rest of the command, and knows its attempt commands: start, resume, every engine', () => {
    for (const [code, hint] of Object.entries(client.HINTS)) expect(hint).toBe(ERROR_CODES[code as keyof typeof ERROR_CODES]);
    expect([...client.ATTEMPT_COMMANDS].sort()).toEqual(['start', 'resume', ...engineIds()].sort());
  });
});
