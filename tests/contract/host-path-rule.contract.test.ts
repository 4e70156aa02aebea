/**
 * The one rule for every host path that enters an attempt's filesystem (issue 42), over real files, symlinks and
 * /proc: a table of hostile paths each refused with its reason; what an `expose` entry, a stdio MCP server, the
 * engine's installation, a seeded template and a skill bring into the plan under it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attemptMountPlan } from '../../src/core/attempt-filesystem.js';
import { DEFAULT_AGENT_OPTIONS, type McpServerDef } from '../../src/protocol/index.js';
import { hostPathRule, judgeHostPath } from '../../src/runtime/isolation/host-path-rule.js';
import { buildMountPlan, resolveExpose } from '../../src/runtime/isolation/mount-plan.js';
import { resolveHarnessPaths, runHome } from '../../src/runtime/paths.js';
import { injectSkills } from '../../src/runtime/skills.js';
import { thrownBy, rejectionOf } from '../helpers/errors.js';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-rule-')));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A project holding its run root (the default layout), a fake HOME with a canary, a directory beside them. */
const project = path.join(tmp, 'project');
const runRoot = path.join(project, '.agent-harness', 'harness_runs');
const runDir = path.join(runRoot, 'run-1');
const home = path.join(tmp, 'home');
const canary = path.join(home, 'canary.txt');
const beside = path.join(tmp, 'beside');
fs.mkdirSync(path.join(runDir, '.audit'), { recursive: true });
fs.mkdirSync(path.join(runRoot, 'other-run'), { recursive: true });
fs.mkdirSync(path.join(project, 'node_modules', 'dep'), { recursive: true });
fs.writeFileSync(path.join(project, 'package.json'), '{"name":"project"}\n');
fs.writeFileSync(path.join(project, 'mcp-server.js'), '');
fs.mkdirSync(home, { recursive: true });
fs.writeFileSync(canary, 'host secret\n');
fs.mkdirSync(path.join(beside, 'pkg', 'lib'), { recursive: true });
fs.writeFileSync(path.join(beside, 'pkg', 'package.json'), '{"name":"pkg"}\n');
fs.writeFileSync(path.join(beside, 'pkg', 'lib', 'server.js'), '');
const rule = hostPathRule({ runRoot, home });

/** A symlink in `tmp/links` to `target`. */
function linkTo(name: string, target: string): string {
  const link = path.join(tmp, 'links', name);
  fs.mkdirSync(path.dirname(link), { recursive: true });
  if (!fs.existsSync(link)) fs.symlinkSync(target, link);
  return link;
}

/** Each hostile path (as given, relative ones against `runDir`) and what its refusal must say. */
const HOSTILE: ReadonlyArray<[string, RegExp]> = [
  ['/', /whole host filesystem/],
  ['/proc/self/cwd/..', /host's \/proc/],
  ['/proc/self/cwd', /host's \/proc/],
  ['/proc/1/root', /host's \/proc/],
  ['/proc/self/root/etc', /host's \/proc/],
  ['/sys', /\/sys/],
  ['/dev', /host's \/dev/],
  ['/dev/null', /host's \/dev/],
  // Refused whether this machine has a disk there or not.
  ['/dev/sda', /host's \/dev/],
  ['/dev/shm', /host's \/dev/],
  ['/tmp', /host's \/tmp/],
  ['/tmp/../tmp', /host's \/tmp/],
  [home, /HOME/],
  [`${home}/`, /HOME/],
  [project, /holds the run root/],
  [path.dirname(runRoot), /holds the run root/],
  [runRoot, /holds the run root/],
  [path.join(runRoot, 'other-run'), /inside the run root/],
  [runDir, /inside the run root/],
  ['../other-run', /inside the run root/],
  ['../../..', /holds the run root/],
  ['../../../../home', /HOME/],
  [linkTo('root', '/'), /whole host filesystem/],
  [linkTo('proc-cwd', '/proc/self/cwd'), /host's \/proc/],
  [linkTo('proc-1-root', '/proc/1/root'), /host's \/proc/],
  [linkTo('proc-root-etc', '/proc/self/root/etc'), /host's \/proc/],
  [linkTo('sys', '/sys'), /\/sys/],
  [linkTo('dev', '/dev'), /host's \/dev/],
  [linkTo('tmp', '/tmp'), /host's \/tmp/],
  [linkTo('home', home), /HOME/],
  [linkTo('project', project), /holds the run root/],
  [linkTo('run-root', runRoot), /holds the run root/],
  [linkTo('other-run', path.join(runRoot, 'other-run')), /inside the run root/],
  // `..` after a link is the parent of its target, as the kernel takes it: here the project.
  [`${linkTo('node-modules', path.join(project, 'node_modules'))}/..`, /holds the run root/],
];

describe('the host path rule', () => {
  it.each(HOSTILE)('refuses %s', (given, reason) => {
    const judged = judgeHostPath(given, rule, runDir);
    expect(judged?.refused, given).toMatch(reason);
    // The same path as an expose entry: CONFIG_INVALID, with the reason.
    const error = thrownBy(() => resolveExpose([given], runDir, rule));
    expect(error, given).toMatchObject({ code: 'CONFIG_INVALID' });
    expect((error as Error).message, given).toMatch(reason);
  });

  it('lets in paths beside the run root, files under HOME, directories under /tmp and the system', () => {
    for (const given of [beside, canary, path.join(project, 'mcp-server.js'), '/etc', '/usr/bin', '../../../../beside'])
      expect(judgeHostPath(given, rule, runDir)?.refused, given).toBeNull();
    // A link is judged, and bound, by where it leads.
    expect(judgeHostPath(linkTo('beside', beside), rule)).toMatchObject({ real: beside, refused: null });
  });

  it('a plan binds the real path a link leads to, `..` after a link taken as the kernel takes it', () => {
    const given = `${linkTo('pkg', path.join(beside, 'pkg'))}/..`;
    const expose = resolveExpose([`${given}:ro`], runDir, rule);
    const plan = buildMountPlan({
      workspace: runDir,
      readOnlyInWorkspace: [],
      writable: [],
      readOnly: [],
      expose,
      rule,
    });
    expect(plan.exposed.filter((entry) => entry.why === 'expose')).toEqual([
      { path: beside, access: 'ro', why: 'expose' },
    ]);
    expect(plan.mounts.filter((mount) => mount.source === beside)).toHaveLength(1);
    // The link itself is made in the new root, so the path works there as given.
    expect(plan.skeleton).toContainEqual({
      type: 'link',
      path: path.join(tmp, 'links', 'pkg'),
      target: path.join(beside, 'pkg'),
    });
  });

  it("a plan of the engine's installation inside the run root, or Node's under HOME, is CONFIG_INVALID", () => {
    const engine = path.join(runRoot, 'other-run', 'codex');
    fs.writeFileSync(engine, '');
    const base = { workspace: runDir, readOnlyInWorkspace: [], writable: [], expose: [], rule };
    const error = thrownBy(() => buildMountPlan({ ...base, readOnly: [engine, path.dirname(engine)] }));
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
    expect((error as Error).message).toContain("engine's installation");
    expect((error as Error).message).toContain('inside the run root');
    expect(thrownBy(() => buildMountPlan({ ...base, readOnly: [home] }))).toMatchObject({ code: 'CONFIG_INVALID' });
  });
});

/** What the agent of an attempt with `servers` is shown because of them. */
function mcpBinds(servers: McpServerDef[]): string[] {
  const paths = resolveHarnessPaths({ projectRoot: project, env: {} });
  const plan = attemptMountPlan({
    paths,
    home: runHome(paths, 'run-1'),
    runDir,
    attemptTmp: path.join(tmp, 'attempt-tmp'),
    executables: [],
    agentOptions: { ...DEFAULT_AGENT_OPTIONS, mcpServers: servers },
    expose: [],
    rule,
  });
  return plan.exposed.filter((entry) => entry.why === 'mcp').map((entry) => entry.path);
}

describe('stdio MCP servers under the rule', () => {
  it('a server file in the directory holding the run root binds that file and its node_modules, not the directory', () => {
    const binds = mcpBinds([{ name: 'local', command: ['node', path.join(project, 'mcp-server.js')] }]);
    expect(binds.sort()).toEqual([path.join(project, 'mcp-server.js'), path.join(project, 'node_modules')]);
  });

  it('a script in a package beside the run root binds the file and its package directory', () => {
    const binds = mcpBinds([{ name: 'pkg', command: ['node', path.join(beside, 'pkg', 'lib', 'server.js')] }]);
    expect(binds).toEqual([path.join(beside, 'pkg')]);
  });

  it('an argument that is /, the HOME or the project is passed but not bound; a HOME file binds that file only', () => {
    const binds = mcpBinds([
      { name: 'fs', command: ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/', home, project] },
      { name: 'notes', command: ['node', path.join(beside, 'pkg', 'lib', 'server.js'), canary] },
    ]);
    expect(binds.sort()).toEqual([canary, path.join(beside, 'pkg')].sort());
  });

  it('a command the rule refuses (/proc/self/exe, a file inside the run root) is CONFIG_INVALID naming the server', () => {
    const inRun = path.join(runRoot, 'other-run', 'server');
    fs.writeFileSync(inRun, '');
    for (const [command, reason] of [
      ['/proc/self/exe', /\/proc/],
      [inRun, /inside the run root/],
    ] as const) {
      const error = thrownBy(() => mcpBinds([{ name: 'bad', command: [command, '--stdio'] }]));
      expect(error, command).toMatchObject({ code: 'CONFIG_INVALID' });
      expect((error as Error).message, command).toContain('MCP server bad');
      expect((error as Error).message, command).toMatch(reason);
    }
  });
});

describe('trees copied into a run', () => {
  it('a skill holding a link out of it (/etc/passwd, a HOME file), or a skill root that is the HOME, is SKILL_INVALID', async () => {
    for (const target of ['/etc/passwd', canary]) {
      const roots = path.join(tmp, `skills-${path.basename(target)}`);
      fs.mkdirSync(path.join(roots, 'leaky'), { recursive: true });
      fs.writeFileSync(path.join(roots, 'leaky', 'SKILL.md'), '# leaky\n');
      fs.symlinkSync(target, path.join(roots, 'leaky', 'data.txt'));
      const targetRoot = path.join(tmp, `skills-out-${path.basename(target)}`);
      const error = await rejectionOf(injectSkills({ sourceRoots: [roots], targetRoot, rule }));
      expect(error, target).toMatchObject({ code: 'SKILL_INVALID' });
      expect((error as Error).message, target).toContain('leads out of');
      expect(fs.existsSync(path.join(targetRoot, 'leaky')), target).toBe(false);
    }
    const error = await rejectionOf(injectSkills({ sourceRoots: [home], targetRoot: path.join(tmp, 'x'), rule }));
    expect(error).toMatchObject({ code: 'SKILL_INVALID' });
    expect((error as Error).message).toContain('HOME');
  });

  it('a link inside a skill that stays in it is copied as it is', async () => {
    const roots = path.join(tmp, 'skills-inner');
    fs.mkdirSync(path.join(roots, 'tidy', 'docs'), { recursive: true });
    fs.writeFileSync(path.join(roots, 'tidy', 'SKILL.md'), '# tidy\n');
    fs.symlinkSync('docs', path.join(roots, 'tidy', 'docs-link'));
    const targetRoot = path.join(tmp, 'skills-inner-out');
    await injectSkills({ sourceRoots: [roots], targetRoot, rule });
    expect(fs.readlinkSync(path.join(targetRoot, 'tidy', 'docs-link'))).toBe('docs');
  });
});

describe('the CLI refuses before a run directory is made', () => {
  it('a template holding a link to /etc/passwd or to a HOME file, or the HOME itself, is refused before a run directory is made', async () => {
    const { createCliSandbox, runCliProcess } = await import('../helpers/cli.js');
    const sandbox = createCliSandbox();
    try {
      fs.writeFileSync(path.join(sandbox.home, 'secret.txt'), 'host secret\n');
      const cases: Array<[string, string]> = [];
      for (const target of ['/etc/passwd', path.join(sandbox.home, 'secret.txt')]) {
        const template = path.join(sandbox.root, `template-${path.basename(target)}`);
        fs.mkdirSync(path.join(template, 'src'), { recursive: true });
        fs.writeFileSync(path.join(template, 'README.md'), 'seed\n');
        fs.symlinkSync(target, path.join(template, 'src', 'leak'));
        cases.push([template, 'leads out of']);
      }
      cases.push([sandbox.home, 'HOME']);
      for (const [template, reason] of cases) {
        const run = runCliProcess(sandbox, ['start', '--template', template, '--prompt', 'x', 'codex']);
        expect(run.status, template).not.toBe(0);
        expect(run.stderr, template).toContain('agent-harness: error WORKSPACE_INVALID: ');
        expect(run.stderr, template).toContain(reason);
        expect(fs.existsSync(path.join(sandbox.root, '.agent-harness', 'harness_runs')), template).toBe(false);
      }
    } finally {
      sandbox.cleanup();
    }
  });

  it('--expose /proc/self/cwd/.. is CONFIG_INVALID before a run directory is made', async () => {
    const { createCliSandbox, runCliProcess } = await import('../helpers/cli.js');
    const sandbox = createCliSandbox();
    try {
      const expose = runCliProcess(sandbox, ['start', '--expose', '/proc/self/cwd/..', '--prompt', 'x', 'codex']);
      expect(expose.stderr).toContain('agent-harness: error CONFIG_INVALID: ');
      expect(expose.stderr).toContain("host's /proc");
      expect(fs.existsSync(path.join(sandbox.root, '.agent-harness', 'harness_runs'))).toBe(false);
    } finally {
      sandbox.cleanup();
    }
  });
});
