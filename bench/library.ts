/**
 * Figure 1, `library`: an attempt through the library (runAttempt in this process, as a Vitest fixture or a provider
 * query runs it: one model server shared by the attempts, CI=true in the environment) against the bare native codex
 * turn: the binary the harness started, with its argv and environment, against the same model server, in the first
 * attempt's run directory, without namespaces. Paired rounds; the figure is the median of the per-round wall ratios.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { runAttempt } from '../src/core/run-attempt.js';
import { startModelServer, type ModelServer } from '../src/model/index.js';
import { resolveHarnessPaths } from '../src/runtime/paths.js';
import {
  bareCommand,
  bareLine,
  firstAttempt,
  harnessEnv,
  measure,
  pairedRatio,
  pairedRounds,
  projectDir,
  readMeta,
  runBare,
  Scratch,
  sideBySide,
  stepsLine,
  type AttemptMeta,
  type Figure,
  type Side,
} from './util.js';

/** In-process codex attempts as a fixture runs them (`hostEnv`, `project`): each a new run, removed after. */
export function libraryAttempts(
  hostEnv: NodeJS.ProcessEnv,
  project: string,
  server: ModelServer,
): () => Promise<{ wall: number; meta: AttemptMeta }> {
  const paths = resolveHarnessPaths({ cwd: project, env: hostEnv });
  return async () => {
    const started = performance.now();
    const result = await runAttempt({
      paths,
      engine: 'codex',
      launch: 'start',
      prompt: 'hi',
      label: 'bench',
      modelMode: 'scripted',
      modelServer: server,
      hostEnv,
    });
    const wall = performance.now() - started;
    if (result.error) throw result.error;
    if (result.exitCode !== 0) throw new Error(`bench: codex attempt exited ${result.exitCode}; see ${result.runDir}`);
    const meta = readMeta(result.runDir, result.attempt);
    fs.rmSync(result.runDir, { recursive: true, force: true });
    return { wall, meta };
  };
}

/** Measures figure 1 over `rounds` paired rounds. */
export async function benchLibrary(rounds: number): Promise<Figure[]> {
  const scratch = new Scratch('library');
  const server = await startModelServer({});
  try {
    const hostEnv = harnessEnv(scratch);
    const project = projectDir(scratch);
    const attempt = libraryAttempts(hostEnv, project, server);
    const first = await firstAttempt(scratch, 'codex', hostEnv, project, server);
    if (!first.meta.command.launcher)
      console.log(
        `  note: the harness ran ${first.meta.command.executable} as it is, not the native binary for codex's npm launcher`,
      );
    const bare = bareCommand(first, server.url);
    const sides: Side[] = [
      {
        name: 'library',
        run: async () => {
          const { timing, value } = await measure(attempt);
          return { timing: { ...timing, wall: value.wall }, meta: value.meta };
        },
      },
      { name: 'bare', run: async () => ({ timing: await runBare(bare, first.meta.command.cwd) }) },
    ];
    const series = await pairedRounds(sides, rounds);
    const [library, reference] = [series.get('library')!, series.get('bare')!];
    const ratio = pairedRatio(library, reference);
    return [
      {
        name: 'library',
        what: 'codex attempt through runAttempt in-process vs the bare native codex turn',
        value: `${ratio.toFixed(2)}×`,
        target: '≤ 1.10×',
        pass: ratio <= 1.1,
        detail: [sideBySide(library, reference), bareLine(bare), stepsLine(library.metas)],
      },
    ];
  } finally {
    await server.close();
    scratch.dispose();
  }
}
