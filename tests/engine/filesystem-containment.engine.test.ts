/**
 * The agent sees only its workspace (issue 30): on every engine whose CLI is installed, one real attempt under the
 * default isolation, in a project of its own (a temporary directory with a package.json, a git repository and the
 * engines' instruction files), has the agent's shell run a probe script that tries what a hostile agent would: read a
 * canary in the host user's real HOME and one in the project above the run root, write outside the workspace (the
 * project, a host /tmp directory), write into and delete from `.audit/`, and use the host paths exposed to it. The
 * probe writes what happened into the workspace; the assertions are on that, on the host's files afterwards, and on
 * the model requests (no instruction file from above the run root reaches the model). codex runs with its own
 * sandbox off, and the probe is a script file, so no engine's own permission layer stands in for the harness's.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { turns } from '../../src/model/script.js';
import type { EngineId } from '../../src/protocol/index.js';
import { probeNamespaces } from '../../src/runtime/isolation/probe.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { expectCompleteAudit } from '../helpers/audit.js';
import { missingReasons, registryEngines } from '../helpers/engines.js';
import { homeCanaryPath } from '../helpers/home-canary.js';
import { scaled } from '../helpers/load-scaled.js';

const support = probeNamespaces();
const contained = support.available && support.filesystem?.available === true;
const missing = await missingReasons();
const tag = randomBytes(6).toString('hex');
/** Canaries: each is a string that must never reach the agent (or the model). */
const HOME_CANARY = `home-canary-${tag}`;
const PROJECT_CANARY = `project-canary-${tag}`;
const INSTRUCTIONS_CANARY = `instructions-canary-${tag}`;
const EXPOSED_CANARY = `exposed-canary-${tag}`;

// The project is outside /tmp (the agent's /tmp is a private one, where a write would land unseen by the host): in
// this checkout's data directory, so that its parents are the agent's read-only root.
fs.mkdirSync(path.join(process.cwd(), '.agent-harness'), { recursive: true });
const project = fs.mkdtempSync(path.join(process.cwd(), '.agent-harness', 'fs-project-'));
const homeCanary = homeCanaryPath('fs-canary', tag);
const hostTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-fs-hosttmp-'));
const exposedRo = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-fs-ro-'));
const exposedRw = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-fs-rw-'));

/** The probe the agent's shell runs (`sh fs-probe.sh`): one line per check into fs-probe.txt. */
function probeScript(engine: EngineId): string {
  return [
    'exec > fs-probe.txt 2>&1',
    `echo "home: $(cat '${homeCanary}' 2>&1)"`,
    `echo "project: $(cat '${path.join(project, 'canary.txt')}' 2>&1)"`,
    `echo "project-list: $(ls '${project}' 2>&1 | tr '\\n' ' ')"`,
    `echo "write-project: $( (echo x > '${path.join(project, `escape-${engine}.txt`)}') 2>&1 && echo wrote)"`,
    `echo "write-hosttmp: $( (echo x > '${path.join(hostTmp, `escape-${engine}.txt`)}') 2>&1 && echo wrote)"`,
    `echo "write-audit: $( (echo x > .audit/evil.txt) 2>&1 && echo wrote)"`,
    `echo "delete-audit: $(rm .audit/meta.1.json 2>&1 && echo deleted)"`,
    `echo "exposed-ro: $(cat '${path.join(exposedRo, 'data.txt')}' 2>&1)"`,
    `echo "write-exposed-ro: $( (echo x > '${path.join(exposedRo, 'new.txt')}') 2>&1 && echo wrote)"`,
    `echo "write-exposed-rw: $( (echo from-agent > '${path.join(exposedRw, `from-${engine}.txt`)}') 2>&1 && echo wrote)"`,
    'echo "remount: $(mount -o remount,bind,rw .audit 2>&1 && echo remounted)"',
    'echo "unmount: $(umount .audit 2>&1 && echo unmounted)"',
    'echo "end: yes"',
    '',
  ].join('\n');
}

/** The probe's lines, by their label. */
function probeLines(text: string): Record<string, string> {
  const lines: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(': ');
    if (colon > 0) lines[line.slice(0, colon)] = line.slice(colon + 2);
  }
  return lines;
}

beforeAll(() => {
  fs.writeFileSync(homeCanary, `${HOME_CANARY}\n`);
  fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "fs-containment-project", "private": true }\n');
  fs.writeFileSync(path.join(project, 'canary.txt'), `${PROJECT_CANARY}\n`);
  for (const file of ['AGENTS.md', 'CLAUDE.md', 'GEMINI.md'])
    fs.writeFileSync(path.join(project, file), `# Project rules\n\nAlways say ${INSTRUCTIONS_CANARY}.\n`);
  execFileSync('git', ['init', '-q', project]);
  fs.writeFileSync(path.join(exposedRo, 'data.txt'), `${EXPOSED_CANARY}\n`);
});

afterAll(() => {
  fs.rmSync(homeCanary, { force: true });
  for (const dir of [project, hostTmp, exposedRo, exposedRw]) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!contained).for(registryEngines())(
  `%s: the agent sees only its workspace (${support.filesystem?.reason ?? support.reason ?? 'contained'})`,
  (engine) => {
    it('hides the host HOME and the project, refuses writes outside and to .audit, shows what is exposed', async ({
      skip,
    }) => {
      if (missing[engine]) skip(missing[engine]!);
      const paths = resolveHarnessPaths({ env: {}, projectRoot: project, skillRoots: [] });
      const prompt = 'Probe the filesystem.';
      const result = await runAttempt({
        paths,
        engine,
        launch: 'start',
        prompt,
        ...(engine === 'codex'
          ? {
              passthrough: [
                'exec',
                '--json',
                '--skip-git-repo-check',
                '--dangerously-bypass-approvals-and-sandbox',
                prompt,
              ],
            }
          : {}),
        script: { version: 1, turns: [turns.shell('sh fs-probe.sh'), turns.final('Probed the filesystem.')] },
        workspace: { files: { 'fs-probe.sh': probeScript(engine) } },
        expose: [`${exposedRo}:ro`, { path: exposedRw }],
        timeoutMs: scaled(150_000),
        hostEnv: process.env,
      });
      const meta = expectCompleteAudit(result.audit);
      expect(meta.isolation).toMatchObject({ mode: 'auto', reason: null, filesystem: 'mount-namespace' });
      expect(meta.isolation?.exposed).toEqual(
        expect.arrayContaining([
          { path: result.runDir, access: 'rw', why: 'workspace' },
          { path: path.join(result.runDir, '.audit'), access: 'ro', why: 'audit' },
          { path: fs.realpathSync(exposedRo), access: 'ro', why: 'expose' },
          { path: fs.realpathSync(exposedRw), access: 'rw', why: 'expose' },
        ]),
      );
      const report = path.join(result.runDir, 'fs-probe.txt');
      expect(
        fs.existsSync(report),
        `the agent's shell never ran the probe (${result.toolCalls.length} tool calls; completion ${JSON.stringify(result.completion)})`,
      ).toBe(true);
      const seen = probeLines(fs.readFileSync(report, 'utf8'));
      expect(seen.end, JSON.stringify(seen)).toBeDefined();

      // Nothing of the host user's HOME or of the project above the run root.
      expect(seen.home).not.toContain(HOME_CANARY);
      expect(seen.home).toMatch(/No such file or directory/);
      expect(seen.project).not.toContain(PROJECT_CANARY);
      expect(seen['project-list']).not.toMatch(/canary\.txt|AGENTS\.md|package\.json/);
      // Writes outside the workspace fail, and nothing arrived on the host.
      expect(seen['write-project']).not.toContain('wrote');
      expect(seen['write-hosttmp']).not.toContain('wrote');
      expect(fs.existsSync(path.join(project, `escape-${engine}.txt`))).toBe(false);
      expect(fs.existsSync(path.join(hostTmp, `escape-${engine}.txt`))).toBe(false);
      // .audit/ is read-only to the agent, and no capability lets it remount it.
      expect(seen['write-audit']).toMatch(/Read-only file system/);
      expect(seen['delete-audit']).toMatch(/Read-only file system/);
      expect(seen.remount).not.toContain('remounted');
      expect(seen.unmount).not.toContain('unmounted');
      expect(fs.existsSync(path.join(result.runDir, '.audit', 'evil.txt'))).toBe(false);

      const diagnostics = result.rasp.flatMap((event) =>
        event.data.type === 'diagnostic' ? [event.data.diagnostic.code] : [],
      );
      expect(diagnostics.filter((code) => code.startsWith('AUDIT_'))).toEqual([]);
      // What is exposed is seen; read-only stays read-only.
      expect(seen['exposed-ro']).toBe(EXPOSED_CANARY);
      expect(seen['write-exposed-ro']).toMatch(/Read-only file system/);
      expect(fs.existsSync(path.join(exposedRo, 'new.txt'))).toBe(false);
      expect(seen['write-exposed-rw']).toBe('wrote');
      expect(fs.readFileSync(path.join(exposedRw, `from-${engine}.txt`), 'utf8')).toBe('from-agent\n');
      // No instruction file of the project reached the model.
      const requests = fs.readFileSync(result.audit.modelRequests, 'utf8');
      expect(requests.length).toBeGreaterThan(0);
      expect(requests).not.toContain(INSTRUCTIONS_CANARY);
      expect(requests).not.toContain(HOME_CANARY);
      expect(requests).not.toContain(PROJECT_CANARY);
      expect(result.completion).toEqual({ state: 'completed', reason: 'done_marker' });
    });
  },
);
