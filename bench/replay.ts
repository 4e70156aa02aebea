/**
 * Figure 6, `replay` (issue 31): a codex attempt replayed from a cassette against a scripted attempt of the same
 * conversation, both through runAttempt in this process, each starting its own model server (a cassette needs the
 * attempt's own server, so the scripted side starts one too: the figure is what replaying costs, not server sharing).
 * The cassette is recorded once, first, through the harness against a second local scripted server playing the
 * vendor (`upstream`, a placeholder key in the environment). Paired rounds; the figure is the median of the
 * per-round wall ratios.
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runAttempt } from '../src/core/run-attempt.js';
import type { AttemptRequest } from '../src/core/attempt-request.js';
import { startModelServer } from '../src/model/index.js';
import { resolveHarnessPaths } from '../src/runtime/paths.js';
import {
  harnessEnv,
  measure,
  pairedRatio,
  pairedRounds,
  projectDir,
  readMeta,
  Scratch,
  sideBySide,
  stepsLine,
  type Figure,
  type Side,
} from './util.js';

/** Measures figure 6 over `rounds` paired rounds. */
export async function benchReplay(rounds: number): Promise<Figure[]> {
  const scratch = new Scratch('replay');
  const vendor = await startModelServer({});
  try {
    const hostEnv = { ...harnessEnv(scratch), OPENAI_API_KEY: 'sk-bench-recording-key' };
    const project = projectDir(scratch);
    const paths = resolveHarnessPaths({ cwd: project, env: hostEnv });
    const cassette = path.join(scratch.root, 'codex-hi.cassette.json');
    const base: AttemptRequest = { paths, engine: 'codex', launch: 'start', prompt: 'hi', label: 'bench', hostEnv };
    const recorded = await runAttempt({
      ...base,
      modelMode: 'record',
      cassette: { path: cassette, upstream: vendor.url },
    });
    if (recorded.error) throw recorded.error;
    /** One attempt of `request`, its run directory removed after reading its meta. */
    const attempt = (request: AttemptRequest) => async () => {
      const started = performance.now();
      const result = await runAttempt(request);
      const wall = performance.now() - started;
      if (result.error) throw result.error;
      const meta = readMeta(result.runDir, result.attempt);
      fs.rmSync(result.runDir, { recursive: true, force: true });
      return { wall, meta };
    };
    const side = (name: string, request: AttemptRequest): Side => ({
      name,
      run: async () => {
        const { timing, value } = await measure(attempt(request));
        return { timing: { ...timing, wall: value.wall }, meta: value.meta };
      },
    });
    const series = await pairedRounds(
      [
        side('replay', { ...base, modelMode: 'replay', cassette: { path: cassette } }),
        side('scripted', { ...base, modelMode: 'scripted' }),
      ],
      rounds,
    );
    const [replay, scripted] = [series.get('replay')!, series.get('scripted')!];
    const ratio = pairedRatio(replay, scripted);
    return [
      {
        name: 'replay',
        what: 'codex attempt replayed from a cassette vs the scripted attempt of the same conversation (runAttempt)',
        value: `${ratio.toFixed(2)}×`,
        target: '≤ 1.10×',
        pass: ratio <= 1.1,
        detail: [sideBySide(replay, scripted), stepsLine(replay.metas)],
      },
    ];
  } finally {
    await vendor.close();
    scratch.dispose();
  }
}
