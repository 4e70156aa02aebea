/**
 * Refuses to run an engine whose config roots would land in the host user's own configuration: the host
 * HOME itself, one of its ancestors, or anything under a hidden entry of it (`~/.codex`, `~/.config`, …).
 * A checkout under `~/src/project` is fine; `SKILL_RUNNER_AGENT_HOME=~` is not. The same rule covers the run root
 * (`AGENT_HARNESS_RUN_ROOT`) and a run directory given by the caller.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';

/**
 * Resolves symlinks of the longest existing prefix of `p`, so a link into `~/.codex` is seen for what it is. The C
 * library's realpath: the same walk of the path's components as Node's realpathSync, without its JavaScript per
 * component (an attempt checks a dozen paths).
 */
function realPathLoose(p: string): string {
  let current = path.resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(current), ...rest.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return path.resolve(p);
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

/** The first offending root and why, or null when every root is outside the host's config. */
export function findEnvLeak(
  roots: readonly string[],
  hostHome: string | undefined,
): { root: string; reason: string } | null {
  if (!hostHome) return null;
  const home = realPathLoose(hostHome);
  for (const root of roots) {
    const real = realPathLoose(root);
    const rel = path.relative(home, real);
    if (rel === '') return { root, reason: `it is the host HOME (${home})` };
    if (!path.isAbsolute(rel) && rel.startsWith('..') === false) {
      const top = rel.split(path.sep)[0] ?? '';
      if (top.startsWith('.')) return { root, reason: `it is inside the host's ${path.join(home, top)}` };
      continue;
    }
    const up = path.relative(real, home);
    if (up !== '' && !up.startsWith('..') && !path.isAbsolute(up)) {
      return { root, reason: `it contains the host HOME (${home})` };
    }
  }
  return null;
}

/**
 * Throws ENV_LEAK_DETECTED when {@link findEnvLeak} finds an offending root; `what` names the roots in the message
 * (`Config root`, `Run root`: a run directory gets the engine's skill and config folders, `.codex/skills/…`, so a run
 * root at `~` or under `~/.codex` writes into the host's own engine config as surely as an agent home there).
 */
export function assertNoEnvLeak(roots: readonly string[], hostHome: string | undefined, what = 'Config root'): void {
  const leak = findEnvLeak(roots, hostHome);
  if (leak) {
    throw new AgentHarnessError(
      'ENV_LEAK_DETECTED',
      `${what} ${leak.root} would leak into the host user's configuration: ${leak.reason}.`,
      {
        details: { root: leak.root, host_home: hostHome },
      },
    );
  }
}
