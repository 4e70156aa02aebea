/**
 * The `agent-harness` command. Its static import graph stays small (commander, errors, the command definitions):
 * every command loads what it runs inside its action, so `--version`, `--help`, `runs` and `translate` never load
 * the model server, the PTY module or the engines they do not use (issue 13).
 */
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import { engineIds } from '../engines/registry.js';
import { PACKAGE_ROOT } from '../runtime/executables.js';
import { registerAcp } from './acp.js';
import { registerDemo } from './demo.js';
import { registerDoctor } from './doctor.js';
import { reportCliError } from './errors.js';
import { registerExport } from './export.js';
import { registerModel } from './model.js';
import type { CliStreams } from './output.js';
import { registerReport } from './report.js';
import { registerResume } from './resume.js';
import { registerRuns } from './runs.js';
import { registerTranslate } from './translate.js';
import { registerView } from './view.js';
import { addStartOptions, registerStart, startCommand, type StartCommandOptions } from './start.js';

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/** The harness options given on the command line before any command, as flags (`--timeout-ms`). */
function givenHarnessOptions(program: Command): string[] {
  return Object.keys(program.opts())
    .filter((key) => program.getOptionValueSource(key) === 'cli')
    .map((key) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
}

/** Builds the program. `setExit` records the exit status an action wants. */
export function buildProgram(streams: CliStreams, setExit: (code: number) => void): Command {
  // The engine subcommands: one per registered engine (the registry loads no engine to list them).
  const ENGINE_COMMANDS: readonly string[] = engineIds();
  const program = new Command('agent-harness')
    .description('Run real coding-agent CLIs in a managed, audited environment against a scripted model on 127.0.0.1.')
    .version(packageVersion())
    .enablePositionalOptions()
    // Errors are printed once, by reportCliError (with their code and hint), never also by commander.
    .configureOutput({
      writeOut: (s) => streams.stdout.write(s),
      writeErr: (s) => streams.stderr.write(s),
      outputError: () => undefined,
    })
    .exitOverride();
  // Harness options of the direct form go before the engine name (`agent-harness --timeout-ms 5000 claude -p hi`):
  // after it, every argument is the engine's own (seed 001, Decision 5).
  addStartOptions(program);
  program.hook('preAction', (_program, action) => {
    const given = givenHarnessOptions(program);
    if (
      given.length > 0 &&
      !(ENGINE_COMMANDS as readonly string[]).includes(action.name()) &&
      action.name() !== 'start'
    ) {
      throw new AgentHarnessError(
        'USAGE_ERROR',
        `The harness options before a command name (${given.join(', ')}) apply to engine runs only, not to \`${action.name()}\`.`,
      );
    }
  });
  registerStart(program, streams, setExit);
  registerResume(program, streams, setExit);
  registerRuns(program, streams);
  registerDoctor(program, streams, setExit);
  registerModel(program);
  registerDemo(program, streams, setExit);
  registerTranslate(program, streams, setExit);
  registerReport(program, streams, setExit);
  registerView(program, streams, setExit);
  registerExport(program, streams, setExit);
  registerAcp(program, streams, setExit, packageVersion());
  for (const engine of ENGINE_COMMANDS) {
    program
      .command(engine)
      .description(
        `run ${engine} with exactly these arguments inside the managed env; harness options go before "${engine}", --translate N anywhere`,
      )
      .argument('[args...]', `${engine}'s own command line, passed through verbatim and in order`)
      .passThroughOptions()
      .allowUnknownOption()
      .allowExcessArguments()
      .helpOption(false)
      .action(async (args: string[]) => {
        setExit(await startCommand(streams, engine, args, program.opts<StartCommandOptions>(), true));
      });
  }
  program.addHelpText(
    'after',
    `
Quick start:
  agent-harness demo                         real codex + the demo skill on the scripted model
  agent-harness start --translate 3 --prompt "hi" codex
  agent-harness claude --model sonnet -p "hi"   the direct form: claude gets exactly these arguments
  agent-harness --timeout-ms 60000 --translate 3 codex exec --json "hi"   harness options before the engine
  agent-harness resume <handle> "next message"
  agent-harness runs                         list runs and their handles
  agent-harness translate <handle> --summary  replay a run's recorded output through the parsers
  agent-harness report --baseline base.json  consistency report of runs; exit 1 on a regression
  agent-harness export --format atif <handle>  an attempt as an ATIF trajectory (or --format otlp: spans)
  agent-harness doctor                       paths, env and self-checks
  agent-harness acp codex                    serve codex to an editor over the Agent Client Protocol (stdio)

Errors print "agent-harness: error CODE: message" and a hint; exit status 2 = usage, 1 = other failures.`,
  );
  return program;
}

/**
 * A reader that went away (`agent-harness runs | head -3`) is not an error of the command: what it would still have
 * printed is dropped, and the command finishes its work (an attempt is still sealed and recorded) instead of dying on
 * an unhandled EPIPE with a stack trace.
 */
function toleratePipeClose(stream: NodeJS.WritableStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (!isClosedOutput(error)) throw error;
  });
}

/** True for the error of a write to a pipe whose reader is gone (itself, or as the cause of a wrapped error). */
function isClosedOutput(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED') return true;
  }
  return false;
}

/** Runs the CLI with `argv` (without node and script); resolves the exit status. */
export async function runCli(
  argv: readonly string[],
  streams: CliStreams = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  for (const stream of [streams.stdout, streams.stderr])
    if (stream === process.stdout || stream === process.stderr) toleratePipeClose(stream);
  let exitCode = 0;
  const program = buildProgram(streams, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    // `translate … | head`: the reader took what it wanted; stopping there is the command's normal end.
    if (isClosedOutput(error)) return exitCode;
    if (error instanceof CommanderError) {
      // Harness options and no command after them (`--expose codex`: the path forgotten, the engine taken for it).
      const given = error.code === 'commander.help' ? givenHarnessOptions(program) : [];
      if (given.length > 0)
        return reportCliError(
          new AgentHarnessError(
            'USAGE_ERROR',
            `The harness options ${given.join(', ')} were given, but no engine or command after them (did an option take the engine's name as its value?).`,
          ),
          streams.stderr,
        );
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
      )
        return 0;
      return reportCliError(
        new AgentHarnessError('USAGE_ERROR', error.message.replace(/^error: /, '')),
        streams.stderr,
      );
    }
    return reportCliError(error, streams.stderr);
  }
}
