import type { ModelServer } from '../src/model/index.js';
import { startModelServer } from '../src/engines/model-server.js';
import { resolveHarnessPaths } from '../src/runtime/paths.js';
import {
  attemptSide,
  bareCommand,
  bareLine,
  bareMountPlan,
  runBareNamespaced,
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
  ratioFigure,
  median,
  pairedDifference,
  secs,
} from './util.js';
import { containmentFloorSides } from './containment-floor.js';

/**
 * In-process codex attempts as a fixture runs them (`hostEnv`, `project`): each a new run, removed after, on its own
 * lane of the shared server (as the fixtures give each run one: its requests are its own, not every attempt's since
 * it began). `isolation` `off`: on the host's network, processes and filesystem (what the harness itself costs,
 * without its namespaces).
 */
export function libraryAttempts(
  hostEnv: NodeJS.ProcessEnv,
  project: string,
  server: ModelServer,
  isolation?: 'off',
): () => Promise<{ wall: number; meta: AttemptMeta }> {
  const paths = resolveHarnessPaths({ cwd: project, env: hostEnv });
  return async () => {
    const lane = server.openLane();
    try {
      return await timedAttempt({
        paths,
        engine: 'codex',
        launch: 'start',
        prompt: 'hi',
        label: 'bench',
        modelMode: 'scripted',
        modelServer: lane,
        hostEnv,
        ...(isolation ? { isolation } : {}),
      });
    } finally {
      lane.close();
    }
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
    const plan = bareMountPlan(first);
    const sides: Side[] = [
      attemptSide('library', attempt),
      attemptSide('unisolated', libraryAttempts(hostEnv, project, server, 'off')),
      { name: 'bare', run: async () => ({ timing: await runBare(bare, first.meta.command.cwd) }) },
      {
        name: 'namespaced',
        run: async () => ({ timing: await runBareNamespaced(bare, first.meta.command.cwd, plan, server.url) }),
      },
      ...containmentFloorSides(plan, scratch),
    ];
    const series = await pairedRounds(sides, rounds);
    const [library, unisolated, reference, namespaced] = [
      series.get('library')!,
      series.get('unisolated')!,
      series.get('bare')!,
      series.get('namespaced')!,
    ];
    const ratio = pairedRatio(library, reference);
    const own = pairedRatio(unisolated, reference);
    const [floor, bareTrue] = [series.get('floor')!, series.get('true')!];
    const floorMs = pairedDifference(floor, bareTrue);
    // Containment alone: the contained attempt less the same attempt without namespaces, round by round.
    const containmentMs = pairedDifference(library, unisolated);
    const wall = (s: typeof library) => median(s.timings.map((t) => t.wall));
    // What the library target leaves for containment: 1.10 × the bare turn, less the attempt without namespaces.
    const budgetMs = 1.1 * wall(reference) - wall(unisolated);
    return [
      ratioFigure(
        'library',
        'codex attempt through runAttempt in-process vs the bare native codex turn',
        ratio,
        '1.10',
        [sideBySide(library, reference), bareLine(bare), stepsLine(library.metas)],
      ),
      ratioFigure(
        'library, isolation off',
        'the same attempt without its namespaces (`isolation: off`): what the harness itself costs',
        own,
        '1.10',
        [sideBySide(unisolated, reference), stepsLine(unisolated.metas)],
      ),
      ratioFigure(
        'library, in namespaces',
        'the same attempt vs the bare turn run in the same namespaces (the init, its network, the agent filesystem): what the harness costs on top of its isolation',
        pairedRatio(library, namespaced),
        '1.10',
        [sideBySide(library, namespaced)],
      ),
      {
        name: 'containment',
        what: 'the same attempt contained minus the attempt with `isolation: off`: what its namespaces, init and agent filesystem add',
        value: `${containmentMs >= 0 ? '+' : ''}${containmentMs.toFixed(0)} ms`,
        target: '≤ +60 ms',
        pass: containmentMs <= 60,
        detail: [
          sideBySide(library, unisolated),
          `its floor with standard tools alone (the containment floor below): +${floorMs.toFixed(0)} ms`,
        ],
      },
      {
        name: 'namespaces alone',
        what: 'the bare turn in the namespaces an attempt gets (the isolation module only) vs the bare turn: what containment costs a turn',
        value: `${pairedRatio(namespaced, reference).toFixed(2)}×`,
        target: '—',
        pass: null,
        detail: [sideBySide(namespaced, reference)],
      },
      {
        name: 'containment floor',
        what: 'the same namespaces and agent filesystem set up by standard tools alone (unshare, sh, mount, ip; no init, no model forward), around /bin/true: the least containment can cost',
        value: `+${floorMs.toFixed(0)} ms`,
        target: '—',
        pass: null,
        detail: [
          `wall ${secs(wall(floor))} vs ${secs(wall(bareTrue))} (/bin/true alone), ${floor.timings.length} pairs`,
          `what the library target leaves for containment: 1.10 × ${secs(wall(reference))} (bare) − ${secs(wall(unisolated))} (isolation off) = ${budgetMs.toFixed(0)} ms`,
        ],
      },
    ];
  } finally {
    await server.close();
    scratch.dispose();
  }
}
