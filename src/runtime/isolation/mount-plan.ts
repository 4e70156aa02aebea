/**
 * The filesystem an agent sees inside its mount namespace, as a plan the namespace init carries out
 * (`runtime/namespace-mounts.cjs`): the plan's skeleton (directories, empty files, symlinks; made on the host
 * beforehand by `writeNewRoot`, new-root.ts) is bound read-only on an empty host directory, fresh tmpfs mounts become its
 * /tmp and /dev/shm, the fstab lines bind what the agent may see at the same paths as on the host, then the init
 * pivots into it and detaches the host's root. Nothing is there that the plan does not name: an allow-list, not a
 * deny-list.
 *
 * Built here from the attempt's request alone (a pure function of its inputs and the host's file tree), so
 * contract tests check it without a namespace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../../errors/index.js';
import type { ExposedPath } from '../../protocol/index.js';
export { resolveExpose } from './resolve-expose.js';
import { describeHostPath, type HostPathRule, judgeHostPath } from './host-path-rule.js';
import { isWithin } from '../path-within.js';
import { readMounts, readOnlyBindOptions } from './host-mount-flags.js';

/** A host path the caller opens to the agent: `expose` in the plugin and providers, `--expose PATH[:ro]` on the CLI. */
export type ExposeEntry = string | { path: string; readOnly?: boolean };

/** A resolved {@link ExposeEntry}. */
export interface ExposeRequest {
  path: string;
  readOnly: boolean;
}

/** What the agent's filesystem is built from. Every path absolute; paths that do not exist are left out. */
export interface MountPlanInput {
  /** The engine's working directory: read-write. */
  workspace: string;
  /** Inside the workspace, read-only to the agent (`.audit/`). */
  readOnlyInWorkspace: readonly string[];
  /** The managed HOME, TMPDIR, npm prefix and uv directories: read-write. */
  writable: readonly string[];
  /** The engine's installation and Node's directory: read-only. */
  readOnly: readonly string[];
  /** The files of declared stdio MCP servers (a script and its package, as `mcp-binds.ts` plans them): read-only. */
  mcp?: readonly string[];
  /** What the caller opened on purpose. */
  expose: readonly ExposeRequest[];
  /** The host's system entries bound read-only (default {@link SYSTEM_ENTRIES}). */
  system?: readonly string[];
  /**
   * The host path rule the engine, MCP and exposed paths must pass (`host-path-rule.ts`): one refused is
   * CONFIG_INVALID. Absent: not checked (the plan of a stand-in engine in a test).
   */
  rule?: HostPathRule;
}

/** One thing the init makes in the new root before it mounts: a directory, an empty file, or a symlink. */
export interface SkeletonEntry {
  type: 'dir' | 'file' | 'link';
  /** The path inside the new root (as the agent sees it). */
  path: string;
  /** A symlink's target, verbatim; a directory's mode (octal string) when not 0755. */
  target?: string;
}

/** One mount, with its target inside the new root. */
export interface PlannedMount {
  /** A host path, a filesystem's name, or (with `inRoot`) a path inside the new root. */
  source: string;
  /** `source` is a path inside the new root (a directory of a scratch tmpfs bound over itself). */
  inRoot?: boolean;
  /** The path inside the new root (as the agent sees it). */
  target: string;
  fstype: string;
  options: string;
}

/** The plan the init carries out, on a root the isolation chooses (an empty host directory). */
export interface MountPlan {
  skeleton: SkeletonEntry[];
  mounts: PlannedMount[];
  /** The host paths the agent sees, beyond the system entries, for the audit (`meta.isolation.exposed`). */
  exposed: ExposedPath[];
}

/**
 * The host's system entries an agent sees read-only (a symlink is copied as a symlink: on merged-/usr systems
 * `/bin` is `usr/bin`). `/etc` holds the resolver, certificates, passwd and the system git config the engines read.
 */
export const SYSTEM_ENTRIES = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'] as const;

/** The device nodes bound from the host's /dev (nothing else of it: no disks, no other terminals). */
const DEVICES = ['null', 'zero', 'full', 'random', 'urandom', 'tty'] as const;

/** The agent's private scratch directories: fresh tmpfs mounts (in memory, in the namespace only). */
export const WRITABLE_SCRATCH = ['/tmp', '/dev/shm'] as const;

/** A scratch tmpfs's options: sticky and world-writable, as /tmp is. */
const SCRATCH_OPTIONS = 'mode=1777,nosuid,nodev';

/** The link targets every /dev has. */
const DEV_LINKS: ReadonlyArray<[string, string]> = [
  ['fd', '/proc/self/fd'],
  ['stdin', '/proc/self/fd/0'],
  ['stdout', '/proc/self/fd/1'],
  ['stderr', '/proc/self/fd/2'],
  ['ptmx', 'pts/ptmx'],
];

function lstat(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch {
    return null;
  }
}

/**
 * Walks `file` component by component: each symlink met on the way is returned (so it is made in the new root, the
 * path keeps working as given), and the real path it leads to. Null when it does not exist.
 */
function walk(file: string, links: Array<{ path: string; target: string }>): string | null {
  let current = '/';
  // `..` is taken where it comes, as the kernel does (after a link, the parent of its target), not shortened away
  // first: the path bound is then the real path the host path rule judged (`host-path-rule.ts`).
  const parts = (path.isAbsolute(file) ? file : `${process.cwd()}/${file}`).split('/').filter(Boolean);
  for (let hops = 0; parts.length > 0; ) {
    const part = parts.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    const stat = lstat(next);
    if (!stat) return null;
    if (!stat.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (++hops > 40) return null;
    const target = fs.readlinkSync(next);
    links.push({ path: next, target });
    // The rest of the path continues from where the link points.
    parts.unshift(...(path.isAbsolute(target) ? target : `${current}/${target}`).split('/').filter(Boolean));
    current = '/';
  }
  return current;
}

/** What a refused path of each kind was, for the message. */
const CHECKED_KINDS = {
  engine: "the engine's installation (or Node's directory), bound read-only; install it elsewhere",
  mcp: "a stdio MCP server's file, bound read-only",
  expose: 'an exposed path',
} as const;

/** `file` when `rule` lets it into the plan (or there is no rule); CONFIG_INVALID naming it and why otherwise. */
function checked(file: string, kind: keyof typeof CHECKED_KINDS, rule: HostPathRule | undefined): string {
  const judged = rule ? judgeHostPath(file, rule) : null;
  if (!judged?.refused) return file;
  throw new AgentHarnessError(
    'CONFIG_INVALID',
    `The host path ${describeHostPath(file, judged)} cannot enter the agent's filesystem as ${CHECKED_KINDS[kind]}: ${judged.refused}.`,
    { details: { kind, value: file, real: judged.real } },
  );
}

/** A bound host path: the access asked for (read-write wins over read-only for the same path). */
interface BindRequest {
  readOnly: boolean;
  why: ExposedPath['why'];
  file: boolean;
}

/** A plan being built: what its steps read and change, explicit. */
interface PlanState {
  /** The entries of the new root, by path. */
  readonly skeleton: Map<string, SkeletonEntry>;
  /** The host paths bound, by real path. */
  readonly binds: Map<string, BindRequest>;
  readonly exposed: ExposedPath[];
}

/** Builds the mount plan of one attempt. */
export function buildMountPlan(input: MountPlanInput): MountPlan {
  const state: PlanState = { skeleton: new Map(), binds: new Map(), exposed: [] };
  requestBinds(state, input);
  // Read-only inside the workspace: bound again over itself, read-only (after the workspace: longer paths later).
  const readOnlyInside = input.readOnlyInWorkspace.map((dir) => walk(dir, [])).filter((d): d is string => d !== null);
  const mounts = planSkeletonMounts(state);
  const hostMounts = readMounts();
  /** A bind's options: read-write keeps its source's flags as they are (no remount); read-only repeats them. */
  const bindOptions = (source: string, readOnly: boolean): string =>
    readOnly ? readOnlyBindOptions(source, hostMounts) : 'bind';
  const binding = planBinds(state, bindOptions);
  mounts.push(...scratchGuards(state), ...binding);
  for (const dir of readOnlyInside) {
    mounts.push({ source: dir, target: dir, fstype: 'none', options: bindOptions(dir, true) });
    state.exposed.push({ path: dir, access: 'ro', why: 'audit' });
  }
  return {
    skeleton: [...state.skeleton.values()].sort((a, b) => compareByComponent(a.path, b.path)),
    mounts,
    exposed: state.exposed,
  };
}

/** Adds `dir` and its parents to the skeleton (`mode` on `dir` itself when given). */
function addDir({ skeleton }: PlanState, dir: string, mode?: string): void {
  for (let at = dir; at !== '/'; at = path.dirname(at)) {
    if (!skeleton.has(at)) skeleton.set(at, { type: 'dir', path: at });
  }
  if (mode) skeleton.set(dir, { type: 'dir', path: dir, target: mode });
}

/** Adds a symlink (and its directory) to the skeleton. */
function addLink(state: PlanState, link: string, target: string): void {
  addDir(state, path.dirname(link));
  state.skeleton.set(link, { type: 'link', path: link, target });
}

/**
 * Shows the host's `file` at its own path (its symlinks as symlinks, in the skeleton); false when it does not exist.
 * Changes `binds` and the skeleton.
 */
function bindHostPath(state: PlanState, file: string, readOnly: boolean, why: ExposedPath['why']): boolean {
  const links: Array<{ path: string; target: string }> = [];
  const real = walk(file, links);
  if (real === null) return false;
  for (const link of links) addLink(state, link.path, link.target);
  const previous = state.binds.get(real);
  if (previous && (previous.readOnly === readOnly || !previous.readOnly)) return true;
  state.binds.set(real, { readOnly, why, file: !lstat(real)!.isDirectory() });
  return true;
}

/** The binds the input asks for: system entries, workspace, managed directories, engine, MCP servers, exposes. */
function requestBinds(state: PlanState, input: MountPlanInput): void {
  for (const entry of input.system ?? SYSTEM_ENTRIES) {
    const stat = lstat(entry);
    if (stat?.isSymbolicLink()) addLink(state, entry, fs.readlinkSync(entry));
    else if (stat?.isDirectory()) bindHostPath(state, entry, true, 'system');
  }
  bindHostPath(state, input.workspace, false, 'workspace');
  for (const dir of input.writable) bindHostPath(state, dir, false, 'managed');
  for (const file of input.readOnly) bindHostPath(state, checked(file, 'engine', input.rule), true, 'engine');
  for (const file of input.mcp ?? []) bindHostPath(state, checked(file, 'mcp', input.rule), true, 'mcp');
  for (const entry of input.expose)
    bindHostPath(state, checked(entry.path, 'expose', input.rule), entry.readOnly, 'expose');
}

/**
 * The skeleton's own mounts. Minimal /dev: a few device nodes, a fresh devpts, a private /dev/shm; a fresh /proc of
 * the PID namespace; a private /tmp. /tmp and /dev/shm are fresh tmpfs mounts (writable in a read-only root, in
 * memory, in the namespace only). Changes the skeleton.
 */
function planSkeletonMounts(state: PlanState): PlannedMount[] {
  const { skeleton } = state;
  addDir(state, '/dev');
  for (const device of DEVICES) {
    if (lstat(`/dev/${device}`)?.isCharacterDevice())
      skeleton.set(`/dev/${device}`, { type: 'file', path: `/dev/${device}` });
  }
  for (const [link, target] of DEV_LINKS) addLink(state, `/dev/${link}`, target);
  addDir(state, '/dev/pts');
  addDir(state, '/dev/shm', '1777');
  addDir(state, '/proc');
  addDir(state, '/tmp', '1777');
  const mounts: PlannedMount[] = [
    { source: 'proc', target: '/proc', fstype: 'proc', options: 'nosuid,nodev,noexec' },
    {
      source: 'devpts',
      target: '/dev/pts',
      fstype: 'devpts',
      options: 'newinstance,ptmxmode=0666,mode=0620,nosuid,noexec',
    },
    { source: 'tmpfs', target: '/dev/shm', fstype: 'tmpfs', options: SCRATCH_OPTIONS },
    { source: 'tmpfs', target: '/tmp', fstype: 'tmpfs', options: SCRATCH_OPTIONS },
  ];
  for (const device of DEVICES) {
    if (skeleton.has(`/dev/${device}`))
      mounts.push({ source: `/dev/${device}`, target: `/dev/${device}`, fstype: 'none', options: 'bind' });
  }
  return mounts;
}

/**
 * The binds' mounts, parents first, each with its mount point in the skeleton; what is not a system entry is
 * `exposed`. Changes the skeleton and `exposed`.
 */
function planBinds(state: PlanState, bindOptions: (source: string, readOnly: boolean) => string): PlannedMount[] {
  // Parents before children, so a child lands on its parent's mount: sorted by path component.
  const ordered = [...state.binds.entries()].sort(([a], [b]) => compareByComponent(a, b));
  const kept: Array<[string, BindRequest]> = [];
  for (const [at, bound] of ordered) {
    // A path under a bind of the same access is seen through it already.
    const parent = [...kept].reverse().find(([p]) => isWithin(at, p));
    if (parent && parent[1].readOnly === bound.readOnly) continue;
    kept.push([at, bound]);
  }
  const binding: PlannedMount[] = [];
  for (const [at, bound] of kept) {
    if (bound.file) {
      addDir(state, path.dirname(at));
      state.skeleton.set(at, { type: 'file', path: at });
    } else addDir(state, at);
    binding.push({ source: at, target: at, fstype: 'none', options: bindOptions(at, bound.readOnly) });
    if (bound.why !== 'system') state.exposed.push({ path: at, access: bound.readOnly ? 'ro' : 'rw', why: bound.why });
  }
  return binding;
}

/**
 * The way down to a bind under the private /tmp or /dev/shm (a run root in the host's /tmp) is made of directories
 * of those writable scratch directories: each top one is bound over itself read-only first, so the agent cannot
 * create files along it (in the host's place of its project, say) — they would vanish, but a write outside the
 * workspace must fail. Reads the skeleton (complete by then).
 */
function scratchGuards({ skeleton }: PlanState): PlannedMount[] {
  const mounts: PlannedMount[] = [];
  for (const scratch of WRITABLE_SCRATCH) {
    const tops = new Set(
      [...skeleton.keys()]
        .filter((at) => isWithin(at, scratch) && at !== scratch)
        .map((at) => path.join(scratch, path.relative(scratch, at).split(path.sep)[0]!)),
    );
    for (const top of [...tops].sort())
      if (skeleton.get(top)?.type === 'dir')
        mounts.push({ source: top, inRoot: true, target: top, fstype: 'none', options: 'bind,ro' });
  }
  return mounts;
}

/** Orders paths so that a directory comes right before what is under it. */
function compareByComponent(a: string, b: string): number {
  const left = a.split('/');
  const right = b.split('/');
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    if (left[i] !== right[i]) return left[i]! < right[i]! ? -1 : 1;
  }
  return left.length - right.length;
}

/**
 * The outermost `node_modules` directory holding `file` once its symlinks are resolved (npm hoists an engine's
 * dependencies there), else the directory of the resolved file: what an engine needs of its installation.
 */
export function installationRoot(file: string): string {
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch {
    return path.dirname(file);
  }
  const parts = real.split('/');
  const first = parts.indexOf('node_modules');
  return first > 0 ? parts.slice(0, first + 1).join('/') : path.dirname(real);
}
