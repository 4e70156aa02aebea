import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The repository root. */
export const REPO = path.resolve(import.meta.dirname, '..', '..');

/** Builds the package and copies `examples/<name>` into a fresh temp directory; returns that directory. */
export function prepareExampleProject(name: string): string {
  // dist/ is brought up to date once per test run, by the global setup (tests/setup/build-dist.ts).
  const project = fs.mkdtempSync(path.join(os.tmpdir(), `ah-${name}-`));
  fs.cpSync(path.join(REPO, 'examples', name), project, { recursive: true });
  fs.mkdirSync(path.join(project, 'node_modules'));
  fs.symlinkSync(REPO, path.join(project, 'node_modules', 'agent-harness'));
  fs.symlinkSync(path.join(REPO, 'node_modules', 'vitest'), path.join(project, 'node_modules', 'vitest'));
  return project;
}
