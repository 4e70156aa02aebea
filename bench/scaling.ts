/**
 * Suite scaling (issue 13): N concurrent scripted codex attempts in one process (`runAttempt` under
 * `Promise.all`, each its own run, one shared model server as a Vitest file's sequential tests would have; the
 * script is the default one, so sharing changes no answer) for N = 1, 4, 16 on this machine, against N
 * concurrent bare codex turns (the same command and config, each in its own directory). Printed: the harness wall
 * time, N × one attempt (the N = 1 median), and the bare wall time with the same N.
 */
import fs from 'node:fs';
import { startModelServer } from '../src/model/index.js';
import { median, type BenchRow } from './figures.js';
import { inProcessSetup } from './attempt.js';
import { measure, runProcess, Scratch, secs, times, type Timing } from './util.js';

/** How many alternated harness/bare repetitions each N gets (fewer for the slow cases). */
export const SCALING_REPS: Readonly<Record<number, number>> = { 1: 6, 4: 3, 16: 2 };

export async function benchScaling(sizes: readonly number[] = [1, 4, 16]): Promise<BenchRow[]> {
  const scratch = new Scratch('scaling');
  const server = await startModelServer({});
  const rows: BenchRow[] = [];
  try {
    const { attempt, bare, fresh } = await inProcessSetup(scratch, server);
    const bareOnce = async (): Promise<void> => {
      const cwd = fresh();
      try {
        await runProcess(bare.file, bare.args, { env: bare.env, cwd });
      } finally {
        fs.rmSync(cwd, { recursive: true, force: true });
      }
    };
    await bareOnce();
    console.log(`suite scaling: N concurrent codex attempts (runAttempt, Promise.all) vs N concurrent bare codex turns, ${JSON.stringify(SCALING_REPS)} reps per N`);
    let single: number | null = null;
    let singleBare: number | null = null;
    for (const n of sizes) {
      const reps = SCALING_REPS[n] ?? 1;
      const harness: Timing[] = [];
      const reference: Timing[] = [];
      for (let rep = 0; rep < reps; rep += 1) {
        harness.push((await measure(() => Promise.all(Array.from({ length: n }, () => attempt())))).timing);
        reference.push((await measure(() => Promise.all(Array.from({ length: n }, () => bareOnce())))).timing);
      }
      const wall = median(harness.map((t) => t.wall));
      const bareWall = median(reference.map((t) => t.wall));
      const cpu = median(harness.map((t) => t.cpu));
      const bareCpu = median(reference.map((t) => t.cpu));
      if (n === 1 || single === null) {
        single = wall / n;
        singleBare = bareWall / n;
      }
      const linear = n * single;
      const linearBare = n * singleBare!;
      const note = `N × one attempt ${secs(linear)} (harness/that ${times(wall / linear)}; bare: N × one ${secs(linearBare)}, ${times(bareWall / linearBare)}); CPU ${secs(cpu)} vs ${secs(bareCpu)}; ${reps} rep(s)`;
      console.log(`  N=${String(n).padStart(2)}  harness ${secs(wall)}  bare ${secs(bareWall)}  ${times(wall / bareWall)}   ${note}`);
      rows.push({ bench: 'scaling', case: `codex, N=${n} concurrent`, harness: secs(wall), reference: secs(bareWall), ratio: times(wall / bareWall), target: null, note });
    }
    return rows;
  } finally {
    await server.close();
    scratch.dispose();
  }
}
