/**
 * The harness's own files in a run directory, which is the engine's working directory: whatever the agent puts at
 * their paths (a FIFO, a symlink, a directory) neither hangs the harness nor redirects its writes. The opener refuses
 * them at once; a new attempt removes what an earlier agent planted at its audit paths and says so; the model
 * server keeps answering when its request log is replaced by a FIFO. CLI runs are bounded by spawnSync's timeout, so a
 * hang fails the test instead of holding it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditWriteFailures } from '../../src/core/audit-files.js';
import { EventSpool } from '../../src/core/event-spool.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { appendOwnFileSync, openOwnFile, writeOwnFileSync } from '../../src/runtime/own-file.js';
import { createCliSandbox, installFakeEngine, REPO, runCliProcess } from '../helpers/cli.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-own-files-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function mkfifo(file: string): void {
  expect(spawnSync('mkfifo', [file]).status).toBe(0);
}

/** The code of what `fn` throws (null when it does not). */
function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (error) {
    return isAgentHarnessError(error) ? error.code : String((error as NodeJS.ErrnoException).code);
  }
}

describe('openOwnFile', () => {
  it('writes, appends and truncates a regular file', () => {
    const file = path.join(tmp, 'plain.log');
    writeOwnFileSync(file, 'a\n');
    appendOwnFileSync(file, 'b\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('a\nb\n');
    writeOwnFileSync(file, 'c\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('c\n');
  });

  it('refuses at once a FIFO (read or not), a symlink (its target untouched) and a directory: AUDIT_WRITE_FAILED', () => {
    const fifo = path.join(tmp, 'fifo.log');
    mkfifo(fifo);
    const target = path.join(tmp, 'target.txt');
    fs.writeFileSync(target, 'precious\n');
    const link = path.join(tmp, 'link.log');
    fs.symlinkSync(target, link);
    const dir = path.join(tmp, 'dir.log');
    fs.mkdirSync(dir);
    for (const file of [fifo, link, dir]) {
      for (const mode of ['append', 'truncate', 'readwrite'] as const)
        expect(
          codeOf(() => fs.closeSync(openOwnFile(file, mode))),
          `${file} ${mode}`,
        ).toBe('AUDIT_WRITE_FAILED');
    }
    expect(codeOf(() => writeOwnFileSync(link, 'x'))).toBe('AUDIT_WRITE_FAILED');
    expect(fs.readFileSync(target, 'utf8')).toBe('precious\n');
    // A FIFO somebody reads: opened read-write it would not block either, and it is still refused.
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      expect(codeOf(() => appendOwnFileSync(fifo, 'x'))).toBe('AUDIT_WRITE_FAILED');
    } finally {
      fs.closeSync(reader);
    }
  });

  it('an event spool whose file is refused, or whose writes fail, keeps its events in memory and records the failure', () => {
    const fifo = path.join(tmp, 'rasp.9.jsonl');
    mkfifo(fifo);
    const refused = new AuditWriteFailures();
    const atFifo = new EventSpool<unknown>(fifo, refused, 0);
    atFifo.push({ a: 1 });
    expect(refused.list).toEqual([expect.objectContaining({ file: fifo })]);
    expect([...atFifo.events()]).toEqual([{ a: 1 }]);

    const failing = new AuditWriteFailures();
    const file = path.join(tmp, 'rasp.10.jsonl');
    const spool = new EventSpool<unknown>(file, failing, 0);
    spool.push({ first: true });
    // The descriptor goes away under it: the next write fails (EBADF), as a full disk's would (ENOSPC).
    fs.closeSync((spool as unknown as { fd: number }).fd);
    spool.push({ second: true });
    spool.push({ third: true });
    expect(failing.list).toEqual([expect.objectContaining({ file, errno: 'EBADF' })]);
    expect(spool.inMemory).toBe(false);
    (spool as unknown as { fd: number | null }).fd = null;
    expect([...spool.events()]).toEqual([{ first: true }, { second: true }, { third: true }]);
  });
});

describe('an attempt after an agent planted files at its audit paths', () => {
  it('resume removes them, says so, and neither hangs on a FIFO nor writes through a symlink', () => {
    const sandbox = createCliSandbox();
    try {
      installFakeEngine(sandbox, 'codex', {
        stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl'),
      });
      const started = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex']);
      expect(started.status, started.stderr).toBe(0);
      const handle = /^Run handle: (.+)$/m.exec(started.stderr)![1]!;
      const audit = path.join(/^Run directory: (.+)$/m.exec(started.stderr)![1]!, '.audit');
      // What the first attempt's agent could leave for the next one: .audit is in its working directory.
      mkfifo(path.join(audit, 'stdout.2.log'));
      mkfifo(path.join(audit, 'model-requests.2.jsonl'));
      const target = path.join(sandbox.root, 'precious.txt');
      fs.writeFileSync(target, 'precious\n');
      fs.symlinkSync(target, path.join(audit, 'rasp.2.jsonl'));
      fs.mkdirSync(path.join(audit, 'stdin.2.log'));

      const resumed = runCliProcess(sandbox, ['resume', handle, 'again']);
      expect(resumed.status, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('Resume complete. exitCode=0');
      expect(fs.readFileSync(target, 'utf8')).toBe('precious\n');
      for (const name of ['stdout.2.log', 'model-requests.2.jsonl', 'rasp.2.jsonl', 'stdin.2.log']) {
        expect(fs.lstatSync(path.join(audit, name)).isFile(), name).toBe(true);
      }
      expect(fs.readFileSync(path.join(audit, 'stdin.2.log'), 'utf8')).toBe('again\n');
      const diagnostic = fs
        .readFileSync(path.join(audit, 'rasp.2.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { data: { type: string; diagnostic?: { code: string; message: string } } })
        .find((event) => event.data.diagnostic?.code === 'AUDIT_PATH_OCCUPIED');
      expect(diagnostic?.data.diagnostic?.message).toMatch(
        /stdin\.2\.log.*stdout\.2\.log.*rasp\.2\.jsonl.*model-requests\.2\.jsonl/,
      );
      const meta = JSON.parse(fs.readFileSync(path.join(audit, 'meta.2.json'), 'utf8')) as {
        completion: { state: string };
        error: unknown;
      };
      expect(meta.error).toBeNull();
    } finally {
      sandbox.cleanup();
    }
  });
});

describe('the model server with a FIFO for its request log', () => {
  it('answers, keeps the requests, stops logging and says why', async () => {
    const log = path.join(tmp, 'requests.jsonl');
    mkfifo(log);
    const errors: Error[] = [];
    const server = await startModelServer({ logFile: log, onLogError: (error) => errors.push(error) });
    try {
      for (let i = 0; i < 2; i += 1) {
        const response = await fetch(`${server.url}/v1/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm', input: 'hi', stream: true }),
        });
        expect(response.status).toBe(200);
        await response.text();
      }
      expect(server.requests).toHaveLength(2);
      expect(errors).toHaveLength(1);
      expect(server.logError?.message).toMatch(/not a regular file/);
    } finally {
      await server.close();
    }
  });
});

describe('the git diff of an attempt runs nothing the agent put in its repository', () => {
  it('hooks, fsmonitor, a clean filter, an external diff and a textconv written by the agent never run on the host', () => {
    const sandbox = createCliSandbox();
    try {
      const marker = path.join(sandbox.root, 'ran-on-host');
      // The agent sees its managed prefix, not the fixtures or the sandbox (its mount namespace): its stream and the
      // switch below live there.
      const stream = path.join(sandbox.prefix, 'done-marker.stdout.jsonl');
      fs.copyFileSync(path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl'), stream);
      const equalsSwitch = path.join(sandbox.prefix, 'name-with-equals');
      // The agent: makes its run dir a repository when it is not one, then arms every way git could run a command.
      const engine = `#!/usr/bin/env node
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const git = (...args) => execFileSync('git', args, { env: { ...process.env, GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' }, stdio: 'ignore' });
if (!fs.existsSync('.git')) { git('init', '-q'); git('commit', '-q', '--allow-empty', '-m', 'agent'); }
const run = (what) => 'sh -c ' + JSON.stringify('echo ' + what + ' >> ${marker}; cat');
fs.mkdirSync('.git/hooks', { recursive: true });
for (const hook of ['post-index-change', 'pre-auto-gc', 'post-checkout']) fs.writeFileSync('.git/hooks/' + hook, '#!/bin/sh\\necho hook >> ${marker}\\n', { mode: 0o755 });
fs.appendFileSync('.git/config', '[core]\\n\\tfsmonitor = ' + JSON.stringify(run('fsmonitor')) + '\\n[filter "Evil.x"]\\n\\tclean = ' + JSON.stringify(run('clean')) + '\\n\\tprocess = ' + JSON.stringify(run('process')) + '\\n\\trequired = true\\n[diff]\\n\\texternal = ' + JSON.stringify(run('external')) + '\\n[diff "evil"]\\n\\ttextconv = ' + JSON.stringify(run('textconv')) + '\\n');
fs.writeFileSync('.gitattributes', '* filter=Evil.x diff=evil\\n');
// A driver whose name cannot be overridden on git's command line: then the harness runs no git at all.
if (fs.existsSync(${JSON.stringify(equalsSwitch)})) fs.appendFileSync('.git/config', '[filter "a=b"]\\n\\tclean = ' + JSON.stringify(run('equals')) + '\\n');
fs.writeFileSync('work.txt', 'the agent was here\\n');
process.stdout.write(fs.readFileSync(${JSON.stringify(stream)}));
`;
      fs.writeFileSync(path.join(sandbox.prefix, 'bin', 'codex'), engine, { mode: 0o755 });
      const template = path.join(sandbox.root, 'template');
      fs.mkdirSync(template);
      fs.writeFileSync(path.join(template, 'README.md'), 'seed\n');
      for (const args of [['--template', template], []]) {
        const run = runCliProcess(sandbox, ['start', ...args, '--prompt', 'hi', 'codex']);
        expect(run.status, run.stderr).toBe(0);
        const audit = path.join(/^Run directory: (.+)$/m.exec(run.stderr)![1]!, '.audit');
        expect(
          fs.existsSync(marker),
          `${args.join(' ') || 'no template'}: ${fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''}`,
        ).toBe(false);
        // The diff is still taken, unfiltered: the agent's file as it is on disk.
        expect(fs.readFileSync(path.join(audit, 'git-diff.1.patch'), 'utf8')).toContain('+the agent was here');
      }
      fs.writeFileSync(equalsSwitch, '');
      const run = runCliProcess(sandbox, ['start', '--template', template, '--prompt', 'hi', 'codex']);
      expect(run.status, run.stderr).toBe(0);
      expect(fs.existsSync(marker)).toBe(false);
      expect(
        fs.existsSync(path.join(/^Run directory: (.+)$/m.exec(run.stderr)![1]!, '.audit', 'git-diff.1.patch')),
      ).toBe(false);
    } finally {
      sandbox.cleanup();
    }
  });
});
