/**
 * Where an ACP adapter package (pinned as a devDependency, like the engine CLIs) is installed: looked up in the
 * `node_modules` directories above agent-harness's own package root, as Node would resolve it, without going through
 * the package's `exports`. An adapter that is not installed is ENGINE_CAPABILITY_UNAVAILABLE for capability `acp`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../../errors/index.js';
import { MAX_CONFIG_BYTES, readInputBytesSync } from '../../runtime/bounded-input.js';
import { PACKAGE_ROOT } from '../../runtime/executables.js';
import { installCommand } from '../../runtime/pinned-packages.js';
import type { EngineId } from '../../protocol/index.js';

/** The `node_modules` directories a package is looked up in from `from`, nearest first. */
function nodeModulesDirs(from: string): string[] {
  const dirs: string[] = [];
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    if (path.basename(dir) !== 'node_modules') dirs.push(path.join(dir, 'node_modules'));
    if (dir === path.dirname(dir)) return dirs;
  }
}

/**
 * The installed directory of `packageName` seen from `from` (default: agent-harness's package root), or null. A
 * directory counts only when its package.json names the package.
 */
export function installedPackageDir(packageName: string, from: string = PACKAGE_ROOT): string | null {
  for (const dir of nodeModulesDirs(from)) {
    const candidate = path.join(dir, ...packageName.split('/'));
    try {
      const file = path.join(candidate, 'package.json');
      const text = readInputBytesSync(file, { what: 'package manifest', maxBytes: MAX_CONFIG_BYTES });
      const manifest = JSON.parse(text.toString('utf8')) as { name?: unknown };
      if (manifest.name === packageName) return fs.realpathSync(candidate);
    } catch {
      // not installed there
    }
  }
  return null;
}

/** ENGINE_CAPABILITY_UNAVAILABLE (capability `acp`) for an adapter of `engine` that is not installed. */
export function acpAdapterMissing(engine: EngineId, packageName: string, looked: string): AgentHarnessError {
  return new AgentHarnessError(
    'ENGINE_CAPABILITY_UNAVAILABLE',
    `${engine} cannot run over ACP: its adapter ${packageName} is not installed (${looked}). Install it next to agent-harness (${installCommand(packageName)}), or use the engine's native transport.`,
    { details: { engine, capability: 'acp', package: packageName } },
  );
}

/**
 * The absolute path of `file` (relative to the package) in the installed `packageName`; ENGINE_CAPABILITY_UNAVAILABLE
 * naming the package when the package or the file is missing.
 */
export function adapterFile(engine: EngineId, packageName: string, file: string, from: string = PACKAGE_ROOT): string {
  const dir = installedPackageDir(packageName, from);
  if (dir === null) throw acpAdapterMissing(engine, packageName, `no node_modules above ${from} holds it`);
  const full = path.join(dir, file);
  if (!fs.existsSync(full)) throw acpAdapterMissing(engine, packageName, `${full} is missing`);
  return full;
}
