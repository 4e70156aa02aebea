/**
 * `openai` and `@anthropic-ai/sdk` are optional peer dependencies (issue 29): the package entries load neither,
 * an HTTP caller imports its SDK when it is created, and a project without the SDK gets DEPENDENCY_MISSING naming
 * the package and its install command. Checked in child Node processes over the sources (tsx): a module hook logs
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

const VENDOR_SDK = /\/node_modules\/(openai|@anthropic-ai\/sdk)\//;

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
  /** A copy of this package (sources and package.json) whose node_modules holds every dependency but the two SDKs. */
  function projectWithoutSdks(): string {
    const project = path.join(tmp, 'project');
    fs.mkdirSync(path.join(project, 'node_modules', '@anthropic-ai'), { recursive: true });
    fs.cpSync(path.join(repo, 'src'), path.join(project, 'src'), { recursive: true });
    fs.copyFileSync(path.join(repo, 'package.json'), path.join(project, 'package.json'));
    const modules = path.join(repo, 'node_modules');
    for (const name of fs.readdirSync(modules)) {
      if (name === 'openai' || name === '@anthropic-ai') continue;
      fs.symlinkSync(path.join(modules, name), path.join(project, 'node_modules', name));
    }
    for (const name of fs.readdirSync(path.join(modules, '@anthropic-ai'))) {
      if (name !== 'sdk')
        fs.symlinkSync(
          path.join(modules, '@anthropic-ai', name),
          path.join(project, 'node_modules', '@anthropic-ai', name),
        );
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
});

describe('package.json', () => {
  it('declares the vendor SDKs as optional peers, and nothing a user installs needs tsx', () => {
    const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as Record<string, Record<string, unknown>>;
    for (const name of ['openai', '@anthropic-ai/sdk']) {
      expect(pkg.dependencies).not.toHaveProperty([name]);
      expect(pkg.peerDependencies).toHaveProperty([name]);
      expect(pkg.peerDependenciesMeta).toHaveProperty([name], { optional: true });
      expect(pkg.devDependencies).toHaveProperty([name]);
    }
    expect(pkg.dependencies).not.toHaveProperty(['tsx']);
    expect(pkg.devDependencies).toHaveProperty(['tsx']);
  });
});
