/**
 * The examples are copyable (issue 29): they import the package by name (`agent-harness`, `agent-harness/vitest`…),
 * never this repository's sources, so what a user copies runs against the installed package.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ENTRIES = new Set([
  'agent-harness',
  ...Object.keys(
    (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { exports: Record<string, unknown> }).exports,
  ).map((key) => path.posix.join('agent-harness', key)),
]);

/** Every import specifier of a TypeScript file (static, bare and dynamic). */
function specifiers(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

const files = fs
  .readdirSync('examples', { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.ts') && !name.split(path.sep).includes('node_modules'))
  .map((name) => path.join('examples', name));

describe('examples import the package, not its sources', () => {
  it('finds the examples and their package imports', () => {
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap(specifiers).filter((s) => s.startsWith('agent-harness'))).toEqual(
      expect.arrayContaining([
        'agent-harness',
        'agent-harness/vitest',
        'agent-harness/orchestrator',
        'agent-harness/fluent',
        'agent-harness/providers',
      ]),
    );
  });

  it.each(files)('%s', (file) => {
    const example = file.split(path.sep).slice(0, 2).join(path.sep);
    for (const specifier of specifiers(file)) {
      if (specifier.startsWith('.')) {
        // A relative import stays inside its own example.
        const target = path.join(path.dirname(file), specifier);
        expect(target.startsWith(`${example}${path.sep}`), `${file} imports ${specifier}`).toBe(true);
      } else if (specifier.startsWith('agent-harness')) {
        expect(ENTRIES, `${file} imports ${specifier}, which package.json does not export`).toContain(specifier);
      }
    }
  });
});
