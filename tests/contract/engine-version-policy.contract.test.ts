/**
 * The engine version policy (issue 46 item 2): each adapter names the versions it was checked against; a run made
 * with another version is marked unchecked in the meta, the conformance report, the run header, the FCMP stream, the
 * consistency report and the viewer; doctor says so; policy `checked` refuses one before a run directory exists.
 *
 * Two throwaway engines (the sixth engine of tests/helpers/, registered twice) are installed in a managed prefix as
 * npm packages whose CLI is a wrapper script: `--version` prints the package's version, anything else runs the sixth
 * engine's real CLI. Both adapters were "checked against" 1.0.0; one package is 1.0.0, the other 2.0.0.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctorChecks } from '../../src/cli/doctor.js';
import { runCli } from '../../src/cli/main.js';
import { runAttempt } from '../../src/core/run-attempt.js';
import type { EngineAdapter } from '../../src/engines/engine.js';
import { isCheckedVersion, versionInLine, versionSatisfies } from '../../src/engines/engine-versions.js';
import { registerEngine } from '../../src/engines/registry.js';
import { readAttemptView } from '../../src/report/attempt-view.js';
import { buildConsistencyReport } from '../../src/report/build.js';
import { renderMarkdown } from '../../src/report/render.js';
import { runReportInputs } from '../../src/report/run-inputs.js';
import { listRuns } from '../../src/runtime/run-store.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { parseAgentHarnessOptions, toAgentHarnessConfig } from '../../src/vitest/options.js';
import { SIXTH_CLI, sixthEngine, sixthFacts, sixthTools } from '../helpers/sixth-engine/index.js';

describe('version ranges', () => {
  it.each([
    ['1.0.102', '1.0.102', true],
    ['1.0.103', '1.0.102', false],
    ['2.1.328', '>=2.1.197 <2.2.0', true],
    ['2.2.0', '>=2.1.197 <2.2.0', false],
    ['2.2.1', '>=2.1.197 <2.2.0 || 2.2.1', true],
    ['0.61.5', '0.61.x', true],
    ['0.62.0', '0.61.x', false],
    ['1.0.0-rc.1', '>=1.0.0', false],
    ['1.0.0-rc.1', '>=1.0.0-rc.0', true],
    ['v1.2.3+build.7', '1.2.3', true],
    ['not a version', '1.2.3', false],
  ])('%s against %s: %s', (version, range, expected) => {
    expect(versionSatisfies(version, range)).toBe(expected);
  });

  it('a list is any of its ranges; a range it cannot read is a USAGE_ERROR naming it', () => {
    expect(versionSatisfies('0.169.0', ['0.168.x', '0.169.0'])).toBe(true);
    expect(() => versionSatisfies('1.0.0', '^1.0.0')).toThrow(/"\^1\.0\.0"/);
  });

  it('reads the version of a CLI --version line', () => {
    expect(versionInLine('GitHub Copilot CLI 1.0.102.')).toBe('1.0.102');
    expect(versionInLine('2.1.197 (Claude Code)')).toBe('2.1.197');
    expect(versionInLine('codex-cli 0.169.0')).toBe('0.169.0');
    expect(versionInLine('no version')).toBeNull();
  });

  it('isCheckedVersion reads the built-in adapters: their pinned versions are checked, others are not', async () => {
    expect(await isCheckedVersion('copilot', '1.0.102')).toBe(true);
    // claude moved its pin from 2.1.197 to 2.1.332 and names both: the goldens are 2.1.197's captures.
    expect(await isCheckedVersion('claude', '2.1.197')).toBe(true);
    expect(await isCheckedVersion('claude', '2.1.332')).toBe(true);
    expect(await isCheckedVersion('claude', '2.1.328')).toBe(false);
    expect(await isCheckedVersion('codex', '0.171.0')).toBe(true);
    // The codex pin moved from 0.169.0 to 0.171.0: the old pin is no longer what was checked.
    expect(await isCheckedVersion('codex', '0.169.0')).toBe(false);
    await expect(isCheckedVersion('nosuchengine', '1.0.0')).rejects.toMatchObject({ code: 'ENGINE_UNKNOWN' });
  });
});

describe('a run with an unchecked engine version', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-versions-'));
  const prefix = path.join(tmp, 'prefix');
  const saved = { ...process.env };
  const unregister: Array<() => void> = [];

  /** Installs `<name>-cli@<version>` whose bin `<name>` is a wrapper around the sixth engine's CLI. */
  function install(name: string, version: string): void {
    const pkg = path.join(prefix, 'lib', 'node_modules', `${name}-cli`);
    fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: `${name}-cli`, version }));
    fs.copyFileSync(SIXTH_CLI, path.join(pkg, 'agent.mjs'));
    const wrapper = path.join(pkg, 'bin', name);
    fs.writeFileSync(
      wrapper,
      `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "${name} ${version}"; exit 0; fi\nexec node "${path.join(pkg, 'agent.mjs')}" "$@"\n`,
    );
    fs.chmodSync(wrapper, 0o755);
    fs.mkdirSync(path.join(prefix, 'bin'), { recursive: true });
    fs.symlinkSync(wrapper, path.join(prefix, 'bin', name));
  }

  function register(id: string, name: string): void {
    const adapter: EngineAdapter = {
      ...sixthEngine,
      id,
      executableName: name,
      packageName: `${name}-cli`,
      checkedVersions: '1.0.0',
    };
    unregister.push(
      registerEngine({
        id,
        facts: async () => ({ ...sixthFacts, id, tools: { ...sixthTools, engine: id } }),
        adapter: async () => adapter,
      }),
    );
  }

  const paths = () => resolveHarnessPaths();
  const script = {
    version: 1 as const,
    turns: [{ type: 'final' as const, text: 'All done.', done: true }],
  };

  beforeAll(() => {
    install('old-agent', '1.0.0');
    install('new-agent', '2.0.0');
    register('oldagent', 'old-agent');
    register('newagent', 'new-agent');
    Object.assign(process.env, {
      SKILL_RUNNER_DATA_DIR: path.join(tmp, 'data'),
      SKILL_RUNNER_NPM_PREFIX: prefix,
      AGENT_HARNESS_SKILL_ROOTS: path.join(tmp, 'no-skills'),
      NO_COLOR: '1',
    });
  });
  afterAll(() => {
    for (const undo of unregister) undo();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('is marked in meta, conformance, FCMP, the run header, the consistency report and the viewer', async () => {
    const scriptFile = path.join(tmp, 'script.json');
    fs.writeFileSync(scriptFile, JSON.stringify(script));
    const out = new PassThrough();
    const err = new PassThrough();
    let stderr = '';
    out.resume();
    err.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const status = await runCli(['start', '--script', scriptFile, 'newagent', 'hi'], { stdout: out, stderr: err });
    expect(status, stderr).toBe(0);
    expect(stderr).toContain('engine_version: 2.0.0 (unchecked; checked: 1.0.0)');
    expect(stderr).toContain('warning ENGINE_VERSION_UNCHECKED');

    const [run] = (await listRuns(paths().runRoot)).filter((r) => r.engine === 'newagent');
    const audit = path.join(run!.run_dir, '.audit');
    const meta = JSON.parse(fs.readFileSync(path.join(audit, 'meta.1.json'), 'utf8'));
    expect(meta).toMatchObject({
      engine_version: '2.0.0',
      engine_version_checked: false,
      engine_checked_versions: '1.0.0',
    });
    const conformance = JSON.parse(fs.readFileSync(path.join(audit, 'conformance-report.1.json'), 'utf8'));
    expect(conformance).toMatchObject({ engine_version: '2.0.0', engine_version_checked: false });
    const fcmp = fs
      .readFileSync(path.join(audit, 'fcmp.1.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(fcmp).toContainEqual(
      expect.objectContaining({
        type: 'diagnostic.warning',
        data: expect.objectContaining({ code: 'ENGINE_VERSION_UNCHECKED' }),
      }),
    );

    const report = buildConsistencyReport(runReportInputs([run!]).inputs, 'test');
    expect(renderMarkdown(report)).toContain('newagent 2.0.0 (unchecked version)');
    expect(readAttemptView(run!.run_dir, 1)).toMatchObject({ engineVersion: '2.0.0', engineVersionChecked: false });
  });

  it('a checked version is marked checked, with no warning', async () => {
    const result = await runAttempt({ paths: paths(), engine: 'oldagent', launch: 'start', prompt: 'hi', script });
    expect(result.engineVersion).toBe('1.0.0');
    expect(result.engineVersionChecked).toBe(true);
    expect(result.conformance.diagnostics.map((d) => d.code)).not.toContain('ENGINE_VERSION_UNCHECKED');
  });

  it("policy 'checked' refuses it before a run directory exists; 'any' runs it without the warning", async () => {
    const before = (await listRuns(paths().runRoot)).length;
    await expect(
      runAttempt({
        paths: paths(),
        engine: 'newagent',
        launch: 'start',
        prompt: 'hi',
        script,
        engineVersions: 'checked',
      }),
    ).rejects.toMatchObject({ code: 'ENGINE_VERSION_UNCHECKED', message: expect.stringContaining('2.0.0') });
    expect((await listRuns(paths().runRoot)).length).toBe(before);
    const any = await runAttempt({
      paths: paths(),
      engine: 'newagent',
      launch: 'start',
      prompt: 'hi',
      script,
      engineVersions: 'any',
    });
    expect(any.engineVersionChecked).toBe(false);
    expect(any.conformance.diagnostics.map((d) => d.code)).not.toContain('ENGINE_VERSION_UNCHECKED');
  });

  it("the Vitest plugin takes engineVersions ('warn' by default) and hands it to the tests", () => {
    expect(toAgentHarnessConfig(parseAgentHarnessOptions({}), tmp).engineVersions).toBe('warn');
    expect(toAgentHarnessConfig(parseAgentHarnessOptions({ engineVersions: 'checked' }), tmp).engineVersions).toBe(
      'checked',
    );
    expect(() => parseAgentHarnessOptions({ engineVersions: 'strict' })).toThrow(/engineVersions/);
  });

  it('doctor marks the unchecked version and the checked one', async () => {
    const checks = await runDoctorChecks(paths(), process.env, [], { engines: ['oldagent', 'newagent'] });
    const of = (id: string) => checks.find((check) => check.name === `engine ${id}`)!;
    expect(of('oldagent')).toMatchObject({ ok: true, detail: expect.stringContaining('; checked') });
    expect(of('newagent').detail).toContain('WARNING ENGINE_VERSION_UNCHECKED: 2.0.0');
  });
});
