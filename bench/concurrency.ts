/**
 * Figure 5, `concurrency`: 16 concurrent scripted codex attempts (runAttempt in this process under Promise.all, each
 * its own run, one shared model server) against the ideal of the machine's cores, 16 × one attempt / cores; one
 * attempt is measured alone in the same round. The figure is the median of the per-round ratios
 * (16 concurrent) / (16 × one / cores).
 */
import os from 'node:os';
import { startModelServer } from '../src/engines/model-server.js';
import { libraryAttempts } from './library.js';
import {
  harnessEnv,
  measure,
  median,
  projectDir,
  pairedRounds,
  Scratch,
  secs,
  stepsLine,
  type AttemptMeta,
  type Figure,
  ratioFigure,
} from './util.js';

/** Attempts run at once. */
const CONCURRENT = 16;

/** Measures figure 5 over `rounds` paired rounds. */
export async function benchConcurrency(rounds: number): Promise<Figure[]> {
  const cores = os.availableParallelism();
  const scratch = new Scratch('concurrency');
  const server = await startModelServer({});
  try {
    const attempt = libraryAttempts(harnessEnv(scratch), projectDir(scratch), server);
    let metas: AttemptMeta[] = [];
    const series = await pairedRounds(
      [
        { name: 'one', run: async () => ({ timing: (await measure(attempt)).timing }) },
        {
          name: 'many',
          run: async () => {
            const { timing, value } = await measure(() =>
              Promise.all(Array.from({ length: CONCURRENT }, () => attempt())),
            );
            metas = value.map((v) => v.meta);
            return { timing };
          },
        },
      ],
      rounds,
    );
    const [one, many] = [series.get('one')!.timings, series.get('many')!.timings];
    const ratio = median(many.map((t, i) => t.wall / ((CONCURRENT * one[i]!.wall) / cores)));
    const ideal = (CONCURRENT * median(one.map((t) => t.wall))) / cores;
    return [
      ratioFigure(
        'concurrency',
        `${CONCURRENT} concurrent codex attempts (runAttempt, Promise.all) vs ${CONCURRENT} × one attempt / ${cores} cores`,
        ratio,
        '1.2',
        [
          `${CONCURRENT} at once: wall ${secs(median(many.map((t) => t.wall)))}, CPU ${secs(median(many.map((t) => t.cpu)))}; one: wall ${secs(median(one.map((t) => t.wall)))}, CPU ${secs(median(one.map((t) => t.cpu)))}; ideal ${secs(ideal)}; ${many.length} rounds`,
          `the last round's ${CONCURRENT} attempts: ${stepsLine(metas)}`,
        ],
      ),
    ];
  } finally {
    await server.close();
    scratch.dispose();
  }
}
