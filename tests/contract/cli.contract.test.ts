/**
 * The CLI's output contract, selectors and error codes, run as a real subprocess with a fake engine in the
 * managed prefix (no engine process).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptMetaSchema, FcmpEventSchema, FsSnapshotSchema } from '../../src/protocol/index.js';
import { BEFORE_HASH_LIMIT } from '../../src/core/run-attempt.js';
import { expectCompleteAudit } from '../helpers/audit.js';
import { attemptAuditPaths } from '../../src/core/audit-files.js';
import {
  createCliSandbox,
  fakeEngineCalls,
  installFakeEngine,
  REPO,
  runCliMerged,
  runCliProcess,
  type CliSandbox,
} from '../helpers/cli.js';

const STREAM = path.join(REPO, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl');
const THREAD = '01a2053b-9f5a-7bc0-b066-eb965712ebee';
let sandbox: CliSandbox;

beforeAll(() => {
  sandbox = createCliSandbox();
  installFakeEngine(sandbox, 'codex', { stdoutFile: STREAM, stderrText: 'fake codex stderr line\n' });
});
afterAll(() => sandbox.cleanup());

function summaryValue(stderr: string, label: string): string {
  const line = stderr.split('\n').find((l) => l.startsWith(`${label}: `));
  expect(line, `summary line "${label}"`).toBeDefined();
  return line!.slice(label.length + 2);
}

describe('agent-harness start', () => {
  it('prints info lines, then begin, the view, end (each once), then the summary', () => {
    const merged = runCliMerged(sandbox, ['start', '--translate', '3', '--prompt', 'hello there', 'codex']);
    expect(merged.status).toBe(0);
    const lines = merged.stdout.split('\n');
    const begin = lines.indexOf('[agent:codex] ---------------- runtime begin ----------------');
    const end = lines.indexOf('[agent:codex] ---------------- runtime end ----------------');
    expect(lines.filter((l) => l.includes('runtime begin'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('runtime end'))).toHaveLength(1);
    expect(begin).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(begin);
    const before = lines.slice(0, begin);
    for (const key of [
      'run_id',
      'run_dir',
      'executable',
      'passthrough',
      'translate_mode',
      'injected_skills',
      'config_roots',
    ]) {
      expect(
        before.some((l) => l.startsWith(`${key}: `)),
        key,
      ).toBe(true);
    }
    const between = lines.slice(begin + 1, end).join('\n');
    expect(between).toContain('### Simulated Frontend View (Markdown)');
    expect(between).toContain('- Assistant: Wrote out.txt.');
    expect(between).toMatch(/- System: .*completed/);
    const after = lines.slice(end + 1).join('\n');
    for (const key of ['Run id', 'Run directory', 'Run handle', 'Session']) expect(after).toContain(`${key}: `);
    expect(after).toContain(`Session: ${THREAD}`);
    expect(after).toContain('Start complete. exitCode=0');
  });

  it('keeps --translate away from the engine and keeps passthrough order; stdout is the clean view', () => {
    const run = runCliProcess(sandbox, [
      'start',
      'codex',
      'exec',
      '--translate',
      '2',
      '--json',
      '--skip-git-repo-check',
      'say "hi"',
      '--translate=2',
    ]);
    expect(run.status).toBe(0);
    const call = fakeEngineCalls(sandbox).at(-1)!;
    expect(call.argv.slice(call.argv.indexOf('exec'))).toEqual(['exec', '--json', '--skip-git-repo-check', 'say "hi"']);
    expect(call.argv).not.toContain('--translate');
    expect(call.argv.slice(0, 2)).toEqual(['--profile', 'agent-harness']);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => FcmpEventSchema.parse(JSON.parse(l)));
    expect(events[0]!.type).toBe('conversation.started');
    expect(events.at(-1)!.type).toBe('conversation.completed');
    expect(run.stderr).toContain('translate_mode: 2');
    expect(run.stderr).toContain('passthrough: ["exec","--json","--skip-git-repo-check","say \\"hi\\""]');
  });

  it('runs the engine in its run dir with the managed HOME and no host secrets', () => {
    const run = runCliProcess(sandbox, ['start', '--prompt', 'x', 'codex'], { LEAKY_SECRET: 'nope' });
    expect(run.status).toBe(0);
    const runDir = summaryValue(run.stderr, 'Run directory');
    const call = fakeEngineCalls(sandbox).at(-1)!;
    expect(call.cwd).toBe(runDir);
    expect(call.home).not.toBe(sandbox.home);
    expect(call.home.startsWith(sandbox.root)).toBe(true);
    expect(call.codexHome).toBe(path.join(call.home, '.codex'));
    expect(call.hasSecret).toBe(false);
    expect(fs.readdirSync(sandbox.home)).toEqual([]);
    // View 0 is the raw stream.
    expect(run.stdout).toBe(fs.readFileSync(STREAM, 'utf8'));
    expect(run.stderr).toContain('fake codex stderr line');
    const meta = AttemptMetaSchema.parse(
      JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8')),
    );
    expect(meta.command.argv.at(-1)).toBe('x');
    expect(meta.skill_injection.skills.map((s) => s.name)).toContain('demo-hello');
    expect(fs.existsSync(path.join(runDir, '.codex', 'skills', 'demo-hello', 'SKILL.md'))).toBe(true);
  });

  it('--only-skills injects just the skills it names; a name no skill root has is SKILL_INVALID', () => {
    const run = runCliProcess(sandbox, ['start', '--only-skills', 'csv-stats', '--prompt', 'x', 'codex']);
    expect(run.status, run.stderr).toBe(0);
    const runDir = summaryValue(run.stderr, 'Run directory');
    const meta = AttemptMetaSchema.parse(
      JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8')),
    );
    expect(meta.skill_injection.skills.map((s) => s.name)).toEqual(['csv-stats']);
    expect(fs.existsSync(path.join(runDir, '.codex', 'skills', 'csv-stats', 'SKILL.md'))).toBe(true);
    expect(fs.existsSync(path.join(runDir, '.codex', 'skills', 'demo-hello'))).toBe(false);
    const unknown = runCliProcess(sandbox, [
      'start',
      '--only-skills',
      'csv-stats,no-such-skill',
      '--prompt',
      'x',
      'codex',
    ]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('agent-harness: error SKILL_INVALID: ');
    expect(unknown.stderr).toContain('"no-such-skill"');
  });

  it.for([
    ['an --only-skills name no skill root has', 'SKILL_INVALID', ['--only-skills', 'no-such-skill', 'codex']],
    ['an engine that is not installed', 'ENGINE_EXECUTABLE_MISSING', ['iflow']],
  ] as const)('%s is refused before a run exists: no run in `runs`, no "complete" line', ([, code, args]) => {
    const listed = (): number => (JSON.parse(runCliProcess(sandbox, ['runs', '--json']).stdout) as unknown[]).length;
    const before = listed();
    const run = runCliProcess(sandbox, ['start', '--prompt', 'x', ...args]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`agent-harness: error ${code}: `);
    expect(run.stderr).not.toContain('complete. exitCode');
    expect(run.stderr).not.toContain('Run directory: ');
    expect(listed()).toBe(before);
  });

  it('the direct form `agent-harness codex …` means the same as running codex itself', () => {
    const run = runCliProcess(sandbox, ['codex', 'exec', '--json', 'direct', '--help']);
    expect(run.status).toBe(0);
    const call = fakeEngineCalls(sandbox).at(-1)!;
    expect(call.argv.slice(call.argv.indexOf('exec'))).toEqual(['exec', '--json', 'direct', '--help']);
    expect(run.stderr).toContain('Start complete. exitCode=0');
  });

  it("after the engine name every argument is the engine's, even ones the harness also has (Decision 5)", () => {
    installFakeEngine(sandbox, 'claude', { stdoutFile: STREAM });
    installFakeEngine(sandbox, 'gemini', { stdoutFile: STREAM });
    const claude = runCliProcess(sandbox, ['claude', '--model', 'sonnet', '-p', 'hi']);
    expect(claude.stderr).not.toContain('USAGE_ERROR');
    expect(fakeEngineCalls(sandbox).at(-1)!.argv).toEqual(['--model', 'sonnet', '-p', 'hi']);
    runCliProcess(sandbox, ['gemini', '--prompt', 'hi', '--timeout-ms', '5']);
    expect(fakeEngineCalls(sandbox).at(-1)!.argv).toEqual(['--prompt', 'hi', '--timeout-ms', '5']);
  });

  it("a bare `agent-harness codex` runs codex with no arguments, not the harness's headless command", () => {
    runCliProcess(sandbox, ['codex']);
    // Only the harness's leading global flags (profile, per-attempt base URL, the run dir's trust: split streams are
    // not interactive), nothing after them.
    const argv = fakeEngineCalls(sandbox).at(-1)!.argv;
    expect(argv.slice(0, 2)).toEqual(['--profile', 'agent-harness']);
    expect(argv.slice(2)).toEqual([
      '-c',
      expect.stringMatching(/^model_providers\.agent-harness\.base_url=/),
      '-c',
      expect.stringMatching(/^projects=\{".+"=\{trust_level="trusted"\}\}$/),
    ]);
  });

  it('harness options go before the engine name; --translate is recognised anywhere and never reaches the engine', () => {
    const before = runCliProcess(sandbox, [
      '--translate',
      '2',
      '--timeout-ms',
      '60000',
      'codex',
      'exec',
      '--json',
      'hi',
    ]);
    expect(before.status).toBe(0);
    expect(() => FcmpEventSchema.parse(JSON.parse(before.stdout.split('\n')[0]!))).not.toThrow();
    const after = runCliProcess(sandbox, ['codex', 'exec', '--json', 'hi', '--translate', '2']);
    expect(() => FcmpEventSchema.parse(JSON.parse(after.stdout.split('\n')[0]!))).not.toThrow();
    const call = fakeEngineCalls(sandbox).at(-1)!;
    expect(call.argv.slice(call.argv.indexOf('exec'))).toEqual(['exec', '--json', 'hi']);
  });

  it('prints an error once, and refuses start options before a command that runs no engine', () => {
    const bad = runCliProcess(sandbox, ['start', '--bogus', 'codex']);
    expect(bad.status).toBe(2);
    expect(bad.stderr.match(/unknown option '--bogus'/g)).toHaveLength(1);
    const misplaced = runCliProcess(sandbox, ['--pty', 'runs']);
    expect(misplaced.status).toBe(2);
    expect(misplaced.stderr).toContain('apply to engine runs only');
    // `--expose codex`: the path forgotten, the engine's name taken for it, no command left.
    const noCommand = runCliProcess(sandbox, ['--expose', 'codex']);
    expect(noCommand.status).toBe(2);
    expect(noCommand.stderr).toContain('USAGE_ERROR');
    expect(noCommand.stderr).toContain('--expose');
    // No option, no command: the help, as before.
    expect(runCliProcess(sandbox, []).status).toBe(0);
  });

  it('a call that starts no session (`codex --version`) is recorded as no_session, exit 0, not a failure', () => {
    installFakeEngine(sandbox, 'opencode', { stdoutFile: path.join(REPO, 'package.json') });
    const run = runCliProcess(sandbox, ['opencode', '--version']);
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('Completion: no_session (exited_without_session)');
  });
});

describe('agent-harness resume and selectors', () => {
  it('an attempt in a run dir of more files than the before-snapshot hashes reads none of them (issue 13), and diffs by stat', async () => {
    const start = runCliProcess(sandbox, ['start', '--prompt', 'first', 'codex']);
    const handle = summaryValue(start.stderr, 'Run handle');
    const runDir = summaryValue(start.stderr, 'Run directory');
    const count = BEFORE_HASH_LIMIT + 10;
    for (let i = 0; i < count; i += 1) {
      if (i % 100 === 0) fs.mkdirSync(path.join(runDir, 'many', `d${i / 100}`), { recursive: true });
      fs.writeFileSync(path.join(runDir, 'many', `d${Math.floor(i / 100)}`, `f${i}.txt`), `file ${i}\n`);
    }
    // Older than the racy window: a file written just before the listing is read at once, whatever the limit.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const resume = runCliProcess(sandbox, ['resume', handle, 'second']);
    expect(resume.status, resume.stderr).toBe(0);
    const snapshot = (name: string) =>
      FsSnapshotSchema.parse(JSON.parse(fs.readFileSync(path.join(runDir, '.audit', `${name}.2.json`), 'utf8')));
    const many = (name: string) => snapshot(name).entries.filter((entry) => entry.path.startsWith('many/'));
    expect(many('fs-before')).toHaveLength(count);
    expect(many('fs-before').every((entry) => entry.sha256 === null)).toBe(true);
    expect(many('fs-after').every((entry) => entry.sha256 === null)).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'fs-diff.2.json'), 'utf8'))).toMatchObject({
      created: [],
      modified: [],
      deleted: [],
    });
  });

  it('resumes by handle with the recorded thread id, inheriting the translate view', () => {
    const start = runCliProcess(sandbox, ['start', '--translate', '3', '--prompt', 'first', 'codex']);
    const handle = summaryValue(start.stderr, 'Run handle');
    const runDir = summaryValue(start.stderr, 'Run directory');
    const resume = runCliProcess(sandbox, ['resume', handle, 'second message']);
    expect(resume.status).toBe(0);
    const call = fakeEngineCalls(sandbox).at(-1)!;
    expect(call.argv.slice(call.argv.indexOf('exec'))).toEqual([
      'exec',
      'resume',
      '--json',
      '--skip-git-repo-check',
      THREAD,
      'second message',
    ]);
    expect(call.cwd).toBe(runDir);
    expect(resume.stdout).toContain('### Simulated Frontend View (Markdown)');
    expect(resume.stderr).toContain('Resume complete. exitCode=0');
    expect(summaryValue(resume.stderr, 'Attempt')).toBe('2');
    expect(fs.existsSync(path.join(runDir, '.audit', 'meta.2.json'))).toBe(true);
    const overridden = runCliProcess(sandbox, ['resume', '--translate', '2', handle.slice(0, 6), 'third']);
    expect(overridden.status).toBe(0);
    expect(() => FcmpEventSchema.parse(JSON.parse(overridden.stdout.split('\n')[0]!))).not.toThrow();
    const runs = runCliProcess(sandbox, ['runs', '--json']);
    const entry = (JSON.parse(runs.stdout) as Array<{ handle: string; attempts: number; session_id: string }>).find(
      (r) => r.handle === handle,
    );
    expect(entry).toMatchObject({ attempts: 3, session_id: THREAD });
    expect(runCliProcess(sandbox, ['runs']).stdout).toContain(handle);
  });

  it('--run-dir adds an attempt to an existing run instead of creating one', () => {
    const start = runCliProcess(sandbox, ['start', '--prompt', 'a', 'codex']);
    const runDir = summaryValue(start.stderr, 'Run directory');
    const again = runCliProcess(sandbox, ['start', '--run-dir', runDir, '--prompt', 'b', 'codex']);
    expect(again.status).toBe(0);
    expect(summaryValue(again.stderr, 'Run directory')).toBe(runDir);
    expect(summaryValue(again.stderr, 'Attempt')).toBe('2');
  });
});

describe('errors: code, message, hint, exit status', () => {
  const cases: Array<[string, string, number, string[]]> = [
    ['unknown handle', 'RUN_NOT_FOUND', 1, ['resume', 'ffffffff', 'x']],
    ['unknown engine', 'ENGINE_UNKNOWN', 2, ['start', '--prompt', 'x', 'cursor']],
    ['bad translate value', 'USAGE_ERROR', 2, ['start', '--translate', '7', 'codex']],
    ['unknown command option', 'USAGE_ERROR', 2, ['runs', '--bogus']],
    [
      'bad model script',
      'MODEL_SCRIPT_INVALID',
      1,
      ['start', '--script', 'missing-script.json', '--prompt', 'x', 'codex'],
    ],
  ];
  it.each(cases)('%s → %s, exit %i', (_label, code, status, args) => {
    const run = runCliProcess(sandbox, args);
    expect(run.status).toBe(status);
    expect(run.stderr).toContain(`agent-harness: error ${code}: `);
    expect(run.stderr).toMatch(/\n {2}hint: \S/);
  });

  it.for(['replay', 'record'])(
    'a cassette mode (--model %s) whose cassette cannot be used is refused from the CLI, exit 1, no run created',
    (mode) => {
      const runs = () =>
        fs.existsSync(path.join(sandbox.root, '.agent-harness', 'harness_runs'))
          ? fs.readdirSync(path.join(sandbox.root, '.agent-harness', 'harness_runs')).length
          : 0;
      const before = runs();
      const run = runCliProcess(sandbox, [
        '--model',
        mode,
        '--cassette',
        'absent.json',
        'codex',
        'exec',
        '--json',
        'hi',
      ]);
      const code = mode === 'replay' ? 'CASSETTE_NOT_FOUND' : 'CASSETTE_KEY_MISSING';
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`agent-harness: error ${code}: `);
      expect(run.stderr.match(new RegExp(code, 'g'))).toHaveLength(1);
      expect(runs()).toBe(before);
    },
  );

  it('an invalid skill fails the attempt with SKILL_INVALID and still writes the audit', () => {
    const skills = path.join(sandbox.root, 'bad-skills');
    fs.mkdirSync(path.join(skills, 'bad name'), { recursive: true });
    fs.writeFileSync(path.join(skills, 'bad name', 'SKILL.md'), 'x');
    const run = runCliProcess(sandbox, ['start', '--prompt', 'x', 'codex'], { AGENT_HARNESS_SKILL_ROOTS: skills });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('agent-harness: error SKILL_INVALID: ');
    const runDir = summaryValue(run.stderr, 'Run directory');
    const meta = AttemptMetaSchema.parse(
      JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8')),
    );
    expect(meta.error?.code).toBe('SKILL_INVALID');
    expect(meta.completion?.state).toBe('failed');
    for (const name of [
      'stdin.1.log',
      'stdout.1.log',
      'stderr.1.log',
      'rasp.1.jsonl',
      'fcmp.1.jsonl',
      'fs-before.1.json',
      'fs-after.1.json',
      'fs-diff.1.json',
    ]) {
      expect(fs.existsSync(path.join(runDir, '.audit', name)), name).toBe(true);
    }
  });

  it('a managed home inside the host HOME config is refused with ENV_LEAK_DETECTED', () => {
    const run = runCliProcess(sandbox, ['start', '--prompt', 'x', 'codex'], {
      SKILL_RUNNER_AGENT_HOME: path.join(sandbox.home, '.codex-home'),
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('agent-harness: error ENV_LEAK_DETECTED: ');
    expect(fs.readdirSync(sandbox.home)).toEqual([]);
  });
});

describe('timeouts and the audit', () => {
  it('every audit file of a normal attempt matches its schema', () => {
    const run = runCliProcess(sandbox, ['start', '--prompt', 'audit me', 'codex']);
    const runDir = summaryValue(run.stderr, 'Run directory');
    const meta = expectCompleteAudit(attemptAuditPaths(runDir, 1));
    expect(meta.completion).toEqual({ state: 'completed', reason: 'done_marker' });
    expect(meta.session_id).toBe(THREAD);
    expect(fs.readFileSync(path.join(runDir, '.audit', 'stdout.1.log'), 'utf8')).toBe(fs.readFileSync(STREAM, 'utf8'));
  });

  it('a hanging engine is killed at --timeout-ms with ENGINE_TIMEOUT, keeping what it printed', () => {
    const hanging = createCliSandbox();
    try {
      installFakeEngine(hanging, 'codex', {
        stdoutFile: path.join(REPO, 'fixtures', 'streams', 'codex', 'truncated.stdout.jsonl'),
        hangAfterOutput: true,
      });
      const run = runCliProcess(hanging, ['start', '--timeout-ms', '1500', '--prompt', 'x', 'codex']);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('agent-harness: error ENGINE_TIMEOUT: ');
      const runDir = summaryValue(run.stderr, 'Run directory');
      const meta = expectCompleteAudit(attemptAuditPaths(runDir, 1));
      expect(meta.exit?.timed_out).toBe(true);
      expect(meta.completion?.state).toBe('failed');
      expect(meta.error?.code).toBe('ENGINE_TIMEOUT');
      expect(fs.readFileSync(path.join(runDir, '.audit', 'stdout.1.log'), 'utf8')).toBe(
        fs.readFileSync(path.join(REPO, 'fixtures', 'streams', 'codex', 'truncated.stdout.jsonl'), 'utf8'),
      );
      const fcmp = fs
        .readFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(fcmp.at(-1)).toMatchObject({ type: 'conversation.failed', data: { category: 'timeout' } });
    } finally {
      hanging.cleanup();
    }
  });
});

describe('doctor and help', () => {
  it('doctor prints resolved paths, an export snapshot and checks', () => {
    const run = runCliProcess(sandbox, ['doctor', '--json']);
    const report = JSON.parse(run.stdout) as {
      paths: Record<string, string>;
      env: string[];
      checks: Array<{ name: string; ok: boolean }>;
    };
    expect(report.paths.runRoot).toBe(path.join(sandbox.root, '.agent-harness', 'harness_runs'));
    expect(report.env).toContain(`export SKILL_RUNNER_NPM_PREFIX='${sandbox.prefix}'`);
    expect(report.checks.find((c) => c.name === 'engine codex')?.ok).toBe(true);
    expect(run.status).toBe(report.checks.every((c) => c.ok) ? 0 : 1);
    const text = runCliProcess(sandbox, ['doctor']);
    expect(text.stdout).toContain('# env (export snapshot)');
  });

  it('doctor passes in a project without iflow; an engine asked for with --engine must be installed', () => {
    const empty = path.join(sandbox.root, 'empty-bin');
    fs.mkdirSync(empty, { recursive: true });
    // Only codex (the sandbox's fake) is installed: the others are optional, so the doctor passes.
    const env = { PATH: `${empty}:${path.dirname(process.execPath)}:/usr/bin:/bin` };
    const ok = runCliProcess(sandbox, ['doctor'], env);
    expect(ok.stdout).toMatch(/ok {3}engine iflow: not installed \(optional;/);
    const required = runCliProcess(sandbox, ['doctor', '--engine', 'iflow'], env);
    expect(required.status).toBe(1);
    expect(required.stdout).toMatch(/FAIL engine iflow/);
    // iflow serves no npm package: its hint says PATH, not another engine's package (issue 43).
    expect(required.stdout).toContain('iflow has no npm package served here: put its `iflow` executable on PATH.');
  });

  it('--help teaches the commands', () => {
    const run = runCliProcess(sandbox, ['--help']);
    expect(run.status).toBe(0);
    for (const word of ['start', 'resume', 'runs', 'doctor', 'demo', 'model', 'codex'])
      expect(run.stdout).toContain(word);
    expect(runCliProcess(sandbox, ['start', '--help']).stdout).toContain('--translate');
  });
});
