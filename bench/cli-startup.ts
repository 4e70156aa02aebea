/**
 * Start-up time of the `agent-harness` command (issue 13): whole processes, as a user or a contract test runs
 * them, median wall time of 10. Each command runs from the sources through tsx (AGENT_HARNESS_FROM_SOURCE=1) and
 * from dist/ (only when dist/ is the build of the current src/: otherwise the bin would fall back to tsx).
 * `node -e 0` is printed alongside: the floor no command can go under on this machine.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { BenchRow } from './figures.js';
import { bin, distIsCurrent, EXTRA_CA_CERTS, root, withoutExtraCaCerts } from './util.js';

const RUNS = 10;

/** Median wall time in ms of `node ...args` run RUNS times; throws with its stderr when a run exits non-zero. */
function medianMs(args: readonly string[], env: NodeJS.ProcessEnv): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const started = performance.now();
    const result = spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    times.push(performance.now() - started);
    if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status ?? result.signal}: ${result.stderr}`);
  }
  times.sort((a, b) => a - b);
  return (times[Math.floor((RUNS - 1) / 2)]! + times[Math.ceil((RUNS - 1) / 2)]!) / 2;
}


/**
 * Prints the start-up figures of `--version`, `runs --json` (empty run root) and `translate --summary`; returns a
 * row per command (harness: dist/ when current, else tsx; reference: `node -e 0`).
 */
export async function benchCliStartup(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-bench-runs-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, AGENT_HARNESS_RUN_ROOT: runRoot };
    delete env.AGENT_HARNESS_FROM_SOURCE;
    const stream = path.join(root, 'fixtures', 'streams', 'codex', 'done-marker.stdout.jsonl');
    const commands: Array<[string, string[]]> = [
      ['--version', ['--version']],
      ['runs --json (empty run root)', ['runs', '--json']],
      ['translate --summary (codex fixture)', ['translate', '--engine', 'codex', '--stdout', stream, '--summary']],
    ];
    const dist = await distIsCurrent();
    const floor = medianMs(['-e', '0'], env);
    console.log(`cli start-up, median of ${RUNS} processes (node -e 0: ${floor.toFixed(0)} ms)${dist ? '' : '; dist/ skipped: it is not the build of src/ (npm run build)'}`);
    for (const [label, args] of commands) {
      const fromSource = medianMs([bin, ...args], { ...env, AGENT_HARNESS_FROM_SOURCE: '1' });
      const distMs = dist ? medianMs([bin, ...args], env) : null;
      const fromDist = distMs !== null ? `${distMs.toFixed(0)} ms` : '-';
      console.log(`  ${label.padEnd(38)} tsx ${fromSource.toFixed(0).padStart(5)} ms   dist ${fromDist.padStart(7)}`);
      const harness = distMs ?? fromSource;
      rows.push({
        bench: 'cli-startup', case: `${label} (${distMs !== null ? 'dist' : 'tsx'})`, harness: `${harness.toFixed(0)} ms`, reference: `${floor.toFixed(0)} ms`,
        ratio: `${(harness / floor).toFixed(2)}×`, target: label === '--version' ? '≤ 100 ms' : null,
        note: `reference: node -e 0; median of ${RUNS}; tsx ${fromSource.toFixed(0)} ms${distMs !== null ? '' : ' (dist/ not current)'}${label === '--version' ? '; answered by the bin from package.json before it loads either' : ''}`,
      });
    }
    if (EXTRA_CA_CERTS && dist) {
      // Node reads NODE_EXTRA_CA_CERTS before any script: what `--version` and Node itself take without it.
      const bare = withoutExtraCaCerts(env);
      const floorWithout = medianMs(['-e', '0'], bare);
      const version = medianMs([bin, '--version'], bare);
      console.log(`  ${'--version, without NODE_EXTRA_CA_CERTS'.padEnd(38)} dist ${version.toFixed(0).padStart(5)} ms   (node -e 0: ${floorWithout.toFixed(0)} ms)`);
      rows.push({
        bench: 'cli-startup', case: '--version (dist), without NODE_EXTRA_CA_CERTS', harness: `${version.toFixed(0)} ms`, reference: `${floorWithout.toFixed(0)} ms`,
        ratio: `${(version / floorWithout).toFixed(2)}×`, target: '≤ 100 ms',
        note: `reference: node -e 0 without it; median of ${RUNS}; with it node -e 0 takes ${floor.toFixed(0)} ms`,
      });
    }
    return rows;
  } finally {
    fs.rmSync(runRoot, { recursive: true, force: true });
  }
}
