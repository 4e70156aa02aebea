/**
 * Attempt benchmarks (issue 13): what one harness attempt costs over the bare engine turn it runs, against the
 * same scripted model with the same config (argv, env, HOME, engine config files: rebuilt from the attempt's
 * `.audit/meta.1.json`, the model port swapped for a scripted model server started here).
 *
 * - `cli-attempt`: `agent-harness start …` as a whole process (tsx, and dist/ when it is the build of src/) vs
 *   the bare engine command, for codex and claude; also the bare command inside the harness's namespaces, and
 *   for codex the npm wrapper (a node script) vs the native binary it hands over to.
 * - `inproc-attempt`: `runAttempt` in this process (as the Vitest fixture calls it, sharing one model server)
 *   vs the bare codex command.
 *
 * Paired rounds (every case once per round, the order rotating from round to round) after one warm-up of each; the ratio printed is the
 * median of the per-round ratios. Wall and CPU (user + sys of the process tree, plus this process: the model
 * server of a bare run, or the in-process harness).
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startModelServer, type ModelServer } from '../src/model/index.js';
import { runAttempt, type AttemptRequest } from '../src/core/run-attempt.js';
import { resolveHarnessPaths } from '../src/runtime/paths.js';
import { openIsolation } from '../src/runtime/isolation/attempt-isolation.js';
import { probeNamespaces } from '../src/runtime/isolation/probe.js';
import { superviseSplit } from '../src/runtime/process.js';
import { median, type BenchRow } from './figures.js';
import {
  bareCommand, bin, distIsCurrent, EXTRA_CA_CERTS, formatSteps, harnessEnv, measure, medianSteps, medians, nativeCodex, projectDir, readAttempt, runDirFromOutput,
  runProcess, Scratch, secs, times, withoutExtraCaCerts, type AttemptMeta, type BareCommand, type Timing,
} from './util.js';

/** Rounds of the CLI attempt bench (each runs every case once). */
export const CLI_ROUNDS = 10;
/** Rounds of the in-process bench. */
export const INPROC_ROUNDS = 16;

/** The codex arguments of the benches' attempts: one headless turn. */
export const CODEX_ARGS = ['exec', '--json', '--skip-git-repo-check', 'hi'];

/** One measured case: runs once and returns its timing (+ the attempt's meta when it is a harness attempt). */
export interface Case {
  name: string;
  run: () => Promise<{ timing: Timing; meta?: AttemptMeta }>;
}

/** Runs `rounds` rounds of `cases` after one warm-up each; returns every case's timings and metas. */
export async function rounds(cases: readonly Case[], count: number): Promise<Map<string, { timings: Timing[]; metas: AttemptMeta[] }>> {
  const out = new Map(cases.map((c) => [c.name, { timings: [] as Timing[], metas: [] as AttemptMeta[] }]));
  for (const c of cases) await c.run();
  for (let round = 0; round < count; round += 1) {
    // The order rotates each round, so no case always follows the same one.
    for (const c of cases.map((_, i) => cases[(i + round) % cases.length]!)) {
      const { timing, meta } = await c.run();
      out.get(c.name)!.timings.push(timing);
      if (meta) out.get(c.name)!.metas.push(meta);
    }
  }
  return out;
}

/** Median of per-round ratios a/b of `key`. */
function pairedRatio(a: readonly Timing[], b: readonly Timing[], key: 'wall' | 'cpu'): number {
  return median(a.map((t, i) => t[key] / b[i]![key]));
}

/** A row comparing case `a` (harness side) with case `b` (reference), plus the printed line. */
function compare(bench: string, label: string, a: readonly Timing[], b: readonly Timing[], target: string | null, extra = ''): BenchRow {
  const ma = medians(a);
  const mb = medians(b);
  const wall = pairedRatio(a, b, 'wall');
  const cpu = pairedRatio(a, b, 'cpu');
  const first = ma.firstLine !== null && mb.firstLine !== null ? `; first stdout line ${secs(ma.firstLine)} vs ${secs(mb.firstLine)}` : '';
  const note = `wall medians, ${a.length} pairs; CPU ${secs(ma.cpu)} vs ${secs(mb.cpu)} (${times(cpu)})${first}${extra ? `; ${extra}` : ''}`;
  console.log(`  ${label.padEnd(44)} ${secs(ma.wall)} vs ${secs(mb.wall)}  wall ${times(wall)}  cpu ${secs(ma.cpu)} vs ${secs(mb.cpu)} ${times(cpu)}${first}`);
  return { bench, case: label, harness: secs(ma.wall), reference: secs(mb.wall), ratio: times(wall), target, note };
}

/** The step breakdown row of a series of harness attempts (median per step), or nothing when the metas lack it. */
function stepsRow(bench: string, label: string, metas: readonly AttemptMeta[]): BenchRow[] {
  const steps = medianSteps(metas.map((m) => m.timings?.steps));
  const durations = metas.map((m) => m.timings?.duration_ms).filter((v): v is number => typeof v === 'number');
  if (!steps) {
    // No meta.timings.steps in this build: the phases the RASP timestamps tell instead.
    const phases = medianSteps(metas.map((m) => m.phases));
    if (!phases || durations.length === 0) return [];
    const text = `no meta.timings.steps in this build; from RASP timestamps: ${formatSteps(phases)}`;
    console.log(`  ${label}: meta duration_ms median ${median(durations).toFixed(0)} ms, ${text}`);
    return [{ bench, case: `${label}: phases`, harness: `${median(durations).toFixed(0)} ms`, reference: null, ratio: null, target: null, note: text }];
  }
  const phases = medianSteps(metas.map((m) => m.phases));
  const text = `meta.timings.steps: ${formatSteps(steps)}${phases ? `; from RASP timestamps: ${formatSteps(phases)}` : ''}`;
  console.log(`  ${label} (median per step) ${text}`);
  return [{ bench, case: `${label}: steps`, harness: durations.length > 0 ? `${median(durations).toFixed(0)} ms` : '-', reference: null, ratio: null, target: null, note: text }];
}

/** A case running the bare command in a fresh directory (as the harness runs the engine in a fresh run dir). */
function bareCase(name: string, scratch: Scratch, command: BareCommand, runIn?: (command: BareCommand, cwd: string) => Promise<void>): Case {
  return {
    name,
    run: async () => {
      const cwd = scratch.dir('bare');
      try {
        const { timing } = await measure(async () => {
          if (!runIn) return runProcess(command.file, command.args, { env: command.env, cwd });
          return runIn(command, cwd);
        });
        return { timing };
      } finally {
        fs.rmSync(cwd, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Runs a command in the namespaces the harness uses (network with only loopback + the model port, PID), as the
 * harness runs a split-stream engine: the init prestarted with its lifeline and model channel, then told the
 * command. The bare turn with the harness's containment and nothing else of the harness. The command gets its
 * environment as a user's shell gives it (NODE_EXTRA_CA_CERTS included); the init starts with none, as the
 * harness starts it.
 */
function namespaceRun(modelUrl: string) {
  return async (bare: BareCommand, cwd: string): Promise<void> => {
    const support = probeNamespaces();
    const isolation = await openIsolation({ mode: 'require', modelUrl, support, prestart: 'ignore' });
    try {
      const env = Object.fromEntries(Object.entries(bare.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
      const stderr: Buffer[] = [];
      const child = isolation.launch({ file: bare.file, args: bare.args, env, cwd });
      if (!child) throw new Error('the namespaces\' init did not start');
      const result = await isolation.settle(await superviseSplit(child, { onChunk: (stream, chunk) => (stream === 'stderr' ? stderr.push(chunk) : undefined), timeoutMs: 120_000 }));
      if (result.exitCode !== 0) throw new Error(`${bare.file} in the namespaces exited ${result.exitCode ?? result.signal ?? result.spawnError?.message}: ${Buffer.concat(stderr).toString('utf8').slice(-2000)}`);
    } finally {
      await isolation.close();
    }
  };
}

/**
 * A harness CLI case: `agent-harness start …` in the project dir, tsx or dist, the bin run as a user's shell runs
 * the command's link (its sh line starts Node, or with the daemon on the Perl client); `client: 'node'` runs
 * `node bin/agent-harness.js` instead, the Node client of a daemon.
 */
function cliCase(name: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd: string, client: 'bin' | 'node' = 'bin'): Case {
  return {
    name,
    run: async () => {
      const spawnedAt = Date.now();
      // PWD as a shell in `cwd` sets it (the bin's sh sets it so), so that both clients name the same daemon.
      const shellEnv = { ...env, PWD: cwd };
      const { timing, value } = await measure(() => (client === 'bin' ? runProcess(bin, args, { env: shellEnv, cwd }) : runProcess(process.execPath, [bin, ...args], { env: shellEnv, cwd })));
      const runDir = runDirFromOutput(`${value.stdout}\n${value.stderr}`);
      const meta = readAttempt(runDir);
      // The CLI process around the attempt: node start-up + module loading + model server before it, exit after.
      const begin = Date.parse(meta.timings?.started_at ?? '');
      const end = Date.parse(meta.timings?.ended_at ?? '');
      if (meta.phases && Number.isFinite(begin) && Number.isFinite(end)) {
        meta.phases = { cli_before_attempt: begin - spawnedAt, ...meta.phases, cli_after_attempt: spawnedAt + timing.wall - end };
      }
      fs.rmSync(runDir, { recursive: true, force: true });
      return { timing, meta };
    },
  };
}

/** Benchmark 1: the harness CLI attempt vs the bare CLI turn, codex and claude. */
export async function benchCliAttempt(options: { rounds?: number; engines?: readonly string[] } = {}): Promise<BenchRow[]> {
  const count = options.rounds ?? CLI_ROUNDS;
  const dist = await distIsCurrent();
  const rows: BenchRow[] = [];
  console.log(`cli attempt vs bare CLI turn (${count} paired rounds after a warm-up; bin runs ${dist ? 'tsx and dist/ (both measured)' : 'tsx only: dist/ is not the build of src/'})`);
  for (const engine of options.engines ?? ['codex', 'claude']) {
    const scratch = new Scratch(`cli-${engine}`);
    let server: ModelServer | null = null;
    try {
      const data = scratch.dir('data');
      const home = scratch.dir('home');
      const project = projectDir(scratch);
      const env = harnessEnv(data, home);
      const args = engine === 'codex' ? ['start', 'codex', ...CODEX_ARGS] : ['start', '--prompt', 'hi', engine];
      const cases: Case[] = [cliCase('harness-tsx', args, { ...env, AGENT_HARNESS_FROM_SOURCE: '1' }, project)];
      if (dist) cases.push(cliCase('harness-dist', args, env, project));
      // The first attempt writes the engine config the bare runs reuse, and tells their command.
      const first = await cases[0]!.run();
      server = await startModelServer({});
      const bare = bareCommand(first.meta!, server.url, env);
      cases.push(bareCase('bare', scratch, bare));
      // The shell's NODE_EXTRA_CA_CERTS weighs on every Node start (the harness's, and the launcher's of a bare
      // codex or claude): the same pair once more without it.
      if (dist && EXTRA_CA_CERTS) {
        cases.push(cliCase('harness-dist-noca', args, withoutExtraCaCerts(env), project));
        cases.push(bareCase('bare-noca', scratch, { ...bare, env: withoutExtraCaCerts(bare.env) }));
      }
      cases.push(bareCase('bare-ns', scratch, bare, namespaceRun(server.url)));
      const native = engine === 'codex' ? nativeCodex() : null;
      if (native) cases.push(bareCase('bare-native', scratch, { file: native.file, args: bare.args, env: { ...bare.env, ...native.env } }));
      console.log(` ${engine}: harness runs ${first.meta!.command.executable} ${first.meta!.command.argv.join(' ')} (isolation ${first.meta!.isolation?.network}/${first.meta!.isolation?.processes})`);
      const results = await rounds(cases, count);
      const t = (name: string): Timing[] => results.get(name)!.timings;
      const isolation = 'both from the same shell environment (the bare command with the attempt\'s engine variables on top); harness engine in network + PID namespaces, bare without';
      rows.push(compare('cli-attempt', `${engine}: harness CLI (tsx) vs bare`, t('harness-tsx'), t('bare'), '≤ 1.10×', isolation));
      if (dist) rows.push(compare('cli-attempt', `${engine}: harness CLI (dist) vs bare`, t('harness-dist'), t('bare'), '≤ 1.10×', `AGENT_HARNESS_DAEMON=off, as in a CI job: a fresh Node process of the whole harness per command (the next row: the same command through the daemon, the default elsewhere); ${isolation}`));
      if (dist && EXTRA_CA_CERTS) {
        rows.push(compare('cli-attempt', `${engine}: the same, neither with NODE_EXTRA_CA_CERTS`, t('harness-dist-noca'), t('bare-noca'), '≤ 1.10×', `the shell sets NODE_EXTRA_CA_CERTS=${EXTRA_CA_CERTS}, which every Node start reads first`));
        rows.push(compare('cli-attempt', `${engine}: harness CLI (dist), NODE_EXTRA_CA_CERTS vs none`, t('harness-dist'), t('harness-dist-noca'), null, 'what the certificates cost the harness command (one Node start)'));
        rows.push(compare('cli-attempt', `${engine}: bare, NODE_EXTRA_CA_CERTS vs none`, t('bare'), t('bare-noca'), null, engine === 'codex' ? 'the npm launcher is a Node start' : 'the engine is a Node program'));
      }
      // The containment alone: what the bare turn costs in the harness's namespaces, and the harness against that.
      const initKind = 'the Node init: a Node start without NODE_EXTRA_CA_CERTS, as the harness starts it';
      rows.push(compare('cli-attempt', `${engine}: bare in namespaces vs bare`, t('bare-ns'), t('bare'), null, `the containment alone: the bare command in the harness's network + PID namespaces (unshare, ${initKind})`));
      if (dist) rows.push(compare('cli-attempt', `${engine}: harness CLI (dist) vs bare in namespaces`, t('harness-dist'), t('bare-ns'), null, 'the harness\'s share, both contained alike: what the harness adds to a bare turn in the same namespaces'));
      if (native) {
        if (dist) rows.push(compare('cli-attempt', `${engine}: harness CLI (dist) vs bare native binary`, t('harness-dist'), t('bare-native'), null, 'both start the native binary (the harness stands in for the npm launcher)'));
        rows.push(compare('cli-attempt', `${engine}: npm launcher vs native binary (bare)`, t('bare'), t('bare-native'), null, `${path.relative(process.cwd(), native.file)}`));
      }
      if (dist) rows.push(compare('cli-attempt', `${engine}: harness CLI tsx vs dist`, t('harness-tsx'), t('harness-dist'), null));
      rows.push(...stepsRow('cli-attempt', `${engine} (${dist ? 'dist' : 'tsx'})`, results.get(dist ? 'harness-dist' : 'harness-tsx')!.metas));
    } finally {
      await server?.close();
      scratch.dispose();
    }
  }
  return rows;
}

/** Benchmark 2: `runAttempt` in this process (the Vitest fixture's way) vs the bare codex turn. */
export async function benchInProcessAttempt(options: { rounds?: number } = {}): Promise<BenchRow[]> {
  const count = options.rounds ?? INPROC_ROUNDS;
  console.log(`in-process attempt (runAttempt, shared model server) vs bare codex turn (${count} paired rounds after a warm-up)`);
  const scratch = new Scratch('inproc');
  const server = await startModelServer({});
  try {
    const { inProcessCase, bare } = await inProcessSetup(scratch, server);
    const cases = [inProcessCase, bareCase('bare', scratch, bare)];
    if (EXTRA_CA_CERTS) cases.push(bareCase('bare-noca', scratch, { ...bare, env: withoutExtraCaCerts(bare.env) }));
    // The bare turn on the native binary: what the harness itself costs, the launcher's Node start set aside.
    const native = nativeCodex();
    if (native) cases.push(bareCase('bare-native', scratch, { file: native.file, args: bare.args, env: { ...bare.env, ...native.env } }));
    // The same attempt through the npm launcher as installed (AGENT_HARNESS_NPM_LAUNCHERS=1).
    const launcher = await inProcessSetup(scratch, server, { launcher: true });
    cases.push({ ...launcher.inProcessCase, name: 'runAttempt-launcher' });
    // The same attempt without namespaces: what the namespaces (init, forwarders) cost apart from the rest.
    const open = await inProcessSetup(scratch, server, { isolation: 'off' });
    cases.push({ ...open.inProcessCase, name: 'runAttempt-open' });
    const results = await rounds(cases, count);
    const t = (name: string): Timing[] => results.get(name)!.timings;
    const rows = [compare('inproc-attempt', 'codex: runAttempt vs bare', t('runAttempt'), t('bare'), '≤ 1.05×', 'harness: native binary in network + PID namespaces; bare: `codex` as installed (the npm launcher), no namespaces, from this process\'s environment')];
    if (EXTRA_CA_CERTS) rows.push(compare('inproc-attempt', 'codex: runAttempt vs bare without NODE_EXTRA_CA_CERTS', t('runAttempt'), t('bare-noca'), '≤ 1.05×', 'the bare launcher\'s Node start without reading the extra certificates'));
    if (native) {
      rows.push(compare('inproc-attempt', 'codex: runAttempt vs bare native binary', t('runAttempt'), t('bare-native'), null, "the harness's own cost: both start the native binary"));
      rows.push(compare('inproc-attempt', 'codex: npm launcher vs native binary (bare)', t('bare'), t('bare-native'), null, 'what the launcher costs every bare turn: a Node start, and on Node 20 a second process'));
    }
    rows.push(compare('inproc-attempt', 'codex: runAttempt through the launcher vs bare', t('runAttempt-launcher'), t('bare'), null, 'AGENT_HARNESS_NPM_LAUNCHERS=1: the harness runs bin/codex.js as installed'));
    rows.push(compare('inproc-attempt', 'codex: runAttempt without namespaces vs bare', t('runAttempt-open'), t('bare'), null, '--isolation off: the audit, parsing and bookkeeping without the namespaces'));
    rows.push(compare('inproc-attempt', 'codex: runAttempt, namespaces vs none', t('runAttempt'), t('runAttempt-open'), null, 'what the network and PID namespaces add (the init is prepared by the previous attempt)'));
    rows.push(...stepsRow('inproc-attempt', 'codex runAttempt', results.get('runAttempt')!.metas));
    rows.push(...stepsRow('inproc-attempt', 'codex runAttempt without namespaces', results.get('runAttempt-open')!.metas));
    return rows;
  } finally {
    await server.close();
    scratch.dispose();
  }
}

/**
 * Where an in-process attempt runs, when not in a new run directory under the run root: a new run in an existing
 * directory (`runDir`, a provider's `cwd`), or the next attempt of a run (`run`, `start --run-dir`).
 */
export type AttemptPlace = Pick<AttemptRequest, 'runDir' | 'run'>;

/** Options of {@link inProcessSetup}. */
export interface InProcessOptions {
  /** Run codex through its npm launcher (AGENT_HARNESS_NPM_LAUNCHERS=1). */
  launcher?: boolean;
  /** No namespaces. */
  isolation?: 'off';
  /**
   * Where each attempt of the case (and the setup's first) runs, asked before the attempt and its timing begin; the
   * directory is the caller's to remove. Absent: a new run directory under the run root, removed after the attempt.
   */
  place?: () => AttemptPlace | Promise<AttemptPlace>;
}

/** What the in-process benches share: one runAttempt as the fixture does it, and the bare command it runs. */
export async function inProcessSetup(scratch: Scratch, server: ModelServer, options: InProcessOptions = {}): Promise<{ attempt: () => Promise<AttemptMeta & { firstLine: number | null }>; inProcessCase: Case; bare: BareCommand; fresh: () => string }> {
  const data = scratch.dir('data');
  const home = scratch.dir('home');
  const project = projectDir(scratch);
  const hostEnv = harnessEnv(data, home);
  if (options.launcher) hostEnv.AGENT_HARNESS_NPM_LAUNCHERS = '1';
  const paths = resolveHarnessPaths({ cwd: project, env: hostEnv });
  /** One attempt; `wall` is runAttempt's own time (reading the meta back and removing the run dir come after). */
  const attempt = async (place?: AttemptPlace): Promise<AttemptMeta & { firstLine: number | null; wall: number }> => {
    const started = performance.now();
    let firstLine: number | null = null;
    const result = await runAttempt({
      paths, engine: 'codex', launch: 'start', prompt: null, passthrough: CODEX_ARGS, label: 'bench', workspace: {}, ...place,
      modelMode: 'scripted', modelServer: server, hostEnv,
      ...(options.isolation ? { isolation: options.isolation } : {}),
      onOutput: (stream, chunk) => {
        if (firstLine === null && stream === 'stdout' && chunk.includes(10)) firstLine = performance.now() - started;
      },
    });
    const wall = performance.now() - started;
    if (result.error) throw result.error;
    if (result.exitCode !== 0) throw new Error(`bench: codex attempt exited ${result.exitCode}: ${result.runDir}`);
    const meta = readAttempt(result.runDir, result.attempt);
    if (options.launcher && meta.command.launcher) throw new Error(`bench: the harness ran ${meta.command.executable}, not the npm launcher`);
    if (!place) fs.rmSync(result.runDir, { recursive: true, force: true });
    return { ...meta, firstLine, wall };
  };
  const first = await attempt(await options.place?.());
  return {
    attempt: () => attempt(),
    inProcessCase: {
      name: 'runAttempt',
      run: async () => {
        const place = await options.place?.();
        const { timing, value } = await measure(() => attempt(place));
        return { timing: { ...timing, wall: value.wall }, meta: value };
      },
    },
    bare: bareCommand(first, server.url, hostEnv),
    fresh: () => scratch.dir('bare'),
  };
}
