/**
 * Shared pieces of the attempt benchmarks: timing a child process (wall, CPU of the process tree, first stdout
 * line), throwaway directories that are always removed, the bare engine command rebuilt from an attempt's
 * `.audit/meta.N.json`, and formatting.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median } from './figures.js';
import { resolveCodexNativeLaunch } from '../src/engines/codex/native-launch.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const bin = path.join(root, 'bin', 'agent-harness.js');

/** True when the bin would run dist/ (its build stamp matches the sources), false when it falls back to tsx. */
export async function distIsCurrent(): Promise<boolean> {
  const { sourceFingerprint } = (await import(bin)) as { sourceFingerprint: () => string };
  try {
    return fs.readFileSync(path.join(root, 'dist', '.build-stamp'), 'utf8') === sourceFingerprint();
  } catch {
    return false;
  }
}

const CLK_TCK = 100;

/** CPU milliseconds (user + sys) of every child this process has waited for (`/proc/self/stat` cutime + cstime). */
export function childCpuMs(): number {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After "pid (comm) ": field 3 is index 0, so cutime (16) and cstime (17) are indexes 13 and 14.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLK_TCK;
}

/** CPU milliseconds of this process itself (user + sys, all threads). */
export function selfCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** One measured run. */
export interface Timing {
  /** Wall milliseconds. */
  wall: number;
  /**
   * CPU milliseconds: the waited-for children (the harness or the engine with its children, 10 ms ticks) plus
   * this process (the in-process harness, or the scripted model server the bare run talks to).
   */
  cpu: number;
  /** Milliseconds from spawn to the first stdout line (null when none, or not a process). */
  firstLine: number | null;
}

/** Measures `work` (wall + CPU as in {@link Timing}). Only correct when nothing else runs concurrently. */
export async function measure<T>(work: () => Promise<T>): Promise<{ timing: Timing; value: T }> {
  const cpu0 = childCpuMs() + selfCpuMs();
  const started = performance.now();
  const value = await work();
  const wall = performance.now() - started;
  const cpu = childCpuMs() + selfCpuMs() - cpu0;
  return { timing: { wall, cpu, firstLine: (value as { firstLine?: number | null })?.firstLine ?? null }, value };
}

/** What {@link runProcess} returns. */
export interface ProcessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  firstLine: number | null;
}

/** Runs `file args` to its end (stdin closed), collecting output; throws on a non-zero exit. */
export function runProcess(file: string, args: readonly string[], options: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs?: number }): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstLine: number | null = null;
    const child = spawn(file, args, { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      if (firstLine === null && chunk.includes(10)) firstLine = performance.now() - started;
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const run = { code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), firstLine };
      if (code !== 0) reject(new Error(`${file} ${args.join(' ')} exited ${code ?? signal}: ${run.stderr.slice(-2000)}`));
      else resolve(run);
    });
  });
}

/** Throwaway directories of one benchmark, all under one root that {@link Scratch.dispose} removes. */
export class Scratch {
  readonly root: string;
  constructor(prefix: string) {
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), `ah-bench-${prefix}-`));
  }
  /** A new empty directory under the root. */
  dir(name: string): string {
    return fs.mkdtempSync(path.join(this.root, `${name}-`));
  }
  dispose(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/** The parts of `.audit/meta.N.json` the benchmarks read. */
export interface AttemptMeta {
  command: { executable: string; argv: string[]; cwd: string; launcher?: string };
  env: Record<string, string>;
  model: { base_url: string | null };
  timings?: { started_at?: string; ended_at?: string; duration_ms?: number; steps?: Record<string, number> };
  isolation?: { network?: string; processes?: string };
  /** Added here (not in the meta): phases read off the RASP timestamps, for builds without `timings.steps`. */
  phases?: Record<string, number>;
}

/**
 * Reads attempt `attempt`'s meta from `runDir`, with {@link AttemptMeta.phases} from its RASP log: before the
 * spawn (started_at → lifecycle.started), spawn → first engine line, first → last engine line, and after the
 * last line (→ ended_at: the engine's exit, the after-snapshot, sealing).
 */
export function readAttempt(runDir: string, attempt = 1): AttemptMeta {
  const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', `meta.${attempt}.json`), 'utf8')) as AttemptMeta;
  try {
    const events = fs.readFileSync(path.join(runDir, '.audit', `rasp.${attempt}.jsonl`), 'utf8').split('\n').filter(Boolean)
      .map((line) => JSON.parse(line) as { ts?: string; data?: { type?: string } });
    const at = (ts: string | undefined): number => (ts ? Date.parse(ts) : NaN);
    const started = at(events.find((e) => e.data?.type === 'lifecycle.started')?.ts);
    const lines = events.filter((e) => e.data?.type === 'raw.line').map((e) => at(e.ts));
    const begin = at(meta.timings?.started_at);
    const end = at(meta.timings?.ended_at);
    if ([started, begin, end].every(Number.isFinite) && lines.length > 0) {
      meta.phases = { before_spawn: started - begin, to_first_line: lines[0]! - started, first_to_last_line: lines.at(-1)! - lines[0]!, after_last_line: end - lines.at(-1)! };
    }
  } catch {
    // no RASP log: no phases
  }
  return meta;
}

/** The run directory the CLI printed (`Run directory: …`). */
export function runDirFromOutput(text: string): string {
  const match = /^Run directory: (.+)$/m.exec(text);
  if (!match) throw new Error(`bench: no "Run directory:" in the harness output:\n${text.slice(-2000)}`);
  return match[1]!.trim();
}

/** The bare engine command of an attempt: its executable, argv and env, pointed at `modelUrl`, run in `cwd`. */
export interface BareCommand {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * Rebuilds the engine command of `meta` for a bare run against `modelUrl` (the redacted key replaced), as a user
 * would type it in the shell the harness command runs from: `shell` (the harness's own environment) with the
 * attempt's engine variables set on top (HOME, CODEX_HOME, proxies, …), so both sides start from the same
 * environment. What the harness drops from an engine's environment (NODE_EXTRA_CA_CERTS, say) still reaches the
 * bare command, as it would from that shell.
 */
export function bareCommand(meta: AttemptMeta, modelUrl: string, shell: NodeJS.ProcessEnv): BareCommand {
  const old = meta.model.base_url;
  if (!old) throw new Error('bench: the attempt has no scripted model URL');
  const swap = (value: string): string => value.split(old).join(modelUrl);
  const env: NodeJS.ProcessEnv = { ...shell };
  for (const [key, value] of Object.entries(meta.env)) env[key] = value === '[redacted]' ? 'bench-key' : swap(value);
  // The engine's TMPDIR is per attempt and removed with it: give the bare run one that exists.
  if (env.TMPDIR) fs.mkdirSync(env.TMPDIR, { recursive: true });
  // What a user types: the installed command (codex's npm launcher), not the native binary the harness starts for it.
  return { file: meta.command.launcher ?? meta.command.executable, args: meta.command.argv.map(swap), env };
}

/** The native codex binary the npm launcher (`node_modules/.bin/codex`, a node script) execs or spawns, as the harness finds it. */
export function nativeCodex(): { file: string; env: Record<string, string> } | null {
  const native = resolveCodexNativeLaunch(path.join(root, 'node_modules', '.bin', 'codex'));
  return native ? { file: native.file, env: native.env } : null;
}

/** Medians of a series of timings. */
export function medians(timings: readonly Timing[]): Timing {
  const lines = timings.map((t) => t.firstLine).filter((v): v is number => v !== null);
  return { wall: median(timings.map((t) => t.wall)), cpu: median(timings.map((t) => t.cpu)), firstLine: lines.length > 0 ? median(lines) : null };
}

/** `1.23 s` from milliseconds. */
export function secs(ms: number): string {
  return `${(ms / 1000).toFixed(3)} s`;
}

/** `1.07×`. */
export function times(ratio: number): string {
  return `${ratio.toFixed(2)}×`;
}

/** Median per step of `meta.timings.steps` across attempts; null when no meta had steps. */
export function medianSteps(steps: ReadonlyArray<Record<string, number> | undefined>): Record<string, number> | null {
  const present = steps.filter((s): s is Record<string, number> => !!s && typeof s === 'object');
  if (present.length === 0) return null;
  const names = [...new Set(present.flatMap((s) => Object.keys(s)))];
  const out: Record<string, number> = {};
  for (const name of names) {
    const values = present.map((s) => s[name]).filter((v): v is number => typeof v === 'number');
    if (values.length > 0) out[name] = median(values);
  }
  return out;
}

/** `model_server 12, isolation 80, …` (ms). */
export function formatSteps(steps: Record<string, number>): string {
  return Object.entries(steps).map(([name, ms]) => `${name} ${ms.toFixed(0)}`).join(', ') + ' (ms)';
}

/**
 * The environment a benchmark starts harness processes with: throwaway data dir and HOME, no forced tsx, and each
 * command in its own process (AGENT_HARNESS_DAEMON=off, as in a CI job; the daemon's rows turn it on).
 */
export function harnessEnv(dataDir: string, home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, SKILL_RUNNER_DATA_DIR: dataDir, HOME: home, AGENT_HARNESS_DAEMON: 'off' };
  delete env.AGENT_HARNESS_FROM_SOURCE;
  delete env.AGENT_HARNESS_RUN_ROOT;
  delete env.AGENT_HARNESS_ISOLATION;
  return env;
}

/**
 * Node reads every certificate of NODE_EXTRA_CA_CERTS when it starts, before any script runs: with the 144 of
 * /etc/ssl/certs/ca-certificates.crt that costs each Node process ~45 ms on the bench machine. The variable, when
 * the shell sets it, or null.
 */
export const EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS || null;

/** A copy of `env` without NODE_EXTRA_CA_CERTS. */
export function withoutExtraCaCerts(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.NODE_EXTRA_CA_CERTS;
  return copy;
}

/** A project directory for the harness (a package.json, no skills), so the project root is not the caller's. */
export function projectDir(scratch: Scratch): string {
  const dir = scratch.dir('project');
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"bench-project","private":true}\n');
  return dir;
}
