/**
 * The one rule for every host path that enters an attempt's filesystem (issue 42): `expose` entries, stdio MCP
 * servers' files, skill roots, seeded templates and the engine's installation. A path is judged by its real path —
 * resolved as the harness process sees it, through symlinks and the `/proc/<pid>/cwd`-like links — and that real
 * path is what the plan binds: the namespace init resolves a path from its own working directory and its own /proc,
 * so a path as given (`/proc/self/cwd/..`) would name something else there.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isWithin } from '../path-within.js';

/** What the rule compares against: the run root and the host user's home directories. */
export interface HostPathRule {
  /** The run root (its real path where it exists): every run's directory, the index and lock. */
  runRoot: string | null;
  /** The host HOME in every form the harness knows it (`os.homedir()`, the passwd entry, the HOME it was given). */
  homes: readonly string[];
}

/** A path judged by {@link judgeHostPath}. */
export interface JudgedHostPath {
  /** The path as given, made absolute. */
  resolved: string;
  /** Its real path: what a plan binds. */
  real: string;
  /** Why it may not enter the plan, or null when it may. */
  refused: string | null;
}

/** `file`'s real path, or null when it does not exist (or cannot be resolved). */
function realPathOf(file: string): string | null {
  try {
    return fs.realpathSync(file);
  } catch {
    return null;
  }
}

/**
 * The rule of an attempt whose run root is `runRoot`, for a harness started with `HOME=home`. The run root is taken
 * by its real path when it exists (else as given: a run root not made yet).
 */
export function hostPathRule(options: { runRoot?: string | undefined; home?: string | undefined }): HostPathRule {
  const homes = new Set<string>();
  const candidates = [os.homedir(), options.home];
  try {
    candidates.push(os.userInfo().homedir);
  } catch {
    // No passwd entry for this uid (some containers): HOME alone.
  }
  for (const home of candidates) {
    if (!home || !path.isAbsolute(home)) continue;
    homes.add(path.resolve(home));
    const real = realPathOf(home);
    if (real) homes.add(real);
  }
  const runRoot = options.runRoot ? path.resolve(options.runRoot) : null;
  return { runRoot: runRoot ? (realPathOf(runRoot) ?? runRoot) : null, homes: [...homes] };
}

/**
 * Why a real path may not enter an attempt's plan, or null when it may. The new root makes its own `/proc`, `/dev`
 * and private `/tmp`; `/` and `/sys` cannot be bound into it; the HOME and the run root hold what the agent must not
 * see (the user's secrets; other runs, the index and lock).
 */
export function hostPathRefusal(real: string, rule: HostPathRule): string | null {
  if (real === '/') return 'it is the whole host filesystem';
  if (isWithin(real, '/proc'))
    return "it is the host's /proc (the agent gets a fresh /proc of its own PID namespace; a /proc link names the harness's own files)";
  if (isWithin(real, '/sys')) return 'it is part of the host /sys, which cannot be bound into the new root';
  if (isWithin(real, '/dev')) return "it is part of the host's /dev (the agent gets a minimal /dev of its own)";
  if (real === '/tmp')
    return "it is the host's /tmp (the agent gets a private /tmp; the host's holds the harness's sockets and other runs' roots); name a directory under it";
  if (rule.homes.includes(real))
    return "it is the host user's HOME (keys, engine configs, shell history); name the files or directories under it you need";
  const root = rule.runRoot;
  if (root && isWithin(root, real))
    return `it holds the run root ${root} (every other run, its index and lock); use a path beside the run root, or move the run root out of it`;
  if (root && isWithin(real, root)) return `it is inside the run root ${root} (other runs' directories)`;
  return null;
}

/** The host trees a path may not even pass through: their links name the harness's own view (`/proc/self/root`). */
const KERNEL_TREES = ['/proc', '/sys', '/dev'] as const;

/**
 * Resolves `file` (absolute) component by component, as the kernel does for the harness process: each symlink met is
 * followed (a `/proc/<pid>/cwd` or `root` link by the path it reads as). Returns the real path and the first
 * kernel tree (`/proc`, `/sys`, `/dev`) the way passed through; `real` is null when it does not exist (or a link on
 * the way cannot be read: another user's `/proc/1/root`).
 */
function resolveFully(file: string): { real: string | null; through: string | null } {
  let current = '/';
  let through: string | null = null;
  const parts = file.split('/').filter(Boolean);
  for (let hops = 0; parts.length > 0; ) {
    const part = parts.shift()!;
    const next = part === '..' ? path.dirname(current) : part === '.' ? current : path.join(current, part);
    through ??= KERNEL_TREES.find((tree) => isWithin(next, tree)) ?? null;
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(next);
    } catch {
      return { real: null, through };
    }
    if (!stat.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (++hops > 40) return { real: null, through };
    let target: string;
    try {
      target = fs.readlinkSync(next);
    } catch {
      return { real: null, through };
    }
    // The rest of the path continues from where the link points; `..` after it is the target's parent.
    parts.unshift(...(path.isAbsolute(target) ? target : path.join(current, target)).split('/').filter(Boolean));
    current = '/';
  }
  return { real: current, through };
}

/**
 * Judges `file` (relative to `cwd` when relative): its real path and why it is refused; null when it does not exist
 * (a path through a kernel tree is refused even then, with `real` its path as given).
 * A path that reaches its real path through `/proc`, `/sys` or `/dev` is refused whatever it reaches
 * (`/proc/self/root/etc`): it names the harness's view, not the agent's.
 */
export function judgeHostPath(file: string, rule: HostPathRule, cwd = process.cwd()): JudgedHostPath | null {
  const resolved = path.resolve(cwd, file);
  // Walked as given, not as `path.resolve` shortens it: `link/..` is the parent of the link's target, as for the kernel.
  const found = resolveFully(path.isAbsolute(file) ? file : `${cwd}/${file}`);
  const through = found.through
    ? `it goes through the host's ${found.through}, whose links name the harness's own view of the host, not the agent's`
    : null;
  // Refused even where it cannot be followed: an unreadable /proc link is no less a /proc path.
  if (found.real === null) return through ? { resolved, real: resolved, refused: through } : null;
  const real = found.real;
  const inKernelTree = KERNEL_TREES.some((tree) => isWithin(real, tree));
  return { resolved, real, refused: inKernelTree || !through ? hostPathRefusal(real, rule) : through };
}

/** `given` for a message: the path, and how it resolved when that differs. */
export function describeHostPath(given: string, judged: Pick<JudgedHostPath, 'resolved' | 'real'>): string {
  const from = judged.resolved === given ? '' : ` (from "${given}")`;
  const link = judged.real === judged.resolved ? '' : `, which resolves to ${judged.real},`;
  return `${judged.resolved}${from}${link}`;
}
