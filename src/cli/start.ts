/**
 * `agent-harness start [options] <engine> [args…]` and the direct form `agent-harness <engine> [args…]`.
 */
import path from 'node:path';
import type { Command } from 'commander';
import type { ForkTarget } from '../cassette/mode.js';
import { AgentHarnessError } from '../errors/index.js';
import { engineIds } from '../engines/registry.js';
import type { AttemptRequest } from '../core/attempt-request.js';
import type { IoMode } from '../core/run-attempt.js';
import type { IsolationMode, ModelMode, TranslateMode } from '../protocol/index.js';
import { MAX_SEED_FILE_BYTES, readInputBytesSync } from '../runtime/bounded-input.js';
import type { EarlyInit } from '../runtime/isolation/early-init.js';
import { earlyInitFits } from '../runtime/isolation/mode.js';
import { resolveHarnessPaths } from '../runtime/paths.js';
import {
  collect,
  collectExpose,
  onlySkillsOf,
  EXPOSE_HELP,
  extractTranslateFlag,
  parseIsolationMode,
  parseForkTarget,
  parseModelMode,
  parsePace,
  parseTurnCount,
  parsePositiveInt,
  parseTrialNumber,
  parseTranslateMode,
} from './options.js';
import type { CliStreams } from './output.js';

/** Options of a start. */
export interface StartCommandOptions {
  translate?: TranslateMode;
  runDir?: string;
  model?: ModelMode | 'auto';
  cassette?: string;
  upstream?: string;
  pace?: number;
  /** `--lenient`: a cassette miss falls back to the scripted model. */
  lenient?: boolean;
  /** `--fork-at N`: replay N model turns, then the scripted model (or the live one: `--fork-to live`). */
  forkAt?: number;
  /** `--fork-to scripted|live`: who continues after `--fork-at`. */
  forkTo?: ForkTarget;
  /** `--fork-cassette FILE`: a live fork's conversation is recorded here. */
  forkCassette?: string;
  script?: string;
  prompt?: string;
  timeoutMs?: number;
  isolation?: IsolationMode;
  pty?: boolean;
  template?: string;
  file?: string[];
  git?: boolean;
  onlySkills?: string[];
  expose?: string[];
  /** `--trials N`: N audited attempts, each its own run, then their statistics (src/cli/start-trials.ts). */
  trials?: number;
  /** `--concurrency C`: trials running at once (with `--trials`). */
  concurrency?: number;
}

/** `DEST=SRC` of `--file`: the file SRC (read now) written at DEST in the run dir. */
function seedFiles(specs: readonly string[]): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  for (const spec of specs) {
    const at = spec.indexOf('=');
    if (at <= 0 || at === spec.length - 1)
      throw new AgentHarnessError(
        'USAGE_ERROR',
        `--file takes DEST=SRC (a path in the run dir = a file to copy), not ${JSON.stringify(spec)}.`,
      );
    const source = path.resolve(spec.slice(at + 1));
    files[spec.slice(0, at)] = readInputBytesSync(source, {
      what: `--file ${spec} source`,
      maxBytes: MAX_SEED_FILE_BYTES,
      unreadableCode: 'WORKSPACE_INVALID',
      tooLargeHint: 'Put large files in a --template directory instead of --file.',
    });
  }
  return files;
}

/**
 * Runs a start (used by `start` and by the direct `<engine>` form). `direct`: the args are the engine's whole
 * command line (seed 001, Decision 5) — even none at all, which opens the engine itself.
 */
export async function startCommand(
  streams: CliStreams,
  engine: string,
  rawArgs: readonly string[],
  options: StartCommandOptions,
  direct = false,
): Promise<number> {
  if (options.trials !== undefined) return startTrials(streams, engine, rawArgs, options, direct);
  if (options.concurrency !== undefined)
    throw new AgentHarnessError('USAGE_ERROR', '--concurrency bounds the trials of --trials N; add --trials N.');
  return withEarlyInit(options, (early) => runStart(streams, engine, rawArgs, options, direct, early));
}

/**
 * Runs `command` with the namespaces' init started first (a Node start of its own) where it fits: it boots while the
 * command loads what runs the attempt, which adopts it; whatever did not is killed when the command ends.
 */
export async function withEarlyInit<T>(
  options: Pick<StartCommandOptions, 'pty' | 'model' | 'isolation'>,
  command: (early: EarlyInit | null) => Promise<T>,
): Promise<T> {
  const early = earlyInitFits(cliShape(options))
    ? (await import('../runtime/isolation/early-init.js')).startEarlyInit()
    : null;
  try {
    return await command(early);
  } finally {
    early?.discard();
  }
}

/**
 * A start's (or resume's) attempt as early-init sees it. A terminal on every stream may make it a passthrough attempt
 * (`script`), whose init starts in its terminal.
 */
function cliShape(options: Pick<StartCommandOptions, 'pty' | 'model' | 'isolation'>) {
  const terminal = Boolean(options.pty) || Boolean(process.stdin.isTTY && process.stdout.isTTY && process.stderr.isTTY);
  return { split: !terminal, modelMode: options.model, isolation: options.isolation, env: process.env };
}

/** `--trials N`: the start run N times, each its own audited run, then the statistics (./start-trials.ts). */
async function startTrials(
  streams: CliStreams,
  engine: string,
  rawArgs: readonly string[],
  options: StartCommandOptions,
  direct: boolean,
): Promise<number> {
  const { runStartTrials } = await import('./start-trials.js');
  const { args, translate } = startTranslate(rawArgs, options);
  return runStartTrials(
    streams,
    {
      ...startRequest(engine, args, options, direct, translate),
      paths: resolveHarnessPaths(),
      ...(options.pty ? { io: 'pty' as const } : {}),
    },
    {
      trials: options.trials,
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      case: options.prompt ?? (args.length > 0 ? args.join(' ') : engine),
    },
  );
}

async function runStart(
  streams: CliStreams,
  engine: string,
  rawArgs: readonly string[],
  options: StartCommandOptions,
  direct: boolean,
  earlyInit: EarlyInit | null,
): Promise<number> {
  // Loaded here, not at the top: `--version` and `--help` must not load the run store, the engines or the model.
  const { chooseIo, runAttemptCommand } = await import('./attempt-command.js');
  // A replay reaches no upstream unless it forks onto the live model: a typed --upstream would be silently unused.
  if (options.model === 'replay' && options.upstream && options.forkTo !== 'live')
    throw new AgentHarnessError(
      'USAGE_ERROR',
      `--upstream ${options.upstream} is used by record, auto and a fork onto the live model (--fork-at N --fork-to live); a replay reaches no upstream.`,
    );
  const { args, translate } = startTranslate(rawArgs, options);
  const paths = resolveHarnessPaths();
  // The run finder (with the sealing of interrupted attempts and the protocol schemas it loads) only for --run-dir.
  const run = options.runDir
    ? await (await import('../core/session.js')).findRun(paths, { selector: options.runDir })
    : undefined;
  const io: IoMode | undefined = options.pty ? 'pty' : undefined;
  const { status } = await runAttemptCommand(
    streams,
    {
      ...startRequest(engine, args, options, direct, translate),
      earlyInit,
      paths,
      ...(run ? { run } : {}),
      io: chooseIo(translate, io),
    },
    'Start',
  );
  return status;
}

/** The engine args and the output view of a start (`--translate` may stand among the engine args). */
export function startTranslate(
  rawArgs: readonly string[],
  options: StartCommandOptions,
): { args: string[]; translate: TranslateMode } {
  const { args, translate: inlineTranslate } = extractTranslateFlag(rawArgs);
  return { args, translate: inlineTranslate ?? options.translate ?? 0 };
}

/** The attempt request of a start's options, without its run, paths, terminal wiring and early init. */
export function startRequest(
  engine: string,
  args: readonly string[],
  options: StartCommandOptions,
  direct: boolean,
  translate: TranslateMode,
): Omit<AttemptRequest, 'paths'> & { translateMode: TranslateMode } {
  return {
    engine,
    launch: 'start',
    prompt: options.prompt ?? null,
    passthrough: [...args],
    ...(direct && options.prompt === undefined ? { rawArgs: true } : {}),
    translateMode: translate,
    modelMode: options.model ?? 'scripted',
    ...(options.cassette
      ? {
          cassette: {
            path: options.cassette,
            ...(options.upstream ? { upstream: options.upstream } : {}),
            ...(options.pace !== undefined ? { pace: options.pace } : {}),
            ...(options.lenient ? { strict: false } : {}),
            ...(options.forkAt !== undefined ? { forkAt: options.forkAt } : {}),
            ...(options.forkTo ? { forkTo: options.forkTo } : {}),
            ...(options.forkCassette ? { forkCassette: options.forkCassette } : {}),
          },
        }
      : {}),
    script: options.script ?? null,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.isolation ? { isolation: options.isolation } : {}),
    ...(options.expose ? { expose: options.expose } : {}),
    ...onlySkillsOf(options.onlySkills),
    ...(options.template || options.file || options.git === false
      ? {
          workspace: {
            ...(options.template ? { template: options.template } : {}),
            ...(options.file ? { files: seedFiles(options.file) } : {}),
            ...(options.git === false ? { git: false } : {}),
          },
        }
      : {}),
  };
}

/** Adds the options every start-like command takes. */
export function addStartOptions(command: Command): Command {
  return command
    .option(
      '--translate <mode>',
      'output view: 0 raw, 1 RASP, 2 FCMP, 3 markdown (never passed to the engine)',
      parseTranslateMode,
    )
    .option('--run-dir <selector>', 'add the attempt to an existing run (path, run id or handle)')
    .option(
      '--model <mode>',
      'scripted (default: the built-in model on 127.0.0.1), live (the vendor, with your key), or with --cassette: record, replay, auto (replay if the cassette exists, else record)',
      parseModelMode,
    )
    .option('--cassette <file>', 'the cassette to record or replay (--model record|replay|auto; see docs/cassettes.md)')
    .option(
      '--upstream <url>',
      'record (or fork live) against this origin instead of the vendor (the request path is kept)',
    )
    .option('--pace <factor>', 'replay at the recorded pace times FACTOR (default 0: as fast as possible)', parsePace)
    .option('--lenient', 'replay: a request the cassette lacks falls back to the scripted model (--script)')
    .option(
      '--fork-at <n>',
      'replay the first N model turns, then continue on the scripted model (--script) or the live one (--fork-to)',
      parseTurnCount,
    )
    .option(
      '--fork-to <target>',
      'after --fork-at: scripted (default) or live (the vendor or --upstream, with your key)',
      parseForkTarget,
    )
    .option('--fork-cassette <file>', 'with --fork-to live: record the forked conversation into this new cassette')
    .option('--script <file>', 'JSON model script for the scripted model (see docs/scripted-model.md)')
    .option('--prompt <text>', "prompt for the engine's default headless command, when no engine args are given")
    .option(
      '--timeout-ms <ms>',
      'kill the engine after this many milliseconds (default 600000)',
      parsePositiveInt('--timeout-ms'),
    )
    .option(
      '--isolation <mode>',
      'namespaces for the engine: auto (default; fall back with a warning where unavailable), require (refuse without them), off',
      parseIsolationMode,
    )
    .option('--expose <path[:ro]>', EXPOSE_HELP, collectExpose)
    .option('--pty', 'run the engine in a pseudo-terminal (one merged stream)')
    .option(
      '--template <dir>',
      'copy DIR into the new run dir before the engine starts (a git repo with one commit, unless --no-git)',
    )
    .option(
      '--file <dest=src>',
      'write file SRC at DEST in the new run dir before the engine starts (repeatable)',
      collect,
    )
    .option('--no-git', 'with --template: do not make the run dir a git repository')
    .option('--only-skills <names>', 'inject only these skills (comma-separated, repeatable)', collect)
    .option(
      '--trials <n>',
      'run the start N times, each its own audited run, and print the pass rate with its Wilson 95% interval (docs/evals.md)',
      parseTrialNumber,
    )
    .option('--concurrency <c>', 'with --trials: trials running at once (default 4)', parseTrialNumber);
}

/** Registers `start`. */
export function registerStart(program: Command, streams: CliStreams, setExit: (code: number) => void): void {
  addStartOptions(
    program
      .command('start')
      .description('start a new session of an engine in a managed run directory')
      .argument('<engine>', `the engine: ${engineIds().join(', ')}`)
      .argument('[args...]', 'engine arguments, passed through in order')
      .passThroughOptions(),
  )
    .addHelpText(
      'after',
      `
Examples:
  agent-harness start --translate 3 --prompt "Use the demo-hello skill" codex
  agent-harness start --translate 2 codex exec --json --skip-git-repo-check "say hi"
  agent-harness start --template fixtures/repos/changelog --file data.csv=./data.csv codex exec --json "Update the changelog"
  agent-harness start --only-skills csv-stats --script my-script.json --prompt "Summarize data.csv" claude
  agent-harness start --trials 10 --concurrency 2 --script my-script.json --prompt "Summarize data.csv" codex

Trials (--trials N): N attempts of the same start, each its own run directory and audit (a --script is seeded
seed+i for trial i; a --cassette becomes NAME.trial-<i>.json per trial). A line per trial (passed, or failed with
its classified cause and its run), then n, passes, the pass rate with its Wilson 95% interval, flaky, and the
infrastructure and engine failures counted apart. A trial passes when its attempt completes with exit status 0.
Exit status 0 when every trial passed, 1 otherwise. See docs/evals.md.`,
    )
    .action(async (engine: string, args: string[], options: StartCommandOptions) => {
      // Harness options may also stand before `start` (as before an engine name); those after it win.
      setExit(await startCommand(streams, engine, args, { ...program.opts<StartCommandOptions>(), ...options }));
    });
}
