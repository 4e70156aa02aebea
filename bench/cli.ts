/**
 * Figure 2, `cli`: the command in a fresh process, as a CI job runs it (`node bin/agent-harness.js start --prompt hi
 * <engine>`, dist/, CI=true, its own model server), against the bare turn of the same engine: the command the
 * harness ran (for codex its native binary), with the argv and environment it gave the engine, against a model
 * server in this process, in the first attempt's run directory, without namespaces. One figure per engine whose CLI is installed;
 * paired rounds, the median of the per-round wall ratios. For codex also against the same turn through its npm
 * launcher (`node_modules/.bin/codex exec …`, what a user types; issue 44's yardstick).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ModelServer } from '../src/model/index.js';
import { startModelServer } from '../src/engines/model-server.js';
import {
  bareCommand,
  bareLine,
  bin,
  firstAttempt,
  harnessEnv,
  measure,
  median,
  outsideLine,
  pairedRatio,
  pairedRounds,
  projectDir,
  readMeta,
  requireCurrentDist,
  root,
  runBare,
  runDirOf,
  runProcess,
  Scratch,
  sideBySide,
  stepsLine,
  type BareCommand,
  type Figure,
  type Side,
  type Timing,
  ratioFigure,
} from './util.js';

/** `bare` run through the engine's npm launcher (`node node_modules/.bin/<engine> <the same argv>`, the same env). */
function npmLauncherCommand(bare: BareCommand, engine: string): BareCommand {
  const script = fs.realpathSync(path.join(root, 'node_modules', '.bin', engine));
  return { ...bare, file: process.execPath, args: [script, ...bare.args] };
}

/**
 * The floor under the codex figures, in fresh processes: Node's own start (`node -e 0`), the command loaded with
 * nothing run (`agent-harness --version`: Node plus loading dist/), and the npm launcher against the native binary it
 * starts (`--version` each): what a start pays before any of its work, and what the launcher adds to the yardstick.
 */
async function floorLine(
  bare: BareCommand,
  launcherScript: string,
  env: NodeJS.ProcessEnv,
  rounds: number,
): Promise<string> {
  const timed = (name: string, file: string, args: string[]): Side => ({
    name,
    run: async () => ({ timing: (await measure(() => runProcess(file, args, { env, cwd: root }))).timing }),
  });
  const series = await pairedRounds(
    [
      timed('node', process.execPath, ['-e', '0']),
      timed('command', process.execPath, [bin, '--version']),
      timed('launcher', process.execPath, [launcherScript, '--version']),
      timed('native', bare.file, ['--version']),
    ],
    rounds,
  );
  const ms = (name: string, key: keyof Timing): string =>
    median(series.get(name)!.timings.map((t) => t[key])).toFixed(0);
  const both = (name: string): string => `${ms(name, 'wall')} ms (CPU ${ms(name, 'cpu')})`;
  return `floor, median wall of fresh processes: node -e 0 ${both('node')}; agent-harness --version ${both('command')}; the npm launcher's codex --version ${both('launcher')} vs the native binary's ${both('native')}`;
}

/** The engines measured, when `node_modules/.bin/<engine>` exists (AH_BENCH_ENGINES=codex,claude picks some). */
const ENGINES = process.env.AH_BENCH_ENGINES?.split(',') ?? ['codex', 'claude', 'gemini', 'opencode'];

/** One `agent-harness start` in a fresh process, timed; its run directory is removed after reading its meta. */
export function cliSide(
  name: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  keepRun = false,
): Side {
  return {
    name,
    run: async () => {
      const { timing, value } = await measure(() => runProcess(process.execPath, [bin, ...args], { env, cwd }));
      const runDir = runDirOf(value);
      const meta = readMeta(runDir);
      if (!keepRun) fs.rmSync(runDir, { recursive: true, force: true });
      return { timing, meta };
    },
  };
}

/** Measures figure 2 for every installed engine over `rounds` paired rounds each. */
export async function benchCli(rounds: number): Promise<Figure[]> {
  requireCurrentDist();
  const figures: Figure[] = [];
  for (const engine of ENGINES) {
    if (!fs.existsSync(path.join(root, 'node_modules', '.bin', engine))) {
      console.log(`  ${engine}: not installed, skipped`);
      continue;
    }
    console.log(`  ${engine}:`);
    const scratch = new Scratch(`cli-${engine}`);
    let server: ModelServer | null = null;
    try {
      const [args, env, project] = [['start', '--prompt', 'hi', engine], harnessEnv(scratch), projectDir(scratch)];
      // The first attempt (kept) writes the engine config the bare turns reuse, tells their command and is their cwd.
      const first = await firstAttempt(scratch, engine, env, project);
      server = await startModelServer({});
      const bare = bareCommand(first, server.url);
      // What a user types for codex is its npm launcher (a Node script that finds and starts the native binary,
      // which the harness starts directly): the same argv and environment through node_modules/.bin/codex.
      const launcher = engine === 'codex' ? npmLauncherCommand(bare, engine) : null;
      // Containment is measured apart (the library's containment figure): for codex also the command with
      // `--isolation off`, what the command itself costs over what a user types.
      const argsOff = ['start', '--isolation', 'off', '--prompt', 'hi', engine];
      const sides: Side[] = [
        cliSide('cli', args, env, project),
        ...(launcher ? [cliSide('cli-off', argsOff, env, project)] : []),
        { name: 'bare', run: async () => ({ timing: await runBare(bare, first.meta.command.cwd) }) },
        ...(launcher
          ? [{ name: 'launcher', run: async () => ({ timing: await runBare(launcher, first.meta.command.cwd) }) }]
          : []),
      ];
      const series = await pairedRounds(sides, rounds);
      const [cli, reference] = [series.get('cli')!, series.get('bare')!];
      const ratio = pairedRatio(cli, reference);
      if (launcher) {
        const viaLauncher = series.get('launcher')!;
        const floor = await floorLine(bare, launcher.args[0]!, env, rounds);
        figures.push(
          ratioFigure(
            `cli ${engine}, npm launcher`,
            `agent-harness start (dist/, a fresh process) vs the same turn through the npm launcher node_modules/.bin/${engine} (what a user types)`,
            pairedRatio(cli, viaLauncher),
            '1.5',
            [
              sideBySide(cli, viaLauncher),
              `launcher: node ${launcher.args.map((arg, i) => (i === 0 ? path.relative(root, arg) : arg)).join(' ')} (the same env)`,
              floor,
            ],
          ),
        );
        const off = series.get('cli-off')!;
        figures.push(
          ratioFigure(
            `cli ${engine}, npm launcher, isolation off`,
            `the same with --isolation off: the command's own cost over what a user types, its containment measured apart (the containment figure)`,
            pairedRatio(off, viaLauncher),
            '1.5',
            [sideBySide(off, viaLauncher), stepsLine(off.metas), outsideLine(off)].filter(Boolean),
          ),
        );
      }
      figures.push(
        ratioFigure(
          `cli ${engine}`,
          `agent-harness start (dist/, a fresh process) vs the bare ${engine} turn`,
          ratio,
          '1.5',
          [sideBySide(cli, reference), bareLine(bare), stepsLine(cli.metas), outsideLine(cli)].filter(Boolean),
        ),
      );
    } finally {
      await server?.close();
      scratch.dispose();
    }
  }
  return figures;
}
