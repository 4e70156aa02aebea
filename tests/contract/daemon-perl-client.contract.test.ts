/**
 * The command's link run as a user's shell runs it (issue 13): bin/agent-harness.js is a sh line for sh and a
 * script for Node. Off, the sh line starts Node on it, arguments and status unchanged. With the daemon on
 * (AGENT_HARNESS_DAEMON=on, or unset outside a CI job) it starts the Perl client (bin/daemon-client.pl), which names the daemon as the Node client does, relays its output,
 * signals and status, and hands everything else to the Node client. What it must keep is what the Node client keeps:
 * the command's output, status and audit, one daemon per environment, signals, a dead client or daemon losing no
 * audit. The engine is the fake codex of the CLI tests.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors/codes.js';
import { fakeEngineCalls, REPO, runCliProcess, type CliSandbox } from '../helpers/cli.js';
import { alive, daemons, metaOf, runCommand, shape, spawnCommand, startHanging, useDaemonSandboxes, nodeClient, DONE_STREAM, type Hanging } from '../helpers/daemon.js';
import { eventually, pidsWithMarker } from '../helpers/processes.js';

const PERL_CLIENT = path.join(REPO, 'bin', 'daemon-client.pl');
const STREAM = DONE_STREAM;
const boxes = useDaemonSandboxes(STREAM);
const { envs } = boxes;
let sandbox: CliSandbox;
let hanging: CliSandbox;
// After the sandboxes are made (hooks run in the order they are registered).
beforeAll(() => ({ sandbox, hanging } = boxes));

/** The executable a process runs now ('' once it is gone). */
function executableOf(pid: number): string {
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return '';
  }
}

/**
 * Starts the hanging command twice in `env`: the first (which finds no daemon, so the Node client starts one) is
 * interrupted; the second runs through the Perl client, which the returned command is.
 */
async function startHangingThroughPerl(env: NodeJS.ProcessEnv): Promise<Hanging> {
  const warm = await startHanging(hanging, env, 'bin');
  warm.child.kill('SIGINT');
  await warm.exited;
  const started = await startHanging(hanging, env, 'bin');
  expect(path.basename(executableOf(started.child.pid!))).toMatch(/^perl/);
  return started;
}

/** Runs `code` in Perl with the client loaded (not run), in `env`; its stdout. */
function perlWithClient(code: string, env: NodeJS.ProcessEnv = process.env, cwd = REPO): string {
  const result = spawnSync('perl', ['-e', `do ${JSON.stringify(PERL_CLIENT)} or die "$@$!"; ${code}`], { env, cwd, encoding: 'utf8' });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}


describe('the bin run as an executable, the daemon off', () => {
  it('is Node on the same file: the same arguments (spaces, quotes, $, non-ASCII), output and exit status', () => {
    const odd = `a b "c" 'd' $HOME \\ ü 😀 -- --pty`;
    const byNode = runCommand('node', sandbox, ['resume', odd, 'hi'], sandbox.env);
    const byBin = runCommand('bin', sandbox, ['resume', odd, 'hi'], sandbox.env);
    expect(byNode.status).not.toBe(0);
    expect(byBin.status).toBe(byNode.status);
    expect(byBin.stderr).toBe(byNode.stderr);
    expect(byBin.stderr).toContain(`error RUN_NOT_FOUND: No run matches "${odd}"`);
    expect(runCommand('bin', sandbox, ['--version'], sandbox.env).stdout).toBe(`${JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')).version}\n`);
  });

  it('with the daemon on but no Perl on PATH, is Node on the same file', () => {
    const noPerl = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-noperl-'));
    try {
      fs.symlinkSync(process.execPath, path.join(noPerl, 'node'));
      const run = runCommand('bin', sandbox, ['--version'], { ...sandbox.env, PATH: noPerl, AGENT_HARNESS_DAEMON: 'on' });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
    } finally {
      fs.rmSync(noPerl, { recursive: true, force: true });
    }
  });
});

describe('the Perl client (the bin run as an executable, AGENT_HARNESS_DAEMON=on)', () => {
  it('names the daemon as the Node client does, for any environment (property)', () => {
    // One Perl and one Node process compute the names of the same generated environments, in the same directory.
    // Names and values of any well-formed text: JSON's escapes, controls, characters past U+FFFF (which sort
    // differently by UTF-16 units than by code points), combining marks.
    const unit = (...specials: string[]) => fc.oneof(fc.constantFrom(...specials), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }));
    const name = fc.string({ unit: unit('A', '_', 'é', '\ue000', '\uffff', '😀', '𝒜'), minLength: 1, maxLength: 8 }).filter((text) => !text.includes('=') && !text.includes('\0'));
    const value = fc.string({ unit: unit('"', '\\', '\n', '\t', '\u0001', '\u001f', '\u007f', '\u2028', '\ud7ff', '\ue000', '😀', 'é'), maxLength: 30 }).filter((text) => !text.includes('\0'));
    // PATH's first `node` is this Node, as the bin's `exec node` would find it.
    const nodeDir = path.join(sandbox.root, 'node-bin');
    fs.mkdirSync(nodeDir, { recursive: true });
    if (!fs.existsSync(path.join(nodeDir, 'node'))) fs.symlinkSync(process.execPath, path.join(nodeDir, 'node'));
    // With `_` (bash's program path), which both leave out of the name: one of them alone, and beside a variable.
    const samples = [...fc.sample(fc.dictionary(name, value, { maxKeys: 12 }), { numRuns: 150, seed: 13 }), { _: '/usr/bin/time', ONLY_HERE: '1' }, { _: '/usr/bin/env' }];
    const environments = [...new Map(samples.map((extra) => {
      const env: Record<string, string> = { ...extra, PATH: `${nodeDir}:${process.env.PATH}` };
      return [JSON.stringify(Object.entries(env).filter(([key]) => key !== '_').sort()), env] as const;
    })).values()];
    const file = path.join(sandbox.root, 'environments.txt');
    const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');
    fs.writeFileSync(file, environments.map((env) => Object.entries(env).map(([k, v]) => `${hex(k)}=${hex(v)}`).join(' ')).join('\n'));
    const perl = perlWithClient(`open(my $in, '<', ${JSON.stringify(file)}) or die; while (my $line = <$in>) { chomp $line; %ENV = map { map { pack('H*', $_) } split /=/, $_, 2 } split / /, $line; print +(AgentHarness::DaemonClient::daemon_key() // 'undef'), "\\n"; }`, process.env, sandbox.root).trim().split('\n');
    const nodeScript = `const d = require(${JSON.stringify(path.join(REPO, 'bin', 'daemon-client.js'))}); const fs = require('node:fs');
      const bundle = ${JSON.stringify(path.join(REPO, 'dist', 'bundle', 'main.cjs'))};
      const code = d.fileStamp(fs.existsSync(bundle) ? bundle : ${JSON.stringify(path.join(REPO, 'dist', 'cli', 'main.js'))});
      for (const env of JSON.parse(fs.readFileSync(0, 'utf8'))) console.log(d.daemonKey(code, env));`;
    const scriptFile = path.join(sandbox.root, 'keys.cjs');
    fs.writeFileSync(scriptFile, nodeScript);
    const node = spawnSync(process.execPath, [scriptFile], { cwd: sandbox.root, input: JSON.stringify(environments), encoding: 'utf8' });
    expect(node.status, node.stderr).toBe(0);
    const nodeKeys = node.stdout.trim().split('\n');
    expect(perl).toHaveLength(environments.length);
    expect(new Set(nodeKeys).size).toBe(environments.length);
    perl.forEach((key, index) => expect(key, JSON.stringify(environments[index])).toBe(nodeKeys[index]));
  });

  it('speaks the Node client\'s protocol: version, frames, attempt commands, the DAEMON_LOST hint', () => {
    const perl = JSON.parse(perlWithClient(`print '{"protocol":' . $AgentHarness::DaemonClient::PROTOCOL . ',"commands":["' . join('","', @AgentHarness::DaemonClient::ATTEMPT_COMMANDS) . '"],"frames":{' . join(',', map { qq("$_":$AgentHarness::DaemonClient::FRAME{$_}) } sort keys %AgentHarness::DaemonClient::FRAME) . '},"hint":' . AgentHarness::DaemonClient::json_string($AgentHarness::DaemonClient::DAEMON_LOST_HINT) . '}'`)) as { protocol: number; commands: string[]; frames: Record<string, number>; hint: string };
    expect(perl.protocol).toBe(nodeClient.PROTOCOL);
    expect(perl.commands).toEqual([...nodeClient.ATTEMPT_COMMANDS]);
    expect(perl.frames).toEqual(nodeClient.FRAME);
    expect(perl.hint).toBe(ERROR_CODES.DAEMON_LOST);
  });

  it('tells a CI job as the Node client does: the same variables, the same values turn the default off', () => {
    const ci = nodeClient as unknown as { CI_VARIABLES: string[]; ciVariable(env: NodeJS.ProcessEnv): string | null };
    expect(perlWithClient(`print join(' ', @AgentHarness::DaemonClient::CI_VARIABLES)`)).toBe(ci.CI_VARIABLES.join(' '));
    const cases: NodeJS.ProcessEnv[] = [{}, { CI: 'true' }, { CI: 'false' }, { CI: ' FALSE ' }, { CI: '0' }, { CI: '' }, { CI: 'false', BUILD_NUMBER: '3' }, { TF_BUILD: 'True' }, { CONTINUOUS_INTEGRATION: '1' }, { CODEBUILD_BUILD_ID: 'x' }, { CI: 'false', TF_BUILD: '0' }];
    for (const extra of cases) {
      const env = { PATH: process.env.PATH, ...extra };
      expect(perlWithClient(`print AgentHarness::DaemonClient::ci_variable() // 'none'`, env), JSON.stringify(extra)).toBe(ci.ciVariable(env) ?? 'none');
    }
  });

  it('unset, is the client outside a CI job once a daemon listens; in a CI job, the command is Node and starts none', async () => {
    const env = envs.env(hanging, { AGENT_HARNESS_DAEMON: undefined, AGENT_HARNESS_DAEMON_DIR: path.join(hanging.root, 'by-default') });
    // The first finds no daemon: Node runs it, then starts one for the next.
    const first = await startHanging(hanging, env, 'bin');
    expect(path.basename(executableOf(first.child.pid!))).toMatch(/^node/);
    first.child.kill('SIGINT');
    expect(await first.exited, first.out.stderr).toBe(130);
    expect(await eventually(() => daemons(hanging, env).length === 1, 30_000)).toBe(true);
    const second = await startHanging(hanging, env, 'bin');
    try {
      expect(path.basename(executableOf(second.child.pid!))).toMatch(/^perl/);
    } finally {
      second.child.kill('SIGINT');
    }
    expect(await second.exited, second.out.stderr).toBe(130);
    expect(metaOf(second.out.stderr).owner?.pid).toBe(daemons(hanging, env)[0]!.pid);
    const inCi = { ...env, CI: 'true', AGENT_HARNESS_DAEMON_DIR: path.join(hanging.root, 'in-ci') };
    const job = await startHanging(hanging, inCi, 'bin');
    expect(path.basename(executableOf(job.child.pid!))).toMatch(/^node/);
    job.child.kill('SIGINT');
    expect(await job.exited, job.out.stderr).toBe(130);
    expect(metaOf(job.out.stderr).owner?.pid).toBe(job.child.pid);
    expect(daemons(hanging, inCi)).toEqual([]);
  });

  it('runs the attempt in the daemon the Node client started: output, status and audit are the command\'s own', () => {
    const env = envs.env(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'shared') });
    // The first finds no daemon: the Perl client hands it to the Node client, which starts one.
    const first = runCommand('bin', sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    const second = runCommand('bin', sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    const byNode = runCommand('node', sandbox, ['start', '--prompt', 'hi', 'codex'], env);
    const local = runCommand('bin', sandbox, ['start', '--prompt', 'hi', 'codex'], { ...env, AGENT_HARNESS_DAEMON: 'off' });
    for (const run of [first, second, byNode, local]) expect(run.status, run.stderr).toBe(0);
    for (const run of [second, byNode, local]) {
      expect(run.stdout).toBe(first.stdout);
      expect(shape(run.stderr)).toBe(shape(first.stderr));
    }
    expect(first.stdout).toBe(fs.readFileSync(STREAM, 'utf8'));
    const [daemon, ...others] = daemons(sandbox, env);
    expect(others).toEqual([]);
    expect(daemon).toMatchObject({ served: 3, running: 0 });
    for (const run of [first, second, byNode]) expect(metaOf(run.stderr).owner?.pid).toBe(daemon!.pid);
    expect(metaOf(local.stderr).owner?.pid).toBe(local.pid);
    expect(fakeEngineCalls(sandbox).every((call) => !call.hasSecret)).toBe(true);
  });

  it('is a Perl process while the attempt runs (no Node started), and passes SIGINT on: exit 130, the attempt sealed', async () => {
    const env = envs.env(hanging, { AGENT_HARNESS_DAEMON_DIR: path.join(hanging.root, 'sigint') });
    // The first command starts the daemon through the Node client (the Perl client found none): a Node process.
    const first = await startHanging(hanging, env, 'bin');
    expect(path.basename(executableOf(first.child.pid!))).toMatch(/^node/);
    first.child.kill('SIGINT');
    expect(await first.exited, first.out.stderr).toBe(130);
    const second = await startHanging(hanging, env, 'bin');
    try {
      expect(path.basename(executableOf(second.child.pid!))).toMatch(/^perl/);
      second.child.kill('SIGINT');
      expect(await second.exited, second.out.stderr).toBe(130);
      expect(second.out.stderr).toMatch(/Start interrupted\. exitCode=130 \(SIGINT; engine exit /);
      expect(metaOf(second.out.stderr)).toMatchObject({ status: 'finished', completion: { state: 'failed', code: 'ENGINE_CANCELED' }, exit: { canceled: true } });
      expect(metaOf(second.out.stderr).owner?.pid).toBe(metaOf(first.out.stderr).owner?.pid);
    } finally {
      second.child.kill('SIGKILL');
    }
  });

  it('killed with -9: the daemon cancels its attempt, kills the engine and seals the audit', async () => {
    const env = envs.env(hanging, { AGENT_HARNESS_DAEMON_DIR: path.join(hanging.root, 'client-killed') });
    const { child, out, exited } = await startHangingThroughPerl(env);
    const engine = path.join(hanging.prefix, 'bin', 'codex');
    child.kill('SIGKILL');
    await exited;
    const sealed = () => {
      try {
        return metaOf(out.stderr).status === 'finished';
      } catch {
        return false;
      }
    };
    expect(await eventually(sealed, 30_000)).toBe(true);
    expect(metaOf(out.stderr)).toMatchObject({ completion: { state: 'failed', code: 'ENGINE_CANCELED' }, exit: { canceled: true } });
    expect(await eventually(() => pidsWithMarker(engine).length === 0, 15_000)).toBe(true);
  });

  it('its daemon killed with -9: DAEMON_LOST with the Node client\'s words (exit 1), and `runs` seals the attempt', async () => {
    const env = envs.env(hanging, { AGENT_HARNESS_DAEMON_DIR: path.join(hanging.root, 'daemon-killed') });
    const { child, out, exited } = await startHangingThroughPerl(env);
    const [daemon] = daemons(hanging, env);
    process.kill(daemon!.pid, 'SIGKILL');
    expect(await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000))]), out.stderr).toBe(1);
    expect(out.stderr).toContain(`agent-harness: error DAEMON_LOST: the daemon (pid ${daemon!.pid}) ended before the attempt finished; its audit is sealed by the next \`agent-harness runs\`.\n  hint: ${ERROR_CODES.DAEMON_LOST}\n`);
    const engine = path.join(hanging.prefix, 'bin', 'codex');
    expect(await eventually(() => pidsWithMarker(engine).length === 0, 15_000)).toBe(true);
    expect(runCliProcess(hanging, ['runs', '--json'], { ...env, AGENT_HARNESS_DAEMON: 'off' }).status).toBe(0);
    expect(metaOf(out.stderr)).toMatchObject({ status: 'finished', completion: { state: 'failed', reason: 'HARNESS_INTERRUPTED' } });
  });

  it('a reader that goes away (`| head`) does not end the attempt: it finishes, is sealed, and the status is the engine\'s', async () => {
    const env = envs.env(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'head') });
    expect(runCommand('bin', sandbox, ['start', '--prompt', 'hi', 'codex'], env).status).toBe(0);
    const child = spawnCommand('bin', ['start', '--prompt', 'hi', 'codex'], { cwd: sandbox.root, env });
    child.stdout!.destroy();
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const status = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    expect(status, stderr).toBe(0);
    expect(metaOf(stderr)).toMatchObject({ status: 'finished', completion: { state: 'completed' } });
    expect(metaOf(stderr).owner?.pid).toBe(daemons(sandbox, env)[0]!.pid);
  });

  it('a daemon whose sources changed turns it down: the command runs the new code itself, quietly, and the daemon ends', async () => {
    // A copy of the package (node_modules linked), so that editing its sources leaves this checkout's alone.
    const copy = path.join(sandbox.root, 'package-copy');
    for (const entry of ['bin', 'dist', 'src', 'runtime', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
      fs.cpSync(path.join(REPO, entry), path.join(copy, entry), { recursive: true, preserveTimestamps: true });
    }
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(copy, 'node_modules'));
    // Through a link, as npm installs the bin: the Perl client finds itself and the build beside the link's target.
    const link = path.join(sandbox.root, 'link-bin');
    fs.mkdirSync(link);
    fs.symlinkSync(path.join('..', 'package-copy', 'bin', 'agent-harness.js'), path.join(link, 'agent-harness'));
    const env = envs.env(sandbox, { AGENT_HARNESS_DAEMON_DIR: path.join(sandbox.root, 'copy-daemons') });
    const run = () => {
      const result = spawnSync(path.join(link, 'agent-harness'), ['start', '--prompt', 'hi', 'codex'], { cwd: sandbox.root, env, encoding: 'utf8', timeout: 120_000 });
      expect(result.status, result.stderr).toBe(0);
      return result;
    };
    const first = run();
    const daemon = metaOf(first.stderr).owner!.pid;
    expect(daemon).not.toBe(first.pid);
    const second = run();
    expect(metaOf(second.stderr).owner!.pid).toBe(daemon);
    fs.appendFileSync(path.join(copy, 'src', 'cli', 'daemon.ts'), '\n');
    const third = run();
    expect(third.stderr).not.toContain('DAEMON_UNAVAILABLE');
    expect(metaOf(third.stderr).owner!.pid).toBe(third.pid);
    expect(await eventually(() => !alive(daemon), 20_000)).toBe(true);
  });
});
