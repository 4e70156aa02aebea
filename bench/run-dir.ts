/**
 * Figure 4, `run-dir`: what a run directory of 10,000 small files adds to an attempt. The command in a fresh
 * process, as a CI job runs it (`agent-harness start --run-dir <run> codex …`, dist/, CI=true): a fresh process
 * remembers no hash of an earlier attempt, so this is the heaviest path. Each round adds one attempt to a run whose
 * directory holds 10,000 files (made once, with `--template`) and one to a run with an empty directory; the figure
 * is the median of the per-round differences of wall time.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { cliSide } from './cli.js';
import {
  bin,
  fillTree,
  harnessEnv,
  median,
  pairedDifference,
  pairedRounds,
  projectDir,
  requireCurrentDist,
  root,
  runDirOf,
  runProcess,
  Scratch,
  sideBySide,
  stepsLine,
  type Figure,
} from './util.js';

/** Files in the full run directory. */
const FILES = 10_000;
const CODEX = ['codex', 'exec', '--json', '--skip-git-repo-check', 'hi'];

/** Measures figure 4 over `rounds` paired rounds. */
export async function benchRunDir(rounds: number): Promise<Figure[]> {
  requireCurrentDist();
  const scratch = new Scratch('run-dir');
  try {
    const env = harnessEnv(scratch);
    const project = projectDir(scratch);
    const tree = scratch.dir('tree');
    fillTree(tree, FILES);
    const runOf = async (seed: readonly string[]): Promise<string> =>
      runDirOf(await runProcess(process.execPath, [bin, 'start', ...seed, ...CODEX], { env, cwd: project }));
    const [full, empty] = [await runOf(['--template', tree, '--no-git']), await runOf([])];
    // The files on disk before the rounds: else the first attempts' fsyncs wait for the kernel to write them out.
    execFileSync('sync');
    const sides = [
      cliSide('full', ['start', '--run-dir', full, ...CODEX], env, project, true),
      cliSide('empty', ['start', '--run-dir', empty, ...CODEX], env, project, true),
    ];
    const series = await pairedRounds(sides, rounds);
    const [a, b] = [series.get('full')!, series.get('empty')!];
    const added = pairedDifference(a, b);
    const floor = await walkFloor(full, env, project, rounds);
    return [
      {
        name: 'run-dir',
        what: `codex attempt (agent-harness start --run-dir, a fresh process) in a run dir of ${FILES.toLocaleString('en')} files vs an empty one`,
        value: `${added >= 0 ? '+' : ''}${added.toFixed(0)} ms`,
        target: '≤ +150 ms',
        pass: added <= 150,
        detail: [
          sideBySide(a, b),
          `${FILES} files: ${stepsLine(a.metas)}`,
          `empty: ${stepsLine(b.metas)}`,
          `its floor (run-dir floor below): +${floor.ms.toFixed(0)} ms`,
        ],
      },
      {
        name: 'run-dir floor',
        what: `the two listings an attempt's snapshots need at the least: readdir and lstat of every entry of the same run dir, twice, in a fresh Node process (bench/walk-floor.mjs)`,
        value: `+${floor.ms.toFixed(0)} ms`,
        target: '—',
        pass: null,
        detail: [`${floor.entries} entries; median of ${rounds} processes`],
      },
    ];
  } finally {
    scratch.dispose();
  }
}

/** The median time of the two bare walks of `dir` (`walk-floor.mjs`), each round a fresh process. */
async function walkFloor(
  dir: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  rounds: number,
): Promise<{ ms: number; entries: number }> {
  const script = path.join(root, 'bench', 'walk-floor.mjs');
  const runs: Array<{ ms: number; entries: number }> = [];
  for (let i = 0; i < rounds; i += 1) {
    const { stdout } = await runProcess(process.execPath, [script, dir], { env, cwd });
    const [ms, entries] = stdout.trim().split(' ').map(Number);
    runs.push({ ms: ms!, entries: entries! });
  }
  return { ms: median(runs.map((r) => r.ms)), entries: runs[0]!.entries };
}
