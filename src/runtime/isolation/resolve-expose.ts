/**
 * The paths a caller exposes to the agent on purpose (`expose`), resolved and checked against the host path rule
 * before a run directory exists; the mount plan (mount-plan.ts) binds them.
 */
import path from 'node:path';
import { AgentHarnessError } from '../../errors/index.js';
import { parseExposeEntry } from './expose-entry.js';
import { describeHostPath, type HostPathRule, hostPathRule, judgeHostPath } from './host-path-rule.js';
import type { ExposeEntry, ExposeRequest } from './mount-plan.js';

/**
 * `file` made absolute against `cwd`; with a `..` component it is kept as written, since shortening it away would
 * change what it names after a symlink (the walk takes it as the kernel does).
 */
function asGiven(file: string, cwd: string): string {
  if (!file.split('/').includes('..')) return path.resolve(cwd, file);
  return path.isAbsolute(file) ? file : `${path.resolve(cwd)}/${file}`;
}

/**
 * Resolves `expose` entries: a string is `PATH` or `PATH:ro`, relative paths against `cwd`; every path must exist
 * and pass the host path rule (`host-path-rule.ts`: not `/`, `/proc`, `/sys`, `/dev`, `/tmp`, the HOME, nor holding
 * or inside the run root). CONFIG_INVALID otherwise, naming the entry and why. Each comes back as its real path.
 */
export function resolveExpose(
  entries: readonly ExposeEntry[] | undefined,
  cwd: string,
  rule: HostPathRule = hostPathRule({}),
): ExposeRequest[] {
  return (entries ?? []).map((entry) => {
    let request: ExposeRequest;
    if (typeof entry === 'string') {
      request = parseExposeEntry(entry);
    } else if (entry && typeof entry === 'object' && typeof entry.path === 'string') {
      request = { path: entry.path, readOnly: entry.readOnly === true };
    } else {
      throw new AgentHarnessError(
        'CONFIG_INVALID',
        `An expose entry must be "PATH", "PATH:ro" or { path, readOnly }; got ${JSON.stringify(entry)}.`,
        { details: { value: entry } },
      );
    }
    if (request.path.trim() === '') {
      throw new AgentHarnessError('CONFIG_INVALID', `An expose entry has an empty path (${JSON.stringify(entry)}).`, {
        details: { value: entry },
      });
    }
    const judged = judgeHostPath(request.path, rule, cwd);
    if (!judged) {
      const resolved = path.resolve(cwd, request.path);
      throw new AgentHarnessError(
        'CONFIG_INVALID',
        `The exposed path ${resolved}${resolved === request.path ? '' : ` (from "${request.path}")`} does not exist; expose only existing files or directories.`,
        { details: { value: request.path, resolved } },
      );
    }
    if (judged.refused) {
      throw new AgentHarnessError(
        'CONFIG_INVALID',
        `The exposed path ${describeHostPath(request.path, judged)} cannot be exposed: ${judged.refused}.`,
        { details: { value: request.path, resolved: judged.resolved, real: judged.real } },
      );
    }
    // As given (made absolute, its `..` kept): the plan binds its real path, and makes the links on its way.
    return { path: asGiven(request.path, cwd), readOnly: request.readOnly };
  });
}
