/**
 * Skill injection (seed 001, Decision 10): before every attempt, skills from each source root are copied into
 * the run directory's engine skill root. Later roots override earlier ones with the same name, so a test
 * fixture can replace a project skill. Each injected SKILL.md gets the completion contract appended unless it
 * already carries it, so every skill ends with the same done signal.
 */
import { createHash, randomBytes } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import type { SkillInjection } from '../protocol/index.js';
import { MAX_CONFIG_BYTES, readInputText } from './bounded-input.js';
import { treeProblem } from './isolation/contained-tree.js';
import { type HostPathRule, hostPathRule, judgeHostPath } from './isolation/host-path-rule.js';
import { compareCodeUnits } from './code-unit-order.js';

import { DONE_MARKER } from '../protocol/versions.js';

export { DONE_MARKER };

/** Tag that marks an appended completion contract (its presence means "already there"). */
export const COMPLETION_CONTRACT_TAG = '<!-- agent-harness:completion-contract -->';

/** The completion contract appended to each SKILL.md. */
export const COMPLETION_CONTRACT = `
${COMPLETION_CONTRACT_TAG}
## Completion contract

When the task of this skill is finished, end your final message with a line containing only
\`${DONE_MARKER}\` (or the JSON object \`{"__skill_done__": true}\`). If you need input from the user,
ask for it and do not print the marker.
`;

/** A plain skill directory name: no separators, no leading dot, no whitespace or shell metacharacters. */
export const SKILL_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Options of {@link injectSkills}. */
export interface InjectSkillsOptions {
  /** Source roots in override order (later wins). Missing roots are skipped. */
  sourceRoots: readonly string[];
  /** Absolute target directory (e.g. `<run_dir>/.codex/skills`). */
  targetRoot: string;
  /** Inject only these skills (by name); SKILL_INVALID names any that no source root has. Absent: every skill. */
  only?: readonly string[];
  /** The host path rule roots and skills pass (default: the HOME's, with no run root). */
  rule?: HostPathRule;
}

/** One skill found in the source roots. */
export interface SkillSource {
  name: string;
  dir: string;
}

/**
 * One stat, synchronous: every attempt checks its skill roots, most of which do not exist (skipped). A root that
 * exists and is not a directory (a file named as a root by mistake) is SKILL_INVALID naming it, not skipped silently.
 */
function isDirectory(p: string): boolean {
  let stat: fsSync.Stats | undefined;
  try {
    stat = fsSync.statSync(p, { throwIfNoEntry: false });
  } catch {
    return false;
  }
  if (stat && !stat.isDirectory())
    throw new AgentHarnessError(
      'SKILL_INVALID',
      `The skill root ${p} is not a directory; a skill root holds one directory per skill (<root>/<name>/SKILL.md).`,
      { details: { root: p } },
    );
  return stat !== undefined;
}

/**
 * Lists the skills of the source roots after overrides; throws SKILL_INVALID for a bad entry, a root the host path
 * rule refuses (the HOME, `/`), or a skill holding a symlink that leads out of it (`host-path-rule.ts`).
 */
export async function collectSkills(
  sourceRoots: readonly string[],
  rule: HostPathRule = hostPathRule({}),
): Promise<Map<string, SkillSource>> {
  const skills = new Map<string, SkillSource>();
  for (const root of sourceRoots) {
    if (!isDirectory(root)) continue;
    const judged = judgeHostPath(root, rule);
    if (judged?.refused)
      throw new AgentHarnessError('SKILL_INVALID', `The skill root ${root} cannot be used: ${judged.refused}.`, {
        details: { root, real: judged.real },
      });
    const entries = await fs.readdir(root, { withFileTypes: true });
    for (const entry of entries.sort((a, b) => compareCodeUnits(a.name, b.name))) {
      if (entry.name.startsWith('.') && !entry.isDirectory()) continue; // .DS_Store, .gitkeep
      // A tool's directory (.git of a cloned skills repository, .github, .vscode) is not a skill; a dot directory
      // holding a SKILL.md was meant as one, and is refused below for its name.
      if (entry.name.startsWith('.') && !(await fs.lstat(path.join(root, entry.name, 'SKILL.md')).catch(() => null)))
        continue;
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue; // loose files are not skills
      const dir = path.join(root, entry.name);
      if (!SKILL_NAME_PATTERN.test(entry.name)) {
        throw new AgentHarnessError(
          'SKILL_INVALID',
          `Skill directory name ${JSON.stringify(entry.name)} in ${root} is not a plain name (allowed: ${SKILL_NAME_PATTERN.source}).`,
          {
            details: { name: entry.name, root },
          },
        );
      }
      if (entry.isSymbolicLink()) {
        throw new AgentHarnessError(
          'SKILL_INVALID',
          `Skill ${entry.name} in ${root} is a symbolic link; copy the skill directory instead.`,
          { details: { name: entry.name, root } },
        );
      }
      const skillFile = path.join(dir, 'SKILL.md');
      const stat = await fs.lstat(skillFile).catch(() => null);
      // A linked SKILL.md is refused as a linked skill is: the copy would keep the link, and the contract appended to
      // it would be written through to the file it points at.
      if (stat?.isSymbolicLink()) {
        throw new AgentHarnessError(
          'SKILL_INVALID',
          `Skill ${entry.name} in ${root}: SKILL.md is a symbolic link; copy the file into the skill directory instead.`,
          { details: { name: entry.name, root } },
        );
      }
      if (!stat?.isFile()) {
        throw new AgentHarnessError('SKILL_INVALID', `Skill ${entry.name} in ${root} has no SKILL.md file.`, {
          details: { name: entry.name, root },
        });
      }
      const problem = treeProblem(dir, rule);
      if (problem)
        throw new AgentHarnessError('SKILL_INVALID', `Skill ${entry.name} in ${root}: ${problem}.`, {
          details: { name: entry.name, root },
        });
      skills.set(entry.name, { name: entry.name, dir });
    }
  }
  return skills;
}

/**
 * Moves `staging` to `target`, replacing whatever is there: a rename cannot replace a non-empty directory, so the old
 * one is first renamed aside (another process may be doing the same; whoever renames last wins, with a whole copy).
 */
async function swapDirectory(staging: string, target: string): Promise<void> {
  for (let tries = 0; ; tries += 1) {
    try {
      await fs.rename(staging, target);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || tries >= 20) {
        await fs.rm(staging, { recursive: true, force: true });
        throw error;
      }
    }
    const aside = `${staging}.old`;
    await fs.rename(target, aside).then(
      () => fs.rm(aside, { recursive: true, force: true }),
      () => undefined,
    );
  }
}

/** SKILL_INVALID when `only` names a skill that `skills` (collected from `sourceRoots`) lacks. */
function assertOnlySkills(
  only: readonly string[],
  skills: ReadonlyMap<string, SkillSource>,
  sourceRoots: readonly string[],
): void {
  const missing = only.filter((name) => !skills.has(name));
  if (missing.length > 0) {
    throw new AgentHarnessError(
      'SKILL_INVALID',
      `onlySkills names ${missing.map((n) => JSON.stringify(n)).join(', ')}, which no skill root has; found: ${[...skills.keys()].sort().join(', ') || 'none'}.`,
      { details: { missing, roots: [...sourceRoots] } },
    );
  }
}

/**
 * SKILL_INVALID when `only` names a skill no root in `sourceRoots` has: checked when an attempt is prepared, before
 * its run directory exists, so the mistake leaves no failed run behind.
 */
export async function checkOnlySkills(only: readonly string[], sourceRoots: readonly string[]): Promise<void> {
  assertOnlySkills(only, await collectSkills(sourceRoots), sourceRoots);
}

/** Copies skills into the target root, appends the completion contract, returns the audit summary. */
export async function injectSkills(options: InjectSkillsOptions): Promise<SkillInjection> {
  const skills = await collectSkills(options.sourceRoots, options.rule);
  if (options.only) {
    // Checked again: a skill root can change between the prepare and the injection.
    assertOnlySkills(options.only, skills, options.sourceRoots);
    for (const name of [...skills.keys()]) if (!options.only.includes(name)) skills.delete(name);
  }
  const injected: SkillInjection['skills'] = [];
  if (skills.size > 0) await fs.mkdir(options.targetRoot, { recursive: true });
  for (const skill of [...skills.values()].sort((a, b) => compareCodeUnits(a.name, b.name))) {
    const target = path.join(options.targetRoot, skill.name);
    // Built in a staging directory and swapped in: concurrent attempts of one run inject into the same folder.
    const staging = path.join(
      path.dirname(options.targetRoot),
      `.skill-staging-${skill.name}-${process.pid}-${randomBytes(4).toString('hex')}`,
    );
    await fs.cp(skill.dir, staging, { recursive: true, dereference: false, verbatimSymlinks: true });
    const skillFile = path.join(staging, 'SKILL.md');
    let text = await readInputText(skillFile, {
      what: 'SKILL.md',
      maxBytes: MAX_CONFIG_BYTES,
      unreadableCode: 'SKILL_INVALID',
    });
    const appended = !text.includes(COMPLETION_CONTRACT_TAG);
    if (appended) {
      text = `${text.replace(/\s*$/, '')}\n${COMPLETION_CONTRACT}`;
      await fs.writeFile(skillFile, text);
    }
    await swapDirectory(staging, target);
    injected.push({
      name: skill.name,
      source: skill.dir,
      sha256: createHash('sha256').update(text).digest('hex'),
      contract_appended: appended,
    });
  }
  return {
    source_roots: [...options.sourceRoots],
    target_root: options.targetRoot,
    skill_count: injected.length,
    skills: injected,
  };
}
