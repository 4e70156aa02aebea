/**
 * The agent's filesystem as a plan (request → mounts), over real directories and symlinks: what is bound, how, in
 * which order, how `expose` is read; and, where this machine can contain a filesystem, the plan carried out by the
 * namespace init for a stand-in engine (a shell), with no engine CLI.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openIsolation } from '../../src/runtime/isolation/attempt-isolation.js';
import { hostPathRule } from '../../src/runtime/isolation/host-path-rule.js';
import { buildMountPlan, installationRoot, resolveExpose } from '../../src/runtime/isolation/mount-plan.js';
import { fstabEscape, planFstab, writeNewRoot } from '../../src/runtime/isolation/new-root.js';
import { probeNamespaces } from '../../src/runtime/isolation/probe.js';
import { superviseSplit } from '../../src/runtime/process.js';
import { thrownBy } from '../helpers/errors.js';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-plan-')));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A small host tree: a project with a workspace, a managed home, an engine installed through a symlinked node_modules. */
function tree(name: string) {
  const root = path.join(tmp, name);
  const workspace = path.join(root, 'project', 'runs', 'run-1');
  const home = path.join(root, 'project', 'cache', 'home');
  const store = path.join(root, 'store', 'node_modules');
  fs.mkdirSync(path.join(workspace, '.audit'), { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(path.join(store, 'engine', 'bin'), { recursive: true });
  fs.mkdirSync(path.join(store, '.bin'), { recursive: true });
  fs.writeFileSync(path.join(store, 'engine', 'bin', 'cli.js'), '');
  fs.symlinkSync('../engine/bin/cli.js', path.join(store, '.bin', 'engine'));
  fs.symlinkSync(store, path.join(root, 'project', 'node_modules'));
  return { root, workspace, home, store, executable: path.join(root, 'project', 'node_modules', '.bin', 'engine') };
}

describe('mount plan', () => {
  it('binds the system read-only, copies its symlinks, the workspace read-write and .audit read-only over it', () => {
    const t = tree('basic');
    const plan = buildMountPlan({
      workspace: t.workspace,
      readOnlyInWorkspace: [path.join(t.workspace, '.audit')],
      writable: [t.home],
      readOnly: [t.executable, installationRoot(t.executable)],
      expose: [],
    });
    const binds = plan.mounts.filter((m) => m.fstype === 'none' && !m.inRoot);
    const usr = binds.find((m) => m.target === '/usr');
    expect(usr).toMatchObject({ source: '/usr', options: expect.stringMatching(/^bind,ro/) });
    // A merged-/usr system's /bin is a symlink: it is made as one, not bound.
    if (fs.lstatSync('/bin').isSymbolicLink())
      expect(plan.skeleton).toContainEqual({ type: 'link', path: '/bin', target: fs.readlinkSync('/bin') });
    const workspace = binds.findIndex((m) => m.target === t.workspace);
    const audit = binds.findIndex((m) => m.target === path.join(t.workspace, '.audit'));
    expect(binds[workspace]!.options).toBe('bind');
    expect(binds[audit]!.options).toMatch(/^bind,ro/);
    expect(audit).toBeGreaterThan(workspace);
    // Nothing of the project but what was named: not its root, not its node_modules symlink's target as a whole
    // beyond the installation.
    expect(binds.map((m) => m.target)).not.toContain(path.join(t.root, 'project'));
    expect(plan.exposed).toEqual([
      { path: t.home, access: 'rw', why: 'managed' },
      { path: t.workspace, access: 'rw', why: 'workspace' },
      { path: t.store, access: 'ro', why: 'engine' },
      { path: path.join(t.workspace, '.audit'), access: 'ro', why: 'audit' },
    ]);
    // The symlinked node_modules is made as a symlink, so the executable's path works as given.
    expect(plan.skeleton).toContainEqual({
      type: 'link',
      path: path.join(t.root, 'project', 'node_modules'),
      target: t.store,
    });
    // The executable lies in the installation, which is bound already: not bound again.
    expect(binds.map((m) => m.target)).not.toContain(path.join(t.store, 'engine', 'bin', 'cli.js'));
    // A fresh /proc, a fresh devpts, a private /tmp and /dev/shm (fresh tmpfs mounts: in the namespace only).
    expect(plan.mounts).toContainEqual({
      source: 'proc',
      target: '/proc',
      fstype: 'proc',
      options: 'nosuid,nodev,noexec',
    });
    for (const scratch of ['/tmp', '/dev/shm'])
      expect(plan.mounts.find((m) => m.target === scratch)).toEqual({
        source: 'tmpfs',
        target: scratch,
        fstype: 'tmpfs',
        options: 'mode=1777,nosuid,nodev',
      });
    expect(plan.mounts.find((m) => m.target === '/dev/pts')?.options).toContain('newinstance');
    // Only a few device nodes of the host's /dev.
    expect(
      plan.mounts
        .filter((m) => m.target.startsWith('/dev/') && m.fstype === 'none' && !m.inRoot)
        .map((m) => m.target)
        .every((target) =>
          ['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom', '/dev/tty'].includes(target),
        ),
    ).toBe(true);
  });

  it.runIf(tmp.startsWith('/tmp/'))(
    'under the private /tmp, the way down to the workspace is read-only (a write beside it fails, never vanishes)',
    () => {
      const t = tree('scratch');
      const plan = buildMountPlan({
        workspace: t.workspace,
        readOnlyInWorkspace: [],
        writable: [],
        readOnly: [],
        expose: [],
      });
      const top = `/tmp/${tmp.split('/')[2]}`;
      const guard = plan.mounts.findIndex((m) => m.target === top);
      expect(plan.mounts[guard]).toEqual({
        source: top,
        inRoot: true,
        target: top,
        fstype: 'none',
        options: 'bind,ro',
      });
      // After the private /tmp itself, before the workspace's bind that lands on it.
      expect(guard).toBeGreaterThan(plan.mounts.findIndex((m) => m.target === '/tmp'));
      expect(guard).toBeLessThan(plan.mounts.findIndex((m) => m.target === t.workspace));
    },
  );

  it('orders parents before children, keeps one bind for a path under a bind of the same access', () => {
    const t = tree('nested');
    const inside = path.join(t.home, 'sub');
    fs.mkdirSync(inside);
    const plan = buildMountPlan({
      workspace: t.workspace,
      readOnlyInWorkspace: [],
      writable: [inside, t.home],
      readOnly: [],
      expose: [{ path: path.join(t.home, 'sub'), readOnly: true }],
    });
    const targets = plan.mounts.filter((m) => !m.inRoot && m.fstype === 'none').map((m) => m.target);
    // `sub` read-write is seen through the home's bind; asked read-only as well, the read-write bind wins.
    expect(targets.filter((target) => target === inside)).toEqual([]);
    expect(targets.indexOf(t.home)).toBeGreaterThanOrEqual(0);
  });

  it('binds an exposed file on an empty file of the skeleton, read-only when asked', () => {
    const t = tree('file');
    const file = path.join(t.root, 'notes.txt');
    fs.writeFileSync(file, 'n');
    const plan = buildMountPlan({
      workspace: t.workspace,
      readOnlyInWorkspace: [],
      writable: [],
      readOnly: [],
      expose: [{ path: file, readOnly: true }],
    });
    expect(plan.skeleton).toContainEqual({ type: 'file', path: file });
    expect(plan.mounts).toContainEqual({
      source: file,
      target: file,
      fstype: 'none',
      options: expect.stringMatching(/^bind,ro/),
    });
    expect(plan.exposed).toContainEqual({ path: file, access: 'ro', why: 'expose' });
  });

  it("a read-only bind repeats its source mount's locked flags (noexec, nosuid, nodev, atime); a read-write bind is a plain bind", () => {
    const t = tree('flags');
    const procFlags = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((line) => line.split(' '))
      .find((fields) => fields[4] === '/proc')?.[5]
      ?.split(',')
      .filter((flag) => ['nosuid', 'nodev', 'noexec'].includes(flag));
    const plan = buildMountPlan({
      workspace: t.workspace,
      readOnlyInWorkspace: [],
      writable: [],
      readOnly: [],
      expose: [{ path: '/proc/self/fdinfo', readOnly: true }],
    });
    const real = fs.realpathSync('/proc/self/fdinfo');
    const options = plan.mounts.find((m) => m.target === real)?.options.split(',');
    expect(options?.slice(0, 2)).toEqual(['bind', 'ro']);
    expect(options).toEqual(expect.arrayContaining(procFlags ?? []));
    expect(plan.mounts.find((m) => m.target === t.workspace)?.options).toBe('bind');
  });

  it('leaves out paths that do not exist', () => {
    const t = tree('missing');
    const plan = buildMountPlan({
      workspace: t.workspace,
      readOnlyInWorkspace: [path.join(t.workspace, '.nothing')],
      writable: [path.join(t.root, 'absent')],
      readOnly: [],
      expose: [],
    });
    expect(plan.exposed.map((e) => e.path)).toEqual([t.workspace]);
  });

  it('writes fstab fields with octal escapes, targets under the root', () => {
    expect(fstabEscape('/a b/é\tx\\y')).toBe('/a\\040b/\\303\\251\\011x\\134y');
    const fstab = planFstab(
      {
        mounts: [
          { source: '/w s', target: '/w s', fstype: 'none', options: 'bind' },
          { source: '/tmp', inRoot: true, target: '/tmp', fstype: 'none', options: 'bind' },
        ],
      },
      '/r',
    );
    expect(fstab).toBe('/w\\040s /r/w\\040s none bind 0 0\n/r/tmp /r/tmp none bind 0 0\n');
  });

  it("writes the new root: the skeleton bound read-only as `/` first; what is under /tmp and /dev/shm apart, with the skeleton's entries to copy there", () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'new-root-'));
    const made = writeNewRoot(
      {
        skeleton: [
          { type: 'dir', path: '/usr' },
          { type: 'dir', path: '/tmp', target: '1777' },
          { type: 'dir', path: '/tmp/run' },
          { type: 'link', path: '/tmp/link', target: 'run' },
          { type: 'dir', path: '/dev' },
          { type: 'dir', path: '/dev/shm', target: '1777' },
        ],
        mounts: [
          { source: 'tmpfs', target: '/tmp', fstype: 'tmpfs', options: 'mode=1777,nosuid,nodev' },
          { source: '/usr', target: '/usr', fstype: 'none', options: 'bind,ro' },
          { source: '/tmp/run', inRoot: true, target: '/tmp/run', fstype: 'none', options: 'bind,ro' },
          { source: '/host/run', target: '/tmp/run', fstype: 'none', options: 'bind' },
        ],
      },
      dir,
    );
    expect(fs.readdirSync(dir).sort()).toEqual(['fstab', 'fstab-scratch', 'root', 'skeleton']);
    const lines = fs.readFileSync(made.fstab, 'utf8').trimEnd().split('\n');
    // The root first: read-only from the start (no copy, no remount), repeating the flags its host mount locks.
    expect(lines[0]).toMatch(new RegExp(`^${made.skeleton} ${made.root} none bind,ro(,[a-z]+)* 0 0$`));
    expect(lines.slice(1)).toEqual([
      `tmpfs ${made.root}/tmp tmpfs mode=1777,nosuid,nodev 0 0`,
      `/usr ${made.root}/usr none bind,ro 0 0`,
    ]);
    expect(fs.readFileSync(made.scratchFstab, 'utf8')).toBe(
      `${made.root}/tmp/run ${made.root}/tmp/run none bind,ro 0 0\n/host/run ${made.root}/tmp/run none bind 0 0\n`,
    );
    expect(made.scratchTops).toEqual(['/tmp/run', '/tmp/link']);
    expect(fs.statSync(made.skeleton).mode & 0o7777).toBe(0o755);
    expect(fs.readlinkSync(path.join(made.skeleton, 'tmp', 'link'))).toBe('run');
    // Nothing under a scratch directory: nothing to copy, an empty second fstab.
    const plain = writeNewRoot(
      {
        skeleton: [{ type: 'dir', path: '/usr' }],
        mounts: [{ source: '/usr', target: '/usr', fstype: 'none', options: 'bind,ro' }],
      },
      fs.mkdtempSync(path.join(tmp, 'new-root-')),
    );
    expect(plain.scratchTops).toEqual([]);
    expect(fs.readFileSync(plain.scratchFstab, 'utf8')).toBe('');
  });
});

describe('expose entries', () => {
  it('reads PATH, PATH:ro and { path, readOnly }, relative against the base', () => {
    const dir = path.join(tmp, 'exposed');
    fs.mkdirSync(dir, { recursive: true });
    expect(resolveExpose([dir, `${dir}:ro`, 'exposed', { path: dir, readOnly: true }, `${dir}:rw`], tmp)).toEqual([
      { path: dir, readOnly: false },
      { path: dir, readOnly: true },
      { path: dir, readOnly: false },
      { path: dir, readOnly: true },
      { path: dir, readOnly: false },
    ]);
  });

  it('refuses a path that does not exist, and a malformed entry, with CONFIG_INVALID naming it', () => {
    const missing = thrownBy(() => resolveExpose([path.join(tmp, 'nope:ro')], tmp));
    expect(missing).toMatchObject({ code: 'CONFIG_INVALID' });
    expect((missing as Error).message).toContain(path.join(tmp, 'nope'));
    expect(thrownBy(() => resolveExpose([{ nope: 1 } as never], tmp))).toMatchObject({ code: 'CONFIG_INVALID' });
    expect(thrownBy(() => resolveExpose([':ro'], tmp))).toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('refuses /, /proc, /sys, /dev, /tmp (also through a symlink) and a path that holds or lies in the run root', () => {
    const link = path.join(tmp, 'to-root');
    if (!fs.existsSync(link)) fs.symlinkSync('/', link);
    for (const entry of ['/', '/proc', '/sys:ro', '/dev', '/tmp', link]) {
      const error = thrownBy(() => resolveExpose([entry], tmp));
      expect(error, entry).toMatchObject({ code: 'CONFIG_INVALID' });
      expect((error as Error).message, entry).toContain('cannot be exposed');
    }
    const project = path.join(tmp, 'project');
    const runRoot = path.join(project, '.agent-harness', 'harness_runs');
    fs.mkdirSync(path.join(runRoot, 'other-run'), { recursive: true });
    fs.mkdirSync(path.join(project, 'data'), { recursive: true });
    for (const entry of [
      '.',
      '.agent-harness',
      '.agent-harness/harness_runs',
      '.agent-harness/harness_runs/other-run',
    ]) {
      const error = thrownBy(() => resolveExpose([entry], project, hostPathRule({ runRoot })));
      expect(error, entry).toMatchObject({ code: 'CONFIG_INVALID' });
      expect((error as Error).message, entry).toContain(runRoot);
    }
    expect(resolveExpose(['data:ro'], project, hostPathRule({ runRoot }))).toEqual([
      { path: path.join(project, 'data'), readOnly: true },
    ]);
  });
});

const support = probeNamespaces();
describe.skipIf(!support.available || !support.filesystem?.available)('the plan carried out by the init', () => {
  it('a stand-in engine sees the workspace, not the host; cannot write .audit, remount or unmount it, nor reach the init', async () => {
    // A path with a space, a quote and UTF-8: what the fstab escapes.
    const t = tree("carried dir é 'q'");
    const canary = path.join(t.root, 'project', 'canary.txt');
    fs.writeFileSync(canary, 'secret');
    const isolation = await openIsolation({ mode: 'require', modelUrl: null, support, filesystem: true });
    const chunks: Buffer[] = [];
    try {
      isolation.prestart('ignore');
      isolation.contain(
        buildMountPlan({
          workspace: t.workspace,
          readOnlyInWorkspace: [path.join(t.workspace, '.audit')],
          writable: [],
          readOnly: [],
          expose: [],
        }),
      );
      expect(isolation.record).toMatchObject({ filesystem: 'mount-namespace', reason: null });
      const script = [
        `cat "${canary}" 2>&1`,
        'echo inside > mine.txt && cat mine.txt',
        '(echo x > .audit/x) 2>&1',
        '(mount -o remount,bind,rw .audit && echo remounted) 2>&1',
        '(umount .audit && echo unmounted) 2>&1',
        '(cat /proc/1/environ > /dev/null && echo init-environ) 2>&1',
        '(readlink /proc/1/fd/0 > /dev/null && echo init-fds) 2>&1',
        'ls /',
      ].join('; ');
      const child = isolation.launch({
        file: '/bin/sh',
        args: ['-c', script],
        env: { PATH: '/usr/bin:/bin' },
        cwd: t.workspace,
      });
      const result = await isolation.settle(
        await superviseSplit(child!, { onChunk: (_stream, chunk) => chunks.push(Buffer.from(chunk)) }),
      );
      expect(await isolation.contained()).toBe(true);
      const output = Buffer.concat(chunks).toString('utf8');
      expect(result.exitCode, output).toBe(0);
      expect(output).not.toContain('secret');
      expect(output).toContain('No such file or directory');
      expect(output).toContain('inside');
      expect(output).toContain('Read-only file system');
      expect(output).not.toContain('remounted');
      expect(output).not.toContain('unmounted');
      expect(output).not.toContain('init-fds');
      expect(output).not.toContain('init-environ');
      expect(fs.readFileSync(path.join(t.workspace, 'mine.txt'), 'utf8')).toBe('inside\n');
      expect(fs.existsSync(path.join(t.workspace, '.audit', 'x'))).toBe(false);
    } finally {
      await isolation.close();
    }
  });
});

describe.skipIf(!support.available || !support.filesystem?.available)('a plan the init cannot carry out', () => {
  const broken = {
    skeleton: [],
    mounts: [{ source: 'none', target: '/x', fstype: 'no-such-filesystem', options: 'defaults' }],
    exposed: [],
  };
  const run = async (mode: 'auto' | 'require') => {
    const isolation = await openIsolation({ mode, modelUrl: null, support, filesystem: true });
    try {
      isolation.prestart('ignore');
      isolation.contain(broken);
      const child = isolation.launch({ file: '/bin/sh', args: ['-c', 'echo ran'], env: {}, cwd: tmp });
      const chunks: Buffer[] = [];
      const result = await isolation.settle(
        await superviseSplit(child!, { onChunk: (_stream, chunk) => chunks.push(Buffer.from(chunk)) }),
      );
      const output = Buffer.concat(chunks).toString('utf8');
      return { result, output, contained: await isolation.contained(), record: isolation.record };
    } finally {
      await isolation.close();
    }
  };

  // Fails closed (issue 42): once a plan is sent, a failure to set it up never runs the engine on the host.
  it.each(['auto', 'require'] as const)(
    '%s: the engine does not start, and the failure names the step',
    async (mode) => {
      const { result, output, contained, record } = await run(mode);
      expect(output).not.toContain('ran');
      expect(contained).toBe(false);
      expect(result.exitCode).toBeNull();
      expect(result.spawnError).toMatchObject({ code: 'ISOLATION_SETUP_FAILED' });
      expect(result.spawnError?.message).toMatch(/^binds: /);
      // The new root's host directory is taken out of what the tool said: the path is the agent's.
      expect(result.spawnError?.message).not.toContain('ah-root-');
      expect(record.filesystem).toBe('mount-namespace');
      expect(record.reason).toBeNull();
    },
  );
});

describe('doctor', () => {
  it('reports whether the filesystem can be contained here, and fails it only under require', async () => {
    const { runDoctorChecks } = await import('../../src/cli/doctor.js');
    const { resolveHarnessPaths } = await import('../../src/runtime/paths.js');
    const paths = resolveHarnessPaths({ projectRoot: tmp, env: {}, skillRoots: [] });
    // No engine checks (a `--version` start of each engine CLI, three times over: nearly all of this test's time, and
    // not what it is about).
    const options = { engines: [] };
    const checks = await runDoctorChecks(paths, { PATH: process.env.PATH }, [], options);
    const check = checks.find((c) => c.name === 'filesystem');
    expect(check?.ok).toBe(true);
    if (support.available && support.filesystem?.available)
      expect(check?.detail).toMatch(/^mount namespace per attempt/);
    else expect(check?.detail).toMatch(/^WARNING filesystem containment is unavailable/);
    const off = await runDoctorChecks(paths, { PATH: process.env.PATH, AGENT_HARNESS_ISOLATION: 'off' }, [], options);
    expect(off.find((c) => c.name === 'filesystem')?.detail).toBe('off: the agent sees the host filesystem');
    // A bad mode fails the namespaces check; the filesystem check goes on as auto.
    const bad = await runDoctorChecks(
      paths,
      { PATH: process.env.PATH, AGENT_HARNESS_ISOLATION: 'sometimes' },
      [],
      options,
    );
    expect(bad.find((c) => c.name === 'namespaces')).toMatchObject({
      ok: false,
      detail: 'AGENT_HARNESS_ISOLATION=sometimes',
      error: { code: 'CONFIG_INVALID' },
    });
    expect(bad.find((c) => c.name === 'filesystem')?.detail).toBe(check?.detail);
  });
});

describe('--expose on the CLI', () => {
  it('refuses a path that does not exist with CONFIG_INVALID, before a run directory is made', async () => {
    const { createCliSandbox, installFakeEngine, runCliProcess, REPO } = await import('../helpers/cli.js');
    const sandbox = createCliSandbox();
    try {
      installFakeEngine(sandbox, 'codex', {
        stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl'),
      });
      const run = runCliProcess(sandbox, ['start', '--expose', 'no-such-dir:ro', '--prompt', 'x', 'codex']);
      expect(run.status).not.toBe(0);
      expect(run.stderr).toContain('agent-harness: error CONFIG_INVALID: ');
      expect(run.stderr).toContain(path.join(sandbox.root, 'no-such-dir'));
      expect(fs.existsSync(path.join(sandbox.root, '.agent-harness', 'harness_runs'))).toBe(false);
    } finally {
      sandbox.cleanup();
    }
  });
});

describe('expose in the plugin and provider options', () => {
  it('the plugin resolves entries against its root, keeping :ro; a malformed entry is CONFIG_INVALID', async () => {
    const { parseAgentHarnessOptions, toAgentHarnessConfig } = await import('../../src/vitest/options.js');
    const config = toAgentHarnessConfig(
      parseAgentHarnessOptions({ expose: ['data:ro', 'cache', { path: 'notes', readOnly: true }] }),
      '/project',
    );
    expect(config.expose).toEqual(['/project/data:ro', '/project/cache', { path: '/project/notes', readOnly: true }]);
    expect(thrownBy(() => parseAgentHarnessOptions({ expose: [{ path: 'x', writable: true }] }))).toMatchObject({
      code: 'CONFIG_INVALID',
    });
  });

  it('a provider query takes expose; a malformed entry is CONFIG_INVALID', async () => {
    const { parseProviderConfig } = await import('../../src/providers/config.js');
    expect(
      parseProviderConfig({ provider: 'codex', prompt: 'x', expose: ['/srv/data:ro', { path: '/srv/out' }] }).expose,
    ).toEqual(['/srv/data:ro', { path: '/srv/out' }]);
    expect(thrownBy(() => parseProviderConfig({ provider: 'codex', prompt: 'x', expose: [''] }))).toMatchObject({
      code: 'CONFIG_INVALID',
    });
  });
});
