import { startModelServer, type ModelServer } from '../src/model/index.js';
import { resolveHarnessPaths } from '../src/runtime/paths.js';
import {
  attemptSide,
  bareCommand,
  bareLine,
  firstAttempt,
  harnessEnv,
  pairedRatio,
  pairedRounds,
  projectDir,
  runBare,
  Scratch,
  sideBySide,
  timedAttempt,
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
  return () =>
    timedAttempt({
      paths,
      engine: 'codex',
      launch: 'start',
      prompt: 'hi',
      label: 'bench',
      modelMode: 'scripted',
      modelServer: server,
      hostEnv,
    });
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
      attemptSide('library', attempt),
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
