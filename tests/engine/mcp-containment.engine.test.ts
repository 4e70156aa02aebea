/**
 * A stdio MCP server does not open the host to the agent (issue 42), on codex (one engine: the plan is the same for
 * every engine, `host-path-rule.contract.test.ts` covers it without one). The server's script sits directly in the
 * project that holds the run root (the common `node <project>/mcp-server.mjs`), and its command line names `/` and
 * the HOME (a filesystem server rooted there): the attempt still runs contained, the server is called, and the
 * agent's shell can list no other run, read no canary in the HOME or the project.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAttempt } from '../../src/core/run-attempt.js';
import { turns } from '../../src/model/script.js';
import { DEFAULT_AGENT_OPTIONS } from '../../src/protocol/index.js';
import { probeNamespaces } from '../../src/runtime/isolation/probe.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { expectCompleteAudit } from '../helpers/audit.js';
import { missingReasons } from '../helpers/engines.js';
import { scaled } from '../helpers/load-scaled.js';

const support = probeNamespaces();
const contained = support.available && support.filesystem?.available === true;
const missing = (await missingReasons()).codex;
const tag = randomBytes(6).toString('hex');
const HOME_CANARY = `home-canary-${tag}`;
const RUN_CANARY = `other-run-canary-${tag}`;

// Outside /tmp (the agent's /tmp is private): in this checkout's data directory, as filesystem-containment does.
fs.mkdirSync(path.join(process.cwd(), '.agent-harness'), { recursive: true });
const base = fs.mkdtempSync(path.join(process.cwd(), '.agent-harness', 'mcp-project-'));
const project = path.join(base, 'project');
const home = path.join(base, 'home');
const paths = resolveHarnessPaths({ env: {}, projectRoot: project, skillRoots: [] });
const otherRun = path.join(paths.runRoot, `other-run-${tag}`);
const server = path.join(project, 'mcp-server.mjs');
fs.mkdirSync(otherRun, { recursive: true });
fs.mkdirSync(home, { recursive: true });
fs.writeFileSync(path.join(home, 'canary.txt'), `${HOME_CANARY}\n`);
fs.writeFileSync(path.join(otherRun, 'canary.txt'), `${RUN_CANARY}\n`);
fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "mcp-project", "private": true }\n');
fs.copyFileSync(path.resolve('fixtures/mcp/echo-server.mjs'), server);
// The server's dependencies, as a project has them: its node_modules (bound with the script, the project is not).
fs.symlinkSync(fs.realpathSync('node_modules'), path.join(project, 'node_modules'));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

describe.skipIf(!contained)('codex: a stdio MCP server beside the run root, named / and the HOME', () => {
  it('runs contained: the server is called, the agent sees no other run, no HOME canary, not the project', async ({
    skip,
  }) => {
    if (missing) skip(missing);
    const probe = [
      'exec > probe.txt 2>&1',
      `echo "runs: $(ls '${paths.runRoot}' 2>&1 | tr '\\n' ' ')"`,
      `echo "other-run: $(cat '${path.join(otherRun, 'canary.txt')}' 2>&1)"`,
      `echo "home: $(cat '${path.join(home, 'canary.txt')}' 2>&1)"`,
      `echo "project: $(ls '${project}' 2>&1 | tr '\\n' ' ')"`,
      'echo "end: yes"',
      '',
    ].join('\n');
    const prompt = 'Call the echo tool, then probe.';
    const result = await runAttempt({
      paths,
      engine: 'codex',
      launch: 'start',
      prompt,
      passthrough: ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', prompt],
      agentOptions: {
        ...DEFAULT_AGENT_OPTIONS,
        mcpServers: [{ name: 'local', command: [process.execPath, server, '/', home] }],
      },
      script: {
        version: 1,
        turns: [
          { type: 'mcp_tool', server: 'local', tool: 'echo', arguments: { text: 'contained' } },
          turns.shell('sh probe.sh'),
          turns.final('Probed.'),
        ],
      },
      workspace: { files: { 'probe.sh': probe } },
      timeoutMs: scaled(150_000),
      hostEnv: { ...process.env, HOME: home },
    });
    const meta = expectCompleteAudit(result.audit);
    expect(meta.isolation).toMatchObject({ reason: null, filesystem: 'mount-namespace' });
    const mcp = (meta.isolation?.exposed ?? []).filter((entry) => entry.why === 'mcp').map((entry) => entry.path);
    expect(mcp).toContain(server);
    expect(mcp).not.toContain(project);
    expect(mcp).not.toContain('/');
    expect(mcp).not.toContain(home);
    const requests = fs.readFileSync(result.audit.modelRequests, 'utf8');
    expect(requests, 'the server answered the call').toContain('echo: contained');
    const report = path.join(result.runDir, 'probe.txt');
    expect(fs.existsSync(report), "the agent's shell never ran the probe").toBe(true);
    const seen = Object.fromEntries(
      fs
        .readFileSync(report, 'utf8')
        .split('\n')
        .filter((line) => line.includes(': '))
        .map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
    );
    expect(seen.end, JSON.stringify(seen)).toBe('yes');
    expect(seen.runs).not.toContain(`other-run-${tag}`);
    expect(seen['other-run']).not.toContain(RUN_CANARY);
    expect(seen.home).not.toContain(HOME_CANARY);
    expect(seen.home).toMatch(/No such file or directory/);
    expect(seen.project).not.toMatch(/package\.json/);
    expect(requests).not.toContain(HOME_CANARY);
    expect(requests).not.toContain(RUN_CANARY);
  });
});
