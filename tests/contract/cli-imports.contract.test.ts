/**
 * The command's import graph stays lazy (issue 13): `--version`, `runs` and `translate` load neither the model
 * server, nor the PTY module, nor the attempt code, nor any engine's adapter (translate loads one engine's parser).
 * Checked from the sources (every module is its own file there), with a module hook logging what the process loads.
 * And the layers hold (issue 29): nothing the command imports, statically or on demand, is in src/vitest/; the
 * consistency report lives in src/report/, below both.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-imports-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The src/ and dependency modules `agent-harness ...args` loaded, as paths relative to the repository. */
function loadedBy(args: string[]): string[] {
  const log = path.join(tmp, `imports-${args[0]}-${Math.random().toString(16).slice(2)}.log`);
  const result = spawnSync(
    process.execPath,
    ['--import', path.resolve('tests/helpers/import-log/register.mjs'), 'scripts/run-source.mjs', ...args],
    {
      env: { ...process.env, AH_IMPORT_LOG: log, AGENT_HARNESS_RUN_ROOT: path.join(tmp, 'runs') },
      encoding: 'utf8',
    },
  );
  expect(result.status, result.stderr).toBe(0);
  const root = path.resolve('.');
  return fs
    .readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((url) => path.relative(root, new URL(url).pathname));
}

const HEAVY = [
  /^src\/model\//,
  /node-pty/,
  /^src\/runtime\/pty\.ts$/,
  /^src\/core\/run-attempt\.ts$/,
  /^src\/engines\/[a-z]+\/index\.ts$/,
];

describe('what a light command loads', () => {
  it.each([
    ['--version', ['--version']],
    ['--help', ['--help']],
    ['runs --json', ['runs', '--json']],
    [
      'translate --summary',
      ['translate', '--engine', 'codex', '--stdout', 'fixtures/streams/codex/done-marker.stdout.jsonl', '--summary'],
    ],
  ])('%s loads no model server, PTY, attempt code or engine adapter', (_label, args) => {
    const loaded = loadedBy(args);
    expect(loaded).toContain('src/cli/main.ts');
    expect(loaded.filter((file) => HEAVY.some((pattern) => pattern.test(file)))).toEqual([]);
  });

  it('translate loads the parser of its engine only (captured files: not the ACP parser)', () => {
    const loaded = loadedBy([
      'translate',
      '--engine',
      'codex',
      '--stdout',
      'fixtures/streams/codex/done-marker.stdout.jsonl',
      '--summary',
    ]);
    const parsers = loaded.filter((file) => /^src\/engines\/[a-z]+\//.test(file));
    expect(parsers.every((file) => file.startsWith('src/engines/codex/'))).toBe(true);
    expect(parsers).toContain('src/engines/codex/parse.ts');
    expect(loaded.filter((file) => file.startsWith('src/acp/'))).toEqual([]);
  });
});

describe('what an attempt loads', () => {
  it('a native start loads no ACP client or SDK: only an attempt over ACP does', () => {
    const loaded = loadedBy(['start', '--isolation', 'off', '--prompt', 'hi', 'codex']);
    expect(loaded).toContain('src/core/run-attempt.ts');
    expect(loaded.filter((file) => /@agentclientprotocol|^src\/acp\/client\.ts$/.test(file))).toEqual([]);
  });

  it('a scripted start loads only what it runs: no ACP code, cassette, run finder, script schemas or unused protocol schemas', () => {
    const loaded = loadedBy(['start', '--isolation', 'off', '--prompt', 'hi', 'codex']);
    expect(loaded).toContain('src/core/run-attempt.ts');
    // No protocol schema at all (issue 44): the run index and records are checked by hand, the sealed meta is written
    // unparsed (zod-off-hot-paths.contract.test.ts checks the built command loads no zod).
    const unused = [
      /^src\/acp\//,
      /^src\/cassette\//,
      /^src\/core\/session\.ts$/,
      /^src\/core\/seal-interrupted\.ts$/,
      // The default script is not parsed: the script schemas load only when a script is given.
      /^src\/model\/(index|script)\.ts$/,
      /^src\/protocol\/(index|common|meta|run-index|rasp|fcmp|conformance|agent-event|fs-diff|agent-options)\.ts$/,
      /node_modules\/zod\//,
    ];
    expect(loaded.filter((file) => unused.some((pattern) => pattern.test(file)))).toEqual([]);
  });
});

/** The relative imports of a source file (static `from '…'`, bare `import '…'` and dynamic `import('…')`), as src paths. */
function relativeImports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map(
    (m) => m[1]!,
  );
  return specifiers.map((specifier) =>
    path.relative(path.resolve('.'), path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts'))),
  );
}

/** Every src file reachable from `roots` through relative imports, each with the chain that reaches it. */
function importGraph(roots: string[]): Map<string, string[]> {
  const reached = new Map<string, string[]>(roots.map((root) => [root, [root]]));
  const queue = [...roots];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const next of relativeImports(file)) {
      if (reached.has(next) || !fs.existsSync(next)) continue;
      reached.set(next, [...reached.get(file)!, next]);
      queue.push(next);
    }
  }
  return reached;
}

describe('layers', () => {
  const sources = (dir: string): string[] =>
    fs
      .readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts'))
      .map((name) => path.join(dir, name));

  it('the import graph reader sees static and on-demand imports (it finds the reporter under src/public/reporter.ts)', () => {
    expect([...importGraph(['src/public/reporter.ts']).keys()]).toEqual(
      expect.arrayContaining(['src/vitest/reporter.ts', 'src/report/build.ts', 'src/report/schema.ts']),
    );
    expect([...importGraph(['src/cli/report.ts']).keys()]).toEqual(
      expect.arrayContaining([
        'src/report/build.ts',
        'src/report/render.ts',
        'src/report/baseline.ts',
        'src/report/run-inputs.ts',
      ]),
    );
  });

  it('nothing in src/cli/ imports src/vitest/, directly or through another module', () => {
    const graph = importGraph(sources('src/cli'));
    const intoVitest = [...graph]
      .filter(([file]) => file.startsWith('src/vitest/'))
      .map(([, chain]) => chain.join(' -> '));
    expect(intoVitest).toEqual([]);
  });

  it('src/report/ imports neither src/vitest/ nor src/cli/', () => {
    const graph = importGraph(sources('src/report'));
    const upward = [...graph]
      .filter(([file]) => /^src\/(vitest|cli)\//.test(file))
      .map(([, chain]) => chain.join(' -> '));
    expect(upward).toEqual([]);
  });
});
