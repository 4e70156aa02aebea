/**
 * A hostile agent on every engine (issue 42): nothing an agent writes is run outside its namespaces or by a later
 * attempt, and a plan that cannot be set up is refused, never weakened. One real attempt per engine, under the
 * default isolation, has the agent's shell run a script that tries each escape the probe found:
 *
 * - plant an executable named like the engine into the managed npm prefix (searched first for engines, by `doctor`
 *   and every later attempt) and into its run's own prefix; `doctor` and the engine lookup afterwards must run
 *   neither (a planted file that ran on the host would create a marker in a host directory the agent cannot see),
 * - read another run's home (its sessions): only its own run's home is there,
 * - write into `.audit/`,
 * - plant symbolic links: in the workspace to a host canary (the audit must not carry its text), and over its
 *   engine's config directory to a host directory (the next attempt of the run must refuse to write through it,
 *   and the host directory stays as it was),
 * - and run beside a stdio MCP server whose command line names `/` and a file in the host HOME (neither may make
 *   the new root fall back to the host: the attempt stays contained).
 * Exposing `/proc/self/cwd/..` is refused before any run directory is made.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctorChecks } from '../../src/cli/doctor.js';
import { runAttempt } from '../../src/core/run-attempt.js';
import { resumeRequest } from '../../src/core/session.js';
import { loadEngine } from '../../src/engines/registry.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { turns } from '../../src/model/script.js';
import { DEFAULT_AGENT_OPTIONS, type EngineId } from '../../src/protocol/index.js';
import { resolveExecutable } from '../../src/runtime/executables.js';
import { probeNamespaces } from '../../src/runtime/isolation/probe.js';
import { type HarnessPaths, resolveHarnessPaths, runHome } from '../../src/runtime/paths.js';
import { listRuns } from '../../src/runtime/run-store.js';
import { expectCompleteAudit } from '../helpers/audit.js';
import { missingReasons, registryEngines } from '../helpers/engines.js';
import { homeCanaryPath } from '../helpers/home-canary.js';
import { scaled } from '../helpers/load-scaled.js';

const support = probeNamespaces();
const contained = support.available && support.filesystem?.available === true;
const missing = await missingReasons();
const tag = randomBytes(6).toString('hex');
const HOME_CANARY = `hostile-home-canary-${tag}`;
/** What another run left in its own home (a session record): no agent of this test may read it. */
const OTHER_RUN = '20260101T000000-codex-0badc0de';
const OTHER_RUN_SECRET = `other-run-session-${tag}`;
const ECHO_SERVER = path.resolve('fixtures/mcp/echo-server.mjs');

/** Each engine's config directory under its HOME: what the agent replaces with a link to a host directory. */
const CONFIG_DIR: Record<string, string> = {
  codex: '.codex',
  claude: '.claude',
  gemini: '.gemini',
  opencode: path.join('.config', 'opencode'),
  copilot: '.copilot',
  qwen: '.qwen',
  iflow: '.iflow',
};

// Outside /tmp (the agent's /tmp is private: a write there would land unseen), in this checkout's data directory.
fs.mkdirSync(path.join(process.cwd(), '.agent-harness'), { recursive: true });
const project = fs.mkdtempSync(path.join(process.cwd(), '.agent-harness', 'hostile-project-'));
const homeCanary = homeCanaryPath('hostile-canary', tag);
/** A file in the host HOME the MCP server is given: bound alone (read-only), never the HOME around it. */
const mcpHomeFile = homeCanaryPath('hostile-mcp-arg', tag);
/** Host-only directories: markers a planted executable would leave if the host ran it, and a config directory. */
const markers = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-hostile-markers-'));
const hostConfig = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-hostile-config-'));

function pathsOf(): HarnessPaths {
  return resolveHarnessPaths({ env: {}, projectRoot: project, skillRoots: [] });
}

/** The script the agent's shell runs (`sh hostile.sh`): one line per try into hostile.txt. */
function hostileScript(engine: EngineId, executable: string, paths: HarnessPaths): string {
  const planted = (marker: string) => `#!/bin/sh\\ntouch "${path.join(markers, marker)}"\\n`;
  const managedBin = path.join(paths.npmPrefix, 'bin', executable);
  return [
    'exec > hostile.txt 2>&1',
    `echo "plant-managed: $( (printf '${planted(`managed-${engine}`)}' > '${managedBin}' && chmod +x '${managedBin}') 2>&1 && echo wrote)"`,
    `echo "plant-own: $( (mkdir -p "$NPM_CONFIG_PREFIX/bin" && printf '${planted(`own-${engine}`)}' > "$NPM_CONFIG_PREFIX/bin/${executable}" && chmod +x "$NPM_CONFIG_PREFIX/bin/${executable}") 2>&1 && echo wrote)"`,
    `echo "homes: $(ls '${path.join(paths.agentHome, 'runs')}' 2>&1 | tr '\\n' ' ')"`,
    `echo "other-home: $(cat '${path.join(runHome(paths, OTHER_RUN).home, 'session.jsonl')}' 2>&1)"`,
    `echo "home-canary: $(cat '${homeCanary}' 2>&1)"`,
    `echo "write-audit: $( (echo x > .audit/evil.txt) 2>&1 && echo wrote)"`,
    // copilot's TMPDIR starts with a copy of the harness's warmed compile cache: the agent rewrites its copy and
    // tries the harness's seed, which a later attempt's copy comes from.
    `echo "tamper-tmp: $(n=0; for f in "$TMPDIR"/node-compile-cache/*/*; do [ -f "$f" ] && echo x > "$f" && n=$((n+1)); done; echo $n)"`,
    `echo "tamper-seed: $( (echo x > '${path.join(copilotSeeds(paths), 'evil')}') 2>&1 && echo wrote)"`,
    `echo "link-workspace: $(ln -s '${homeCanary}' leak-link.txt 2>&1 && echo linked)"`,
    // The engine may write its config directory again between the `rm` and the `ln` (copilot writes its session
    // events there while the tool runs): then `ln -s` puts the link inside the new directory. A determined agent tries
    // again until the directory itself is the link.
    `d="$HOME/${CONFIG_DIR[engine]}"; for i in 1 2 3 4 5 6 7 8 9 10; do rm -rf "$d"; ln -s '${hostConfig}' "$d" 2>/dev/null; [ -L "$d" ] && break; done`,
    `echo "link-config: $([ -L "$d" ] && echo linked || echo "not a link: $(ls -la "$d" 2>&1)")"`,
    'echo "end: yes"',
    '',
  ].join('\n');
}

/** Where the harness keeps copilot's warmed compile cache, a copy of which starts each attempt's TMPDIR. */
function copilotSeeds(paths: HarnessPaths): string {
  return path.join(paths.agentCacheDir, 'copilot-pkg', 'tmp-seed');
}

/** The lines of a probe's report, by label. */
function reportLines(file: string): Record<string, string> {
  const lines: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const colon = line.indexOf(': ');
    if (colon > 0) lines[line.slice(0, colon)] = line.slice(colon + 2);
  }
  return lines;
}

/** Every file under `dir` (links not followed), with its text. */
function textsUnder(dir: string): string {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => fs.readFileSync(path.join(entry.parentPath, entry.name), 'utf8'))
    .join('\n');
}

/** The engine's arguments that keep codex's own sandbox out of the way (the harness's containment is tested). */
function passthrough(engine: EngineId, prompt: string): { passthrough?: string[] } {
  return engine === 'codex'
    ? { passthrough: ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', prompt] }
    : {};
}

beforeAll(() => {
  fs.writeFileSync(homeCanary, `${HOME_CANARY}\n`);
  fs.writeFileSync(mcpHomeFile, 'for the MCP server\n');
  fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "hostile-project", "private": true }\n');
  fs.writeFileSync(path.join(hostConfig, 'settings.json'), '{ "host": true }\n');
  // The managed prefix exists (as it does once engines are installed there): bound read-only into attempts.
  fs.mkdirSync(path.join(pathsOf().npmPrefix, 'bin'), { recursive: true });
  const other = runHome(pathsOf(), OTHER_RUN).home;
  fs.mkdirSync(other, { recursive: true });
  fs.writeFileSync(path.join(other, 'session.jsonl'), `${OTHER_RUN_SECRET}\n`);
});

afterAll(() => {
  for (const file of [homeCanary, mcpHomeFile]) fs.rmSync(file, { force: true });
  for (const dir of [project, markers, hostConfig]) fs.rmSync(dir, { recursive: true, force: true });
});

describe('a plan that names the host', () => {
  it('exposing /proc/self/cwd/.. is CONFIG_INVALID before any run directory is made', async () => {
    const paths = pathsOf();
    const before = (await listRuns(paths.runRoot)).length;
    const refused = await runAttempt({
      paths,
      engine: 'codex',
      launch: 'start',
      prompt: 'x',
      expose: ['/proc/self/cwd/..'],
      hostEnv: process.env,
    }).catch((error: unknown) => error);
    expect(isAgentHarnessError(refused, 'CONFIG_INVALID'), String(refused)).toBe(true);
    expect((await listRuns(paths.runRoot)).length).toBe(before);
  });
});

describe.skipIf(!contained).for(registryEngines())(
  `%s: a hostile agent (${support.filesystem?.reason ?? support.reason ?? 'contained'})`,
  (engine) => {
    it('plants nothing the host or a later attempt runs or reads, and the MCP plan stays contained', async ({
      skip,
    }) => {
      if (missing[engine]) skip(missing[engine]!);
      const paths = pathsOf();
      const adapter = await loadEngine(engine);
      const prompt = 'Try to escape.';
      const first = await runAttempt({
        paths,
        engine,
        launch: 'start',
        prompt,
        ...passthrough(engine, prompt),
        script: { version: 1, turns: [turns.shell('sh hostile.sh'), turns.final('Tried.')] },
        workspace: { files: { 'hostile.sh': hostileScript(engine, adapter.executableName, paths) } },
        agentOptions: {
          ...DEFAULT_AGENT_OPTIONS,
          mcpServers: [{ name: 'files', command: ['node', ECHO_SERVER, '/', mcpHomeFile] }],
        },
        timeoutMs: scaled(150_000),
        hostEnv: process.env,
      });
      const meta = expectCompleteAudit(first.audit);
      // The MCP server's `/` and HOME file did not make the plan fail, nor fall back to the host.
      expect(meta.isolation).toMatchObject({ mode: 'auto', reason: null, filesystem: 'mount-namespace' });
      const bound = (meta.isolation?.exposed ?? []).map((entry) => entry.path);
      expect(bound).not.toContain('/');
      expect(bound).not.toContain(os.homedir());
      expect(meta.isolation?.exposed).toContainEqual({ path: mcpHomeFile, access: 'ro', why: 'mcp' });
      const report = path.join(first.runDir, 'hostile.txt');
      expect(fs.existsSync(report), `the probe never ran: ${JSON.stringify(first.completion)}`).toBe(true);
      const seen = reportLines(report);
      expect(seen.end, JSON.stringify(seen)).toBe('yes');

      // The managed prefix is read-only; the run's own prefix is the agent's.
      expect(seen['plant-managed']).toMatch(/Read-only file system/);
      expect(fs.existsSync(path.join(paths.npmPrefix, 'bin', adapter.executableName))).toBe(false);
      expect(seen['plant-own']).toBe('wrote');
      const own = runHome(paths, first.runId);
      expect(fs.existsSync(path.join(own.npmPrefix, 'bin', adapter.executableName))).toBe(true);
      // Only its own home is there to list; the host HOME is not.
      expect(seen.homes?.trim()).toBe(first.runId);
      expect(seen['home-canary']).not.toContain(HOME_CANARY);
      expect(seen['write-audit']).toMatch(/Read-only file system/);
      // The harness's compile-cache seed is not there; the agent's TMPDIR copy is its own (copilot: a rewritten copy
      // left every seed file as the harness wrote it).
      expect(seen['tamper-seed']).toMatch(/Directory nonexistent|No such file or directory/);
      if (engine === 'copilot') {
        expect(Number(seen['tamper-tmp'])).toBeGreaterThan(0);
        const seeds = fs
          .readdirSync(copilotSeeds(paths), { withFileTypes: true, recursive: true })
          .filter((entry) => entry.isFile());
        expect(seeds.length).toBeGreaterThan(0);
        for (const entry of seeds)
          expect(fs.readFileSync(path.join(entry.parentPath, entry.name), 'utf8')).not.toBe('x\n');
      }
      expect(seen['link-workspace']).toBe('linked');
      expect(seen['link-config']).toBe('linked');

      // Nothing the agent wrote runs on the host: the engine lookup and `doctor` skip the run's prefix.
      expect(resolveExecutable(adapter.executableName, paths, process.env.PATH)).not.toContain(own.home);
      const doctor = await runDoctorChecks(paths, { PATH: process.env.PATH, HOME: os.homedir() }, [engine], {
        probeTries: 1,
      });
      expect(doctor.find((check) => check.name === `engine ${engine}`)?.detail).not.toContain(own.home);
      expect(fs.readdirSync(markers)).toEqual([]);
      // The link in the workspace was recorded as a link: no audit file holds the canary's text.
      expect(textsUnder(path.join(first.runDir, '.audit'))).not.toContain(HOME_CANARY);

      // The next attempt of the run refuses to write its config through the planted link; the host is untouched.
      // An engine that keeps its session store in that directory (copilot) lost the session with it: its next
      // attempt is a new session in the same run, which writes the same config.
      const again = { paths, hostEnv: process.env, timeoutMs: scaled(60_000) };
      const next = await resumeRequest({ runDir: first.runDir }, 'Again.', again);
      const resumed = await runAttempt(
        first.sessionId === null
          ? { ...again, engine, launch: 'start', run: next.run!, prompt: 'Again.', ...passthrough(engine, 'Again.') }
          : next,
      );
      expect(resumed.error?.code, JSON.stringify(resumed.completion)).toBe('ENGINE_CONFIG_INJECTION_FAILED');
      expect(resumed.error?.message).toContain('symbolic link');
      expect(fs.readdirSync(hostConfig)).toEqual(['settings.json']);
      expect(fs.readFileSync(path.join(hostConfig, 'settings.json'), 'utf8')).toBe('{ "host": true }\n');
      expect(fs.readdirSync(markers)).toEqual([]);

      // Another run's home (its sessions, what its agent left) is not there to read.
      expect(seen['other-home']).toMatch(/No such file or directory/);
      expect(seen['other-home']).not.toContain(OTHER_RUN_SECRET);
    });
  },
);
