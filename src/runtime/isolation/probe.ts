/**
 * Whether this machine can give an attempt its own network and PID namespaces: Linux, util-linux `unshare`,
 * unprivileged user namespaces, and an init to run first inside them: Perl (`runtime/namespace-init.pl`, which
 * brings the loopback up itself) or, without a Perl that can run it, Node (`runtime/namespace-init.cjs`, which
 * needs iproute2 `ip` for the loopback). Probed once per process by running the very command an attempt would:
 * `unshare -rnpf --kill-child --mount-proc perl namespace-init.pl --trial`, then, if that fails,
 * `unshare … ip link set lo up`.
 */
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { INIT_ENV, NAMESPACE_INIT_ENV, NAMESPACE_INIT_PERL, hardeningSyscalls, namespaceInitSetting } from './init-scripts.js';

/** The outcome of {@link probeNamespaces}. */
export interface NamespaceSupport {
  available: boolean;
  /** Absolute path of `unshare`, when found. */
  unshare: string | null;
  /** Absolute path of `ip`, when found. */
  ip: string | null;
  /**
   * Absolute path of the `perl` that ran the Perl init's trial: attempts then start that init. Null or absent: the
   * Node init (no Perl, or its trial failed while `ip`'s passed).
   */
  perl?: string | null;
  /**
   * The syscall numbers the Perl init hardened itself with in the trial (`hardeningSyscalls()`): attempts then run
   * their engine in a user namespace of its own, below an init it cannot trace. Null or absent: not hardened (the
   * Node init; an architecture whose numbers are not known; a kernel that refused the nested user namespace).
   */
  harden?: string | null;
  /** Why namespaces are unavailable (null when available). */
  reason: string | null;
}

/** The first executable file `name` in the directories of `dirs`, as a shell finds a command; or null. */
export function findOnPath(name: string, dirs: readonly string[]): string | null {
  for (const dir of dirs) {
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** Where `unshare` and `ip` are looked up: the host PATH plus the sbin directories a user's PATH often lacks. */
function findTool(name: string, hostPath: string | undefined): string | null {
  return findOnPath(name, [...(hostPath ?? '').split(path.delimiter).filter(Boolean), '/usr/sbin', '/sbin', '/usr/bin', '/bin']);
}

let cached: NamespaceSupport | null = null;
let pending: Promise<NamespaceSupport> | null = null;

/** Options of the probes. */
export interface ProbeOptions {
  /** Probe again instead of using the process's cached result. */
  refresh?: boolean;
  /** PATH to look `unshare` and `ip` up in (default: this process's). */
  hostPath?: string;
}

/** Probes namespace support (cached for the process; `refresh` probes again). */
export function probeNamespaces(options: ProbeOptions = {}): NamespaceSupport {
  if (cached && !options.refresh) return cached;
  const tools = findNamespaceTools(options.hostPath ?? process.env.PATH);
  if (tools.verdict) return (cached = tools.verdict);
  let support: NamespaceSupport | null = null;
  for (const trial of trials(tools)) {
    const outcome = spawnSync(tools.unshare!, trial.args, { encoding: 'utf8', env: INIT_ENV, timeout: TRIAL_TIMEOUT_MS, stdio: ['ignore', 'ignore', 'pipe'] });
    support = judgeTrial(tools, trial, outcome.error ?? null, outcome.status, outcome.stderr);
    if (support.available) break;
  }
  cached = support!;
  return cached;
}

/**
 * {@link probeNamespaces} without blocking: an attempt starts it first and awaits it only when it opens its
 * isolation, so the trial (a few ms of process start-up) runs while the run directory is made. Same cache.
 */
export function probeNamespacesAsync(options: ProbeOptions = {}): Promise<NamespaceSupport> {
  if (pending && !options.refresh) return pending;
  if (cached && !options.refresh) return Promise.resolve(cached);
  const tools = findNamespaceTools(options.hostPath ?? process.env.PATH);
  if (tools.verdict) return Promise.resolve((cached = tools.verdict));
  const runTrial = (trial: Trial): Promise<NamespaceSupport> => new Promise<NamespaceSupport>((resolve) => {
    execFile(tools.unshare!, trial.args, { encoding: 'utf8', env: INIT_ENV, timeout: TRIAL_TIMEOUT_MS }, (error, _stdout, stderr) => {
      // execFile reports a non-zero exit as an error with a numeric `code`; a spawn failure has a string code.
      const status = typeof (error as { code?: unknown } | null)?.code === 'number' ? (error as unknown as { code: number }).code : error ? null : 0;
      resolve(judgeTrial(tools, trial, status === null ? error : null, status, stderr));
    });
  });
  const [first, ...others] = trials(tools);
  let probe = runTrial(first!);
  for (const next of others) probe = probe.then((support) => (support.available ? support : runTrial(next)));
  probe = probe.then((support) => {
    cached = support;
    pending = null;
    return support;
  });
  pending = probe;
  return probe;
}

const TRIAL_TIMEOUT_MS = 10_000;

/** One trial: `unshare` with these arguments; `perl` is set when it runs the Perl init, `harden` when hardened. */
interface Trial {
  args: string[];
  perl: string | null;
  harden: string | null;
}

/**
 * The trials, in order until one passes: the very commands an attempt's namespaces run first. The Perl init's
 * trial brings the loopback up as the init does; `ip`'s is the Node init's first step.
 */
function trials(tools: NamespaceTools): Trial[] {
  const flags = ['-rnpf', '--kill-child', '--mount-proc'];
  const harden = hardeningSyscalls();
  const perlTrial = (spec: string | null): Trial => ({ args: [...flags, tools.perl!, NAMESPACE_INIT_PERL, '--trial', spec ?? '-'], perl: tools.perl, harden: spec });
  return [
    ...(tools.perl ? [...(harden ? [perlTrial(harden)] : []), perlTrial(null)] : []),
    ...(tools.ip ? [{ args: [...flags, tools.ip, 'link', 'set', 'lo', 'up'], perl: null, harden: null }] : []),
  ];
}

/** What {@link findNamespaceTools} found. */
export interface NamespaceTools {
  unshare: string | null;
  ip: string | null;
  /** `perl`, when found (the Perl init's interpreter). */
  perl: string | null;
  /** Set when namespaces are unavailable before any trial (platform, a missing tool). */
  verdict: NamespaceSupport | null;
}

/** Tools found, by PATH and init setting: every attempt opens its isolation, and the lookups stat each PATH dir. */
const toolsFound = new Map<string, NamespaceTools>();

/**
 * The tools an attempt's namespaces need, found without running anything (the probe's first step): where the
 * trial would run them, and a verdict when it can already tell they are unavailable. Looked up once per PATH (and
 * `AGENT_HARNESS_NAMESPACE_INIT`) in a process, as the probe's verdict is.
 */
export function findNamespaceTools(hostPath: string | undefined = process.env.PATH): NamespaceTools {
  // AGENT_HARNESS_NAMESPACE_INIT=node: no Perl init (mode.ts refuses a bad value before an attempt gets here).
  const nodeInit = namespaceInitSetting() === 'node';
  const key = `${nodeInit}\0${hostPath ?? ''}`;
  let tools = toolsFound.get(key);
  if (!tools) toolsFound.set(key, (tools = lookUpNamespaceTools(hostPath, nodeInit)));
  return tools;
}

function lookUpNamespaceTools(hostPath: string | undefined, nodeInit: boolean): NamespaceTools {
  const unshare = findTool('unshare', hostPath);
  const ip = findTool('ip', hostPath);
  const perl = nodeInit ? null : findTool('perl', hostPath);
  const unavailable = (reason: string): NamespaceTools => ({ unshare, ip, perl, verdict: { available: false, unshare, ip, perl: null, reason } });
  if (process.platform !== 'linux') return unavailable(`namespaces are Linux-only (this is ${process.platform})`);
  if (!unshare) return unavailable('util-linux `unshare` was not found (apt install util-linux)');
  if (!ip && nodeInit) return unavailable(`iproute2 \`ip\` was not found, and the Node init (${NAMESPACE_INIT_ENV}=node) needs it (apt install iproute2)`);
  if (!ip && !perl) return unavailable('neither `perl` nor iproute2 `ip` was found, and the namespace init needs one of them (apt install perl-base, or iproute2)');
  return { unshare, ip, perl, verdict: null };
}

function judgeTrial(tools: NamespaceTools, trial: Trial, error: Error | null, status: number | null, stderr: string): NamespaceSupport {
  const { unshare, ip } = tools;
  if (error) return { available: false, unshare, ip, perl: null, reason: `unshare could not run: ${error.message}` };
  if (status !== 0) {
    const why = stderr.trim().split('\n').at(-1) ?? `exit ${status}`;
    const what = trial.perl ? `unshare -rnpf with the Perl init failed (${why})` : `unshare -rnpf failed (${why})`;
    return { available: false, unshare, ip, perl: null, reason: `${what}; user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces)` };
  }
  return { available: true, unshare, ip, perl: trial.perl, harden: trial.harden, reason: null };
}
