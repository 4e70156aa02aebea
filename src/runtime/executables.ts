/**
 * Finds an engine executable: the engine prefix first when one is set (`AGENT_HARNESS_ENGINE_PREFIX`, other releases
 * of the engines), then the managed prefix's bin, then the project's `node_modules/.bin`, then agent-harness's own
 * `node_modules/.bin` (engines pinned as its dev dependencies), then PATH.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentHarnessError } from '../errors/index.js';
import type { HarnessPaths } from './paths.js';
import { isWithin } from './path-within.js';

/** The package root of agent-harness itself: two levels above this file in src/ and dist/. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The directories searched for `name`, in order, without duplicates. */
export function executableSearchPath(paths: HarnessPaths, hostPath: string | undefined = process.env.PATH): string[] {
  const dirs = [
    ...(paths.enginePrefix
      ? [path.join(paths.enginePrefix, 'node_modules', '.bin'), path.join(paths.enginePrefix, 'bin')]
      : []),
    path.join(paths.npmPrefix, 'bin'),
    path.join(paths.projectRoot, 'node_modules', '.bin'),
    path.join(PACKAGE_ROOT, 'node_modules', '.bin'),
    ...(hostPath ?? '').split(path.delimiter).filter(Boolean),
  ];
  return [...new Set(dirs.map((dir) => path.resolve(dir)))];
}

/**
 * `AGENT_HARNESS_NPM_LAUNCHERS=1`: every attempt runs the engine's executable as installed, launcher script
 * included, instead of the native binary the script starts (codex; `engines/codex/native-launch.ts`).
 */
export const NPM_LAUNCHERS_ENV = 'AGENT_HARNESS_NPM_LAUNCHERS';

/**
 * Where agents write, whatever the isolation (their run directories, their runs' homes and TMPDIRs): an executable
 * found there (through PATH, or a link from elsewhere) is never run as an engine, on the host (`doctor`) or in an
 * attempt. The managed npm prefix is not among them: it is read-only inside attempts.
 */
export function agentWritableRoots(paths: Pick<HarnessPaths, 'agentHome' | 'runRoot' | 'tmpDir'>): string[] {
  return [paths.agentHome, paths.runRoot, paths.tmpDir].map((root) => realOrResolved(root));
}

function realOrResolved(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/** Whether the executable `file` (its real path) lies in one of `roots`. */
function isAgentWritten(file: string, roots: readonly string[]): boolean {
  const real = realOrResolved(file);
  return roots.some((root) => isWithin(real, root));
}

/**
 * Absolute path of the executable, or throws ENGINE_EXECUTABLE_MISSING listing every path searched, with `hint` (what
 * to install: the engine's package, `engines/install-hint.ts`) or the code's generic one.
 */
export function resolveExecutable(name: string, paths: HarnessPaths, hostPath?: string, hint?: string): string {
  const searched = executableSearchPath(paths, hostPath).map((dir) => path.join(dir, name));
  const roots = agentWritableRoots(paths);
  const found = searched.find((file) => isExecutableFile(file) && !isAgentWritten(file, roots));
  if (found) return found;
  throw new AgentHarnessError(
    'ENGINE_EXECUTABLE_MISSING',
    `Executable "${name}" was not found. Searched:\n${searched.map((p) => `  - ${p}${isExecutableFile(p) ? ' (skipped: it lies where agents write)' : ''}`).join('\n')}`,
    { details: { executable: name, searched }, ...(hint ? { hint } : {}) },
  );
}
