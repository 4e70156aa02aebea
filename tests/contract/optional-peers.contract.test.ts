/**
 * `openai` and `@anthropic-ai/sdk` are optional peer dependencies (issue 29), and so are OpenTelemetry and the ACP
 * SDK (issue 44): the package entries load none of them, an HTTP caller imports its SDK when it is created, the OTLP
 * export and the ACP client and agent when their module is first imported, and a project without them gets
 * DEPENDENCY_MISSING naming the package and its install command. A production install (`npm ls --omit=dev
 * --omit=optional`, read here from the lock file) has none of them; scripts/install-check.mjs checks a real one. Checked in child Node processes over the sources (tsx): a module hook logs
 * every file the process loads, and `require.cache` shows what CommonJS loaded.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repo = path.resolve('.');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-peers-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const VENDOR_SDK = /\/node_modules\/(openai|@anthropic-ai\/sdk|@opentelemetry\/[^/]+|@agentclientprotocol\/sdk)\//;
/** The optional peers and the scopes they live in (a project without them has neither). */
const PEERS = ['openai', '@anthropic-ai/sdk', '@opentelemetry/*', '@agentclientprotocol/sdk'];

/** Runs `script` (an ES module body) in a child Node process with tsx; returns its stdout, parsed as JSON, and the files it loaded. */
function runModule(script: string): { output: unknown; loaded: string[] } {
  const log = path.join(tmp, `imports-${Math.random().toString(16).slice(2)}.log`);
  const tail = `\nconst { createRequire } = await import('node:module');\nprocess.stdout.write('\\n' + JSON.stringify({ cjs: Object.keys(createRequire(import.meta.url).cache) }));`;
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      path.join(repo, 'tests/helpers/import-log/register.mjs'),
      '--input-type=module',
      '-e',
      script + tail,
    ],
    {
      cwd: repo,
      env: { ...process.env, AH_IMPORT_LOG: log },
      encoding: 'utf8',
    },
  );
  expect(result.status, result.stderr).toBe(0);
  const lines = result.stdout.trim().split('\n');
  const { cjs } = JSON.parse(lines.pop() ?? '{}') as { cjs: string[] };
  const urls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  const loaded = [
    ...urls.map((url) => fs.realpathSync(new URL(url).pathname)),
    ...cjs.map((file) => fs.realpathSync(file)),
  ];
  return { output: lines.length ? JSON.parse(lines.join('\n')) : null, loaded };
}

const url = (file: string): string => JSON.stringify(new URL(`file://${file}`).href);

describe('the package entries load no vendor SDK', () => {
  it.each(['index', 'orchestrator', 'fluent', 'providers'])('src/public/%s.ts', (entry) => {
    const { loaded } = runModule(`await import(${url(path.join(repo, `src/public/${entry}.ts`))});`);
    expect(loaded).toContain(path.join(repo, `src/public/${entry}.ts`));
    expect(loaded.filter((file) => VENDOR_SDK.test(file))).toEqual([]);
  });

  it('creating an HTTP caller loads its SDK, and the SDK error classes still classify failures', () => {
    const { output, loaded } = runModule(`
      const { createOpenAiChatCaller, createAnthropicMessagesCaller } = await import(${url(path.join(repo, 'src/public/index.ts'))});
      const options = { baseURL: 'http://127.0.0.1:9', apiKey: 'k', retry: { maxRetries: 0 } };
      const codes = [];
      for (const caller of [createOpenAiChatCaller(options), createAnthropicMessagesCaller(options)]) {
        codes.push(await caller.call({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).then(() => 'answered', (error) => error.code));
      }
      process.stdout.write(JSON.stringify(codes));
    `);
    // Port 9 (discard) on 127.0.0.1 refuses the connection: the SDK's connection error, told apart by its class.
    expect(output).toEqual(['LLM_CONNECTION_FAILED', 'LLM_CONNECTION_FAILED']);
    expect(loaded.some((file) => file.includes('/node_modules/openai/'))).toBe(true);
    expect(loaded.some((file) => file.includes('/node_modules/@anthropic-ai/sdk/'))).toBe(true);
  });
});

describe('a project without the vendor SDKs', () => {
  /** A copy of this package (sources and package.json) whose node_modules holds every dependency but the optional peers. */
  function projectWithoutSdks(): string {
    const project = path.join(tmp, 'project');
    if (fs.existsSync(project)) return project;
    fs.cpSync(path.join(repo, 'src'), path.join(project, 'src'), { recursive: true });
    fs.copyFileSync(path.join(repo, 'package.json'), path.join(project, 'package.json'));
    const modules = path.join(repo, 'node_modules');
    const excluded = (name: string): boolean =>
      PEERS.some((peer) => (peer.endsWith('/*') ? name.startsWith(peer.slice(0, -1)) : name === peer));
    for (const entry of fs.readdirSync(modules)) {
      const names = entry.startsWith('@')
        ? fs.readdirSync(path.join(modules, entry)).map((name) => `${entry}/${name}`)
        : [entry];
      for (const name of names.filter((candidate) => !excluded(candidate))) {
        fs.mkdirSync(path.dirname(path.join(project, 'node_modules', name)), { recursive: true });
        fs.symlinkSync(path.join(modules, name), path.join(project, 'node_modules', name));
      }
    }
    return project;
  }

  it('loads the root entry, and each HTTP caller fails with DEPENDENCY_MISSING naming the package and its install command', () => {
    const project = projectWithoutSdks();
    const { output, loaded } = runModule(`
      const api = await import(${url(path.join(project, 'src/public/index.ts'))});
      const options = { baseURL: 'http://127.0.0.1:9', apiKey: 'k', retry: { maxRetries: 0 } };
      const failures = [];
      for (const caller of [api.createOpenAiChatCaller(options), api.createAnthropicMessagesCaller(options)]) {
        failures.push(await caller.call({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).then(
          () => null,
          (error) => ({ isHarnessError: api.isAgentHarnessError(error), code: error.code, message: error.message, hint: error.hint, details: error.details }),
        ));
      }
      process.stdout.write(JSON.stringify(failures));
    `);
    expect(loaded).toContain(path.join(project, 'src/public/index.ts'));
    expect(loaded.filter((file) => VENDOR_SDK.test(file))).toEqual([]);
    const failures = output as {
      isHarnessError: boolean;
      code: string;
      message: string;
      hint: string;
      details: Record<string, unknown>;
    }[];
    expect(failures.map((failure) => [failure.isHarnessError, failure.code, failure.details])).toEqual([
      [true, 'DEPENDENCY_MISSING', { package: 'openai', install: 'npm install openai' }],
      [true, 'DEPENDENCY_MISSING', { package: '@anthropic-ai/sdk', install: 'npm install @anthropic-ai/sdk' }],
    ]);
    expect(failures[0]?.message).toContain('npm install openai');
    expect(failures[1]?.message).toContain('npm install @anthropic-ai/sdk');
    expect(failures[0]?.hint).toMatch(/install/);
  });

  it('the OTLP export and the ACP client and agent fail with DEPENDENCY_MISSING naming the missing package and the install command', () => {
    const project = projectWithoutSdks();
    const { output, loaded } = runModule(`
      const failures = {};
      for (const file of ['src/export/otlp.ts', 'src/engines/acp/client.ts', 'src/acp/agent.ts']) {
        failures[file] = await import(new URL(file, ${url(`${project}/`)}).href).then(
          () => null,
          (error) => ({ code: error.code, message: error.message, details: error.details }),
        );
      }
      process.stdout.write(JSON.stringify(failures));
    `);
    expect(loaded.filter((file) => VENDOR_SDK.test(file))).toEqual([]);
    const failures = output as Record<string, { code: string; message: string; details: Record<string, unknown> }>;
    const otelInstall =
      'npm install @opentelemetry/api @opentelemetry/exporter-trace-otlp-http @opentelemetry/otlp-transformer @opentelemetry/resources @opentelemetry/sdk-trace';
    expect(failures['src/export/otlp.ts']).toMatchObject({
      code: 'DEPENDENCY_MISSING',
      details: { package: '@opentelemetry/api', install: otelInstall },
    });
    expect(failures['src/export/otlp.ts']?.message).toContain(otelInstall);
    for (const file of ['src/engines/acp/client.ts', 'src/acp/agent.ts']) {
      expect(failures[file]).toMatchObject({
        code: 'DEPENDENCY_MISSING',
        details: { package: '@agentclientprotocol/sdk', install: 'npm install @agentclientprotocol/sdk' },
      });
      expect(failures[file]?.message).toContain('npm install @agentclientprotocol/sdk');
    }
  });
});

/** A package-lock.json entry. */
interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/**
 * The packages `npm install --omit=dev` of this manifest gives and `npm ls --omit=dev --omit=optional` lists: from
 * `dependencies`, each package's dependencies and required peers (npm installs those), resolved as Node does
 * (nearest node_modules first) in the lock file's tree; optional dependencies and optional peers left out.
 */
function productionClosure(manifest: LockEntry, lock: { packages: Record<string, LockEntry> }): Set<string> {
  const reached = new Set<string>();
  const visit = (from: string, entry: LockEntry): void => {
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    const names = [
      ...Object.keys(entry.dependencies ?? {}).filter((name) => !(name in (entry.optionalDependencies ?? {}))),
      ...Object.keys(entry.peerDependencies ?? {}).filter((name) => !optionalPeers[name]?.optional),
    ];
    for (const name of names) {
      let dir = from;
      let found: string | null = null;
      for (;;) {
        const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
        if (lock.packages[candidate]) {
          found = candidate;
          break;
        }
        if (!dir) break;
        const at = dir.lastIndexOf('/node_modules/');
        dir = at < 0 ? '' : dir.slice(0, at);
      }
      expect(found, `${name} (needed by ${from || 'agent-harness'}) is not in package-lock.json`).not.toBeNull();
      if (found && !reached.has(found)) {
        reached.add(found);
        visit(found, lock.packages[found]!);
      }
    }
  };
  visit('', manifest);
  return reached;
}

describe('package.json', () => {
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as Record<string, Record<string, unknown>>;
  const OPTIONAL_PEERS = [
    'openai',
    '@anthropic-ai/sdk',
    '@agentclientprotocol/sdk',
    '@opentelemetry/api',
    '@opentelemetry/exporter-trace-otlp-http',
    '@opentelemetry/otlp-transformer',
    '@opentelemetry/resources',
    '@opentelemetry/sdk-trace',
  ];

  it('declares the vendor SDKs, OpenTelemetry and the ACP SDK as optional peers, and nothing a user installs needs tsx', () => {
    for (const name of OPTIONAL_PEERS) {
      expect(pkg.dependencies).not.toHaveProperty([name]);
      expect(pkg.peerDependencies).toHaveProperty([name]);
      expect(pkg.peerDependenciesMeta).toHaveProperty([name], { optional: true });
      // The same version in development, where the tests use them.
      expect(pkg.devDependencies).toHaveProperty([name], pkg.peerDependencies?.[name]);
    }
    expect(pkg.dependencies).not.toHaveProperty(['tsx']);
    expect(pkg.devDependencies).toHaveProperty(['tsx']);
  });

  it('a production install of the package (npm ls --omit=dev --omit=optional) has no OpenTelemetry, ACP SDK or vendor SDK', () => {
    const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockEntry> };
    const installed = [...productionClosure(pkg as LockEntry, lock)];
    expect(installed).toContain('node_modules/zod');
    expect(installed).toContain('node_modules/commander');
    expect(installed.filter((dir) => VENDOR_SDK.test(`/${dir}/`))).toEqual([]);
  });
});
