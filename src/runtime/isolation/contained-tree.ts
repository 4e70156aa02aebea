/**
 * A host tree the harness copies into a run (a seeded template, a skill) must carry only its own files: a symlink in
 * it that leads out of the tree (to `/etc/passwd`, to a file in the HOME) would be copied as a link, and read on the
 * host, by the harness's git or by an agent without containment, as that host file. Checked under the host path rule
 * (`host-path-rule.ts`), before the run directory is made where the caller can.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type HostPathRule, judgeHostPath } from './host-path-rule.js';
import { isWithin } from '../path-within.js';

/**
 * Why the tree at `root` may not be copied into a run, or null when it may (or does not exist: the caller says so):
 * the root itself refused by the rule, or a symlink in it leading out of the tree (dangling ones included) or to a
 * path the rule refuses. Links are not followed into; everything else is walked.
 */
export function treeProblem(root: string, rule: HostPathRule): string | null {
  const judged = judgeHostPath(root, rule);
  if (judged === null) return null;
  if (judged.refused) return `${root} itself cannot be copied into a run: ${judged.refused}`;
  const top = judged.real;
  const pending = [top];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // not a directory (a file root), or unreadable: the copy reports it
    }
    for (const entry of entries) {
      const at = path.join(dir, entry.name);
      if (entry.isDirectory()) pending.push(at);
      if (!entry.isSymbolicLink()) continue;
      const target = fs.readlinkSync(at);
      const leads = judgeHostPath(at, rule);
      const real = leads?.real ?? path.resolve(dir, target);
      if (!isWithin(real, top))
        return `the link ${at} -> ${target} leads out of ${root}${leads ? ` (to ${real})` : ''}; copy the file into the tree instead`;
      if (leads?.refused) return `the link ${at} -> ${target} leads to ${real}: ${leads.refused}`;
    }
  }
  return null;
}
