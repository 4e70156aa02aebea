import path from 'node:path';
import { runAttempt } from '../src/core/run-attempt.js';
import type { AttemptRequest } from '../src/core/attempt-request.js';
import { startModelServer } from '../src/engines/model-server.js';
import { resolveHarnessPaths } from '../src/runtime/paths.js';
import {
  attemptSide,
  harnessEnv,
  pairedRatio,
  pairedRounds,
  projectDir,
  Scratch,
  sideBySide,
  stepsLine,
  timedAttempt,
  type Figure,
  ratioFigure,
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
    const series = await pairedRounds(
      [
        attemptSide('replay', () => timedAttempt({ ...base, modelMode: 'replay', cassette: { path: cassette } })),
        attemptSide('scripted', () => timedAttempt({ ...base, modelMode: 'scripted' })),
      ],
      rounds,
    );
    const [replay, scripted] = [series.get('replay')!, series.get('scripted')!];
    const ratio = pairedRatio(replay, scripted);
    return [
      ratioFigure(
        'replay',
        'codex attempt replayed from a cassette vs the scripted attempt of the same conversation (runAttempt)',
        ratio,
        '1.10',
        [sideBySide(replay, scripted), stepsLine(replay.metas)],
      ),
    ];
  } finally {
    await vendor.close();
    scratch.dispose();
  }
}
