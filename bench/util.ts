/**
 * What the five figures share: throwaway directories, timing a piece of work (wall + CPU), running a process, the
 * environment of a harness process (CI=true, throwaway HOME and data dir), the bare engine command rebuilt from an
 * attempt's `.audit/meta.N.json`, paired rounds, medians and the step breakdown of `meta.timings.steps`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { AttemptRequest } from '../src/core/attempt-request.js';
import { runAttempt } from '../src/core/run-attempt.js';
import type { ModelServer } from '../src/model/index.js';
import { openIsolation } from '../src/runtime/isolation/attempt-isolation.js';
import { buildMountPlan, type MountPlan } from '../src/runtime/isolation/mount-plan.js';
import { resolveHarnessPaths } from '../src/runtime/paths.js';
import { superviseSplit } from '../src/runtime/process.js';

/** The repository root. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The `agent-harness` command: a plain Node script that runs dist/. */
export const bin = path.join(root, 'bin', 'agent-harness.js');

/** What one figure reports: its value against its target, how it was measured, and what else it saw. */
export interface Figure {
  /** The figure's name (`library`, `cli codex`, …). */
  name: string;
  /** What was measured, against what. */
  what: string;
  /** The value, with its unit (`1.07×`, `+62 ms`, `180 MB/s, 61 MB RSS`). */
  value: string;
  /** The target, e.g. `≤ 1.10×`. */
  target: string;
  /** Whether the value meets the target; null for a figure measured for what it explains, with no target. */
  pass: boolean | null;
  /** The medians and counts behind the value, and the step breakdown. */
  detail: string[];
}

/** A figure that is a ratio against a limit written as its target shows it (`'1.10'`: value `1.07×`, target `≤ 1.10×`). */
export function ratioFigure(name: string, what: string, ratio: number, limit: string, detail: string[]): Figure {
  return { name, what, value: `${ratio.toFixed(2)}×`, target: `≤ ${limit}×`, pass: ratio <= Number(limit), detail };
}

/** Throwaway directories of one figure, all under one root that {@link Scratch.dispose} removes. */
export class Scratch {
  readonly root: string;
  constructor(prefix: string) {
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), `ah-bench-${prefix}-`));
  }
  /** A new empty directory under the root. */
  dir(name: string): string {
    return fs.mkdtempSync(path.join(this.root, `${name}-`));
  }
  /** Removes the root and everything under it. */
  dispose(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * The environment of a harness process (and of this one, for the in-process figures): this process's, with a
 * throwaway data dir and HOME, and CI=true, as in every CI job.
 */
export function harnessEnv(scratch: Scratch): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CI: 'true',
    SKILL_RUNNER_DATA_DIR: scratch.dir('data'),
    HOME: scratch.dir('home'),
  };
  delete env.AGENT_HARNESS_RUN_ROOT;
  delete env.AGENT_HARNESS_ISOLATION;
  return env;
}

/** A project directory for the harness (a package.json, no skills), so the project root is not the caller's. */
export function projectDir(scratch: Scratch): string {
  const dir = scratch.dir('project');
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"bench-project","private":true}\n');
  return dir;
}

/** One measured run: wall milliseconds, and CPU milliseconds of this process plus the children it waited for. */
export interface Timing {
  wall: number;
  cpu: number;
}

/** CPU milliseconds of this process and of every child it has waited for (`/proc/self/stat`, 10 ms ticks). */
function cpuMs(): number {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const usage = process.cpuUsage();
  // After "pid (comm) ": cutime and cstime are fields 16 and 17, indexes 13 and 14.
  return (Number(fields[13]) + Number(fields[14])) * 10 + (usage.user + usage.system) / 1000;
}

/** Times `work`. Only right when nothing else of this process runs meanwhile. */
export async function measure<T>(work: () => Promise<T>): Promise<{ timing: Timing; value: T }> {
  const [cpu0, wall0] = [cpuMs(), performance.now()];
  const value = await work();
  return { timing: { wall: performance.now() - wall0, cpu: cpuMs() - cpu0 }, value };
}

/** Runs `file args` to its end (stdin closed), collecting output; throws on a non-zero exit or after `timeoutMs`. */
export function runProcess(
  file: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs?: number },
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const [out, err]: Buffer[][] = [[], []];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 180_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const [stdout, stderr] = [Buffer.concat(out).toString('utf8'), Buffer.concat(err).toString('utf8')];
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`bench: ${file} ${args.join(' ')} exited ${code ?? signal}:\n${stderr.slice(-2000)}`));
    });
  });
}

/** The parts of `.audit/meta.N.json` the bench reads. */
export interface AttemptMeta {
  command: { executable: string; argv: string[]; cwd: string; launcher?: string };
  isolation?: { exposed?: Array<{ path: string; access: 'ro' | 'rw'; why: string }> };
  env: Record<string, string>;
  model: { base_url: string | null };
  timings?: { duration_ms?: number; steps?: Record<string, number> };
}

/** Attempt `attempt` of the run in `runDir` (the latest when absent). */
export function readMeta(runDir: string, attempt?: number): AttemptMeta {
  const audit = path.join(runDir, '.audit');
  const latest = Math.max(...fs.readdirSync(audit).map((name) => Number(/^meta\.(\d+)\.json$/.exec(name)?.[1] ?? 0)));
  return JSON.parse(fs.readFileSync(path.join(audit, `meta.${attempt ?? latest}.json`), 'utf8')) as AttemptMeta;
}

/** The run directory the CLI printed (`Run directory: …`). */
export function runDirOf(output: { stdout: string; stderr: string }): string {
  const match = /^Run directory: (.+)$/m.exec(`${output.stdout}\n${output.stderr}`);
  if (!match)
    throw new Error(
      `bench: no "Run directory:" in the harness output:\n${output.stdout.slice(-1000)}${output.stderr.slice(-1000)}`,
    );
  return match[1]!.trim();
}

/** `value` with the first attempt's engine home swapped for its bare copy. */
function toBareHome(first: FirstAttempt, value: string): string {
  return value.split(first.agentHome).join(first.bareHome);
}

/** A bare engine command: executable, argv and environment. */
export interface BareCommand {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /**
   * Puts the engine's home back as it was when the first attempt's engine started, untimed, before each bare turn:
   * every attempt gets a new home of its own (a run's HOME), so a bare turn in a home a previous turn already set up
   * (codex makes its SQLite state there on a first start, about 140 ms) would measure less than the engine costs.
   */
  freshHome?: () => void;
}

/** The first attempt of a figure, kept: its meta, and a copy of the engine's home as it was when the engine started. */
export interface FirstAttempt {
  meta: AttemptMeta;
  /** The managed agent home the harness wrote the engine's config into. */
  agentHome: string;
  /** Its copy, taken just before the engine started (the harness takes per-attempt entries out again after). */
  bareHome: string;
  /** A second copy of the same, never run in: what {@link BareCommand.freshHome} restores `bareHome` from. */
  bareHomeSeed: string;
}

/**
 * Runs one attempt of `engine` in this process (the same config a CLI attempt with `hostEnv` in `project` writes)
 * and keeps its run directory, for the bare turns to run in.
 */
export async function firstAttempt(
  scratch: Scratch,
  engine: string,
  hostEnv: NodeJS.ProcessEnv,
  project: string,
  modelServer?: ModelServer,
): Promise<FirstAttempt> {
  const paths = resolveHarnessPaths({ cwd: project, env: hostEnv });
  const bareHome = scratch.dir('bare-home');
  const bareHomeSeed = scratch.dir('bare-home-seed');
  const result = await runAttempt({
    paths,
    engine,
    launch: 'start',
    prompt: 'hi',
    label: 'bench',
    modelMode: 'scripted',
    hostEnv,
    ...(modelServer ? { modelServer } : {}),
    onReady: () => {
      fs.cpSync(paths.agentHome, bareHome, { recursive: true });
      fs.cpSync(paths.agentHome, bareHomeSeed, { recursive: true });
    },
  });
  if (result.error) throw result.error;
  if (result.exitCode !== 0)
    throw new Error(`bench: the first ${engine} attempt exited ${result.exitCode}; see ${result.runDir}`);
  return { meta: readMeta(result.runDir, result.attempt), agentHome: paths.agentHome, bareHome, bareHomeSeed };
}

/**
 * The engine command the first attempt ran, exactly (the file the harness started: for codex the native binary, as
 * native-launch.ts starts it; its argv; the environment it gave the engine), with the engine's home swapped for the
 * copy taken as the engine started, pointed at `modelUrl`, the redacted key replaced. No harness, no namespaces.
 */
export function bareCommand(first: FirstAttempt, modelUrl: string): BareCommand {
  const { meta } = first;
  const old = meta.model.base_url;
  if (!old) throw new Error('bench: the attempt has no scripted model URL');
  const swap = (value: string): string => toBareHome(first, value.split(old).join(modelUrl));
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(meta.env)) env[key] = value === '[redacted]' ? 'bench-key' : swap(value);
  // The engine's TMPDIR is per attempt and removed with it: give the bare turn one that exists.
  if (env.TMPDIR) fs.mkdirSync(env.TMPDIR, { recursive: true });
  const freshHome = (): void => {
    fs.rmSync(first.bareHome, { recursive: true, force: true });
    fs.cpSync(first.bareHomeSeed, first.bareHome, { recursive: true });
    if (env.TMPDIR) fs.mkdirSync(env.TMPDIR, { recursive: true });
  };
  return { file: meta.command.executable, args: meta.command.argv.map(swap), env, freshHome };
}

/** `codex exec --json …`: the bare command for reading (its file's name, its argv without `-c` overrides). */
export function bareLine(bare: BareCommand): string {
  const args = bare.args.filter((arg, i, all) => arg !== '-c' && all[i - 1] !== '-c');
  return `bare: ${path.basename(bare.file)} ${args.join(' ')} (${path.relative(root, bare.file)}, with the attempt's argv and env)`;
}

/**
 * Runs a bare command once, timed, in `cwd`: the first attempt's run directory, kept for this (the engine config
 * the harness wrote trusts it, as it trusts each new run directory).
 */
export async function runBare(bare: BareCommand, cwd: string): Promise<Timing> {
  bare.freshHome?.();
  return (await measure(() => runProcess(bare.file, bare.args, { env: bare.env, cwd }))).timing;
}

/**
 * The mount plan the first attempt's agent had (`meta.isolation.exposed`), with the engine's home swapped for the
 * bare copy, as a bare turn runs. After {@link bareCommand}, which makes the engine's TMPDIR again (a path the plan
 * leaves out when it does not exist).
 */
export function bareMountPlan(first: FirstAttempt): MountPlan {
  const exposed = (first.meta.isolation?.exposed ?? []).map((entry) => ({
    ...entry,
    path: toBareHome(first, entry.path),
  }));
  const paths = (why: string, access?: 'ro' | 'rw') =>
    exposed.filter((e) => e.why === why && (!access || e.access === access)).map((e) => e.path);
  const workspace = paths('workspace')[0];
  if (!workspace) throw new Error('bench: the first attempt recorded no contained workspace (meta.isolation.exposed)');
  return buildMountPlan({
    workspace,
    readOnlyInWorkspace: paths('audit'),
    writable: paths('managed'),
    readOnly: [...paths('engine'), ...paths('mcp'), ...paths('expose', 'ro')],
    expose: paths('expose', 'rw').map((file) => ({ path: file, readOnly: false })),
  });
}

/**
 * Runs a bare command once, timed, in the namespaces an attempt gets (the isolation module alone: the init, its
 * network namespace with the model's port forwarded, the agent's filesystem as the first attempt had it), without the
 * rest of the harness (no run store, config, snapshots or translation): what the namespaces cost a turn.
 */
export async function runBareNamespaced(
  bare: BareCommand,
  cwd: string,
  plan: MountPlan,
  modelUrl: string,
): Promise<Timing> {
  bare.freshHome?.();
  return (
    await measure(async () => {
      const isolation = await openIsolation({ mode: 'require', modelUrl, prestart: 'ignore', filesystem: true });
      try {
        isolation.contain(plan);
        const child = isolation.launch({
          file: bare.file,
          args: bare.args,
          env: bare.env as Record<string, string>,
          cwd,
        });
        if (!child) throw new Error('bench: the namespaces started no engine');
        const result = await isolation.settle(
          await superviseSplit(child, { onChunk: () => undefined, killGraceMs: 500 }),
        );
        if (result.exitCode !== 0) throw new Error(`bench: the bare turn in namespaces exited ${result.exitCode}`);
        if (!(await isolation.contained())) throw new Error('bench: the bare turn ran on the host filesystem');
      } finally {
        await isolation.close();
      }
    })
  ).timing;
}

/** One side of a paired comparison: runs once, returns its timing and, for a harness attempt, its meta. */
export interface Side {
  name: string;
  run: () => Promise<{ timing: Timing; meta?: AttemptMeta }>;
}

/** Run directories of timed attempts, left for {@link removeTimedRuns}. */
const timedRuns: string[] = [];

/**
 * Removes the run directories of the attempts timed so far. Called once a measurement is over: removed as each
 * attempt ended (a synchronous rm of a few hundred files, ~10–20 ms on a busy disk), they held up the event loop of
 * the attempts still running beside it, and the bench's own housekeeping counted in their time.
 */
export function removeTimedRuns(): void {
  for (const dir of timedRuns.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * One attempt of `request` through runAttempt in this process, timed from its call to its result; its run directory
 * is removed by the next {@link removeTimedRuns}. An attempt that failed, or whose engine exited non-zero, throws.
 */
export async function timedAttempt(request: AttemptRequest): Promise<{ wall: number; meta: AttemptMeta }> {
  const started = performance.now();
  const result = await runAttempt(request);
  const wall = performance.now() - started;
  timedRuns.push(result.runDir);
  if (result.error) throw result.error;
  if (result.exitCode !== 0)
    throw new Error(`bench: ${request.engine} attempt exited ${result.exitCode}; see ${result.runDir}`);
  return { wall, meta: readMeta(result.runDir, result.attempt) };
}

/** A side of in-process attempts: each round's wall is the attempt's own, its CPU this process's over the round. */
export function attemptSide(name: string, attempt: () => Promise<{ wall: number; meta: AttemptMeta }>): Side {
  return {
    name,
    run: async () => {
      const { timing, value } = await measure(attempt);
      return { timing: { ...timing, wall: value.wall }, meta: value.meta };
    },
  };
}

/** What {@link pairedRounds} collected of one side. */
export interface Series {
  timings: Timing[];
  metas: AttemptMeta[];
}

/**
 * One warm-up of each side, then `rounds` rounds of each side once, the order rotating from round to round (so no
 * side always follows the same one). Returns each side's series by name.
 */
export async function pairedRounds(sides: readonly Side[], rounds: number): Promise<Map<string, Series>> {
  const out = new Map(sides.map((side) => [side.name, { timings: [] as Timing[], metas: [] as AttemptMeta[] }]));
  // The run directories of the attempts a side timed go after its measurement, not amid another's.
  for (const side of sides) {
    await side.run();
    removeTimedRuns();
  }
  for (let round = 0; round < rounds; round += 1) {
    for (const side of sides.map((_, i) => sides[(i + round) % sides.length]!)) {
      const { timing, meta } = await side.run();
      removeTimedRuns();
      out.get(side.name)!.timings.push(timing);
      if (meta) out.get(side.name)!.metas.push(meta);
    }
    process.stdout.write('.');
  }
  process.stdout.write('\n');
  return out;
}

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('bench: median of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[Math.floor((sorted.length - 1) / 2)]! + sorted[Math.ceil((sorted.length - 1) / 2)]!) / 2;
}

/** Median of the per-round ratios a/b (wall or CPU). */
export function pairedRatio(a: Series, b: Series, key: keyof Timing = 'wall'): number {
  return median(a.timings.map((t, i) => t[key] / b.timings[i]![key]));
}

/** Median of the per-round differences a − b, in ms (wall or CPU). */
export function pairedDifference(a: Series, b: Series, key: keyof Timing = 'wall'): number {
  return median(a.timings.map((t, i) => t[key] - b.timings[i]![key]));
}

/** `0.412 s`. */
export function secs(ms: number): string {
  return `${(ms / 1000).toFixed(3)} s`;
}

/** `wall 0.412 s vs 0.380 s, CPU 0.520 s vs 0.400 s (1.30×), 12 pairs`: the medians of two series. */
export function sideBySide(a: Series, b: Series): string {
  const m = (s: Series, key: keyof Timing): number => median(s.timings.map((t) => t[key]));
  return `wall ${secs(m(a, 'wall'))} vs ${secs(m(b, 'wall'))}, CPU ${secs(m(a, 'cpu'))} vs ${secs(m(b, 'cpu'))} (${pairedRatio(a, b, 'cpu').toFixed(2)}×), ${a.timings.length} pairs`;
}

/** `meta.timings.steps, median (ms): prepare 3, …, engine 180, …`, or a note that the metas have none. */
export function stepsLine(metas: readonly AttemptMeta[]): string {
  const steps = metas.map((m) => m.timings?.steps).filter((s): s is Record<string, number> => !!s);
  if (steps.length === 0) return 'meta.timings.steps: none recorded';
  const names = [...new Set(steps.flatMap((s) => Object.keys(s)))];
  const parts = names.map((name) => `${name} ${median(steps.map((s) => s[name] ?? 0)).toFixed(0)}`);
  return `meta.timings.steps, median (ms): ${parts.join(', ')}`;
}

/**
 * `outside the attempt (…): median N ms`: wall time of a process minus its attempt's `timings.duration_ms` (Node's
 * start, loading dist/, what precedes the attempt, the exit), or '' when the metas lack it.
 */
export function outsideLine(series: Series): string {
  const outside = series.timings
    .map((t, i) => t.wall - (series.metas[i]?.timings?.duration_ms ?? NaN))
    .filter(Number.isFinite);
  return outside.length === 0
    ? ''
    : `the process outside its attempt's duration_ms (Node start, loading dist/, what precedes the attempt, exit): median ${median(outside).toFixed(0)} ms`;
}

/** Writes `count` small files into `dir`, 100 per subdirectory. */
export function fillTree(dir: string, count: number): void {
  for (let i = 0; i < count; i += 1) {
    const sub = path.join(dir, `d${String(Math.floor(i / 100)).padStart(4, '0')}`);
    if (i % 100 === 0) fs.mkdirSync(sub, { recursive: true });
    fs.writeFileSync(path.join(sub, `f${i}.txt`), `file ${i}\n${'x'.repeat(64)}\n`);
  }
}

/** Throws when dist/ is not built or older than src/ (the bin runs dist/, never the sources). */
export function requireCurrentDist(): void {
  if (!fs.existsSync(path.join(root, 'dist', 'cli', 'main.js')))
    throw new Error('bench: dist/ is not built; run `npm run build` first (the command runs dist/)');
  const newest = (dir: string, ext: string): number =>
    Math.max(
      ...(fs.readdirSync(path.join(root, dir), { recursive: true }) as string[])
        .filter((name) => name.endsWith(ext))
        .map((name) => fs.statSync(path.join(root, dir, name)).mtimeMs),
    );
  if (newest('src', '.ts') > newest('dist', '.js'))
    throw new Error('bench: dist/ is older than src/; run `npm run build` first');
}
