/**
 * The harness writes config into places an agent also writes: the run's own HOME (engine config, trust entries, the
 * leases of those entries) and its run directory (agent option files such as `.claude/settings.json`). It does so on
 * the host, outside every namespace, before and after each attempt. An agent of an earlier attempt of the run could
 * have put a symbolic link there (`~/.claude` to the host user's own `~/.claude`, `config.toml` to a host file, a
 * lease naming a host file): followed, the harness would read a host file into the run or write over it.
 *
 * So the parts of an attempt that write there run inside {@link confineToAgentRoots}, and every config read or write
 * asks {@link assertAgentPathSafe} first: a file under one of those roots must have no symbolic link on its way down
 * from the root (the file itself included), and a file the harness is asked to edit in the name of such a root (a
 * lease's) must lie inside it. Outside a confinement (tests, tools) nothing is checked. Carried by
 * `AsyncLocalStorage`, so the engines' `prepare` and cleanup code need no new parameter.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import { isWithin } from './path-within.js';

const roots = new AsyncLocalStorage<readonly string[]>();

/** Runs `work` with config reads and writes confined to `agentRoots` (absolute paths the harness made itself). */
export function confineToAgentRoots<T>(agentRoots: readonly string[], work: () => Promise<T>): Promise<T> {
  return roots.run(
    agentRoots.map((root) => path.resolve(root)),
    work,
  );
}

function refuse(file: string, why: string): never {
  throw new AgentHarnessError(
    'ENGINE_CONFIG_INJECTION_FAILED',
    `Refused to read or write ${file}: ${why}. The agent can write there, and the harness never follows a link it may have planted; remove the link (or start a new run).`,
    { details: { config_path: file } },
  );
}

/**
 * Throws ENGINE_CONFIG_INJECTION_FAILED when, inside a confinement, `file` lies under one of its roots with a symbolic
 * link on the way (the file included), or when `owner` (the root a lease was found under) is given and `file` is not
 * inside it. A path that does not exist yet is fine up to where it stops.
 */
export function assertAgentPathSafe(file: string, owner?: string): void {
  const confined = roots.getStore();
  if (!confined) return;
  const target = path.resolve(file);
  if (owner !== undefined && !isWithin(target, path.resolve(owner)))
    refuse(target, `it lies outside ${owner}, where the entry naming it was found`);
  const root = confined.find((candidate) => isWithin(target, candidate));
  if (!root) return;
  let at = root;
  for (const part of path.relative(root, target).split(path.sep).filter(Boolean)) {
    at = path.join(at, part);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(at);
    } catch {
      return;
    }
    if (stat.isSymbolicLink()) refuse(target, `${at} is a symbolic link`);
  }
}
