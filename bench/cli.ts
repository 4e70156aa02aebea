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
  ratioFigure,
} from './util.js';

/** `bare` run through the engine's npm launcher (`node node_modules/.bin/<engine> <the same argv>`, the same env). */
function npmLauncherCommand(bare: BareCommand, engine: string): BareCommand {
  const script = fs.realpathSync(path.join(root, 'node_modules', '.bin', engine));
  return {
    file: process.execPath,
    args: [script, ...bare.args],
    env: bare.env,
    ...(bare.freshHome ? { freshHome: bare.freshHome } : {}),
  };
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
      const sides: Side[] = [
        cliSide('cli', args, env, project),
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
        figures.push(
          ratioFigure(
            `cli ${engine}, npm launcher`,
            `agent-harness start (dist/, a fresh process) vs the same turn through the npm launcher node_modules/.bin/${engine} (what a user types)`,
            pairedRatio(cli, viaLauncher),
            '1.5',
            [
              sideBySide(cli, viaLauncher),
              `launcher: node ${launcher.args.map((arg, i) => (i === 0 ? path.relative(root, arg) : arg)).join(' ')} (the same env)`,
            ],
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
