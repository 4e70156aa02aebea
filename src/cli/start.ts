/**
 * `agent-harness start [options] <engine> [args…]` and the direct form `agent-harness <engine> [args…]`.
 */
import type { Command } from 'commander';
import type { IoMode } from '../core/run-attempt.js';
import type { ModelMode, TranslateMode } from '../protocol/index.js';
import { resolveHarnessPaths } from '../runtime/paths.js';
import { resolveRunSelector } from '../runtime/run-store.js';
import { runAttemptCommand } from './attempt-command.js';
import { chooseIo } from './attempt-command.js';
import { extractTranslateFlag, parseModelMode, parsePositiveInt, parseTranslateMode } from './options.js';
import type { CliStreams } from './output.js';

/** Options of a start. */
export interface StartCommandOptions {
  translate?: TranslateMode;
  runDir?: string;
  model?: ModelMode;
  script?: string;
  prompt?: string;
  timeoutMs?: number;
  pty?: boolean;
}

/**
 * Runs a start (used by `start` and by the direct `<engine>` form). `direct`: the args are the engine's whole
 * command line (seed 001, Decision 5) — even none at all, which opens the engine itself.
 */
export async function startCommand(streams: CliStreams, engine: string, rawArgs: readonly string[], options: StartCommandOptions, direct = false): Promise<number> {
  const { args, translate: inlineTranslate } = extractTranslateFlag(rawArgs);
  const translate = inlineTranslate ?? options.translate ?? 0;
  const paths = resolveHarnessPaths();
  const run = options.runDir ? await resolveRunSelector(paths.runRoot, options.runDir) : undefined;
  const io: IoMode | undefined = options.pty ? 'pty' : undefined;
  const { status } = await runAttemptCommand(streams, {
    paths,
    engine,
    launch: 'start',
    ...(run ? { run } : {}),
    prompt: options.prompt ?? null,
    passthrough: args,
    ...(direct && options.prompt === undefined ? { rawArgs: true } : {}),
    translateMode: translate,
    modelMode: options.model ?? 'scripted',
    script: options.script ?? null,
    io: chooseIo(translate, io),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  }, 'Start');
  return status;
}

/** Adds the options every start-like command takes. */
export function addStartOptions(command: Command): Command {
  return command
    .option('--translate <mode>', 'output view: 0 raw, 1 RASP, 2 FCMP, 3 markdown (never passed to the engine)', parseTranslateMode)
    .option('--run-dir <selector>', 'add the attempt to an existing run (path, run id or handle)')
    .option('--model <mode>', 'scripted (default: the built-in model on 127.0.0.1) or live (the vendor, with your key)', parseModelMode)
    .option('--script <file>', 'JSON model script for the scripted model (see README)')
    .option('--prompt <text>', "prompt for the engine's default headless command, when no engine args are given")
    .option('--timeout-ms <ms>', 'kill the engine after this many milliseconds (default 600000)', parsePositiveInt('--timeout-ms'))
    .option('--pty', 'run the engine in a pseudo-terminal (one merged stream)');
}

/** Registers `start`. */
export function registerStart(program: Command, streams: CliStreams, setExit: (code: number) => void): void {
  addStartOptions(
    program
      .command('start')
      .description('start a new session of an engine in a managed run directory')
      .argument('<engine>', 'codex, claude, gemini, opencode or iflow')
      .argument('[args...]', 'engine arguments, passed through in order')
      .passThroughOptions(),
  )
    .addHelpText('after', `
Examples:
  agent-harness start --translate 3 --prompt "Use the demo-hello skill" codex
  agent-harness start --translate 2 codex exec --json --skip-git-repo-check "say hi"
  agent-harness start --script fixtures/scripts/demo.json --translate 3 --prompt "go" codex`)
    .action(async (engine: string, args: string[], options: StartCommandOptions) => {
      // Harness options may also stand before `start` (as before an engine name); those after it win.
      setExit(await startCommand(streams, engine, args, { ...program.opts<StartCommandOptions>(), ...options }));
    });
}
