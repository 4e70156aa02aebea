/**
 * The `agent-harness` command.
 */
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AgentHarnessError } from '../errors/index.js';
import { ENGINE_IDS } from '../protocol/index.js';
import { PACKAGE_ROOT } from '../runtime/executables.js';
import { registerDemo } from './demo.js';
import { registerDoctor } from './doctor.js';
import { reportCliError } from './errors.js';
import { registerModel } from './model.js';
import type { CliStreams } from './output.js';
import { registerReport } from './report.js';
import { registerResume } from './resume.js';
import { registerRuns } from './runs.js';
import { registerTranslate } from './translate.js';
import { addStartOptions, registerStart, startCommand, type StartCommandOptions } from './start.js';

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/** Builds the program. `setExit` records the exit status an action wants. */
export function buildProgram(streams: CliStreams, setExit: (code: number) => void): Command {
  const program = new Command('agent-harness')
    .description('Run real coding-agent CLIs in a managed, audited environment against a scripted model on 127.0.0.1.')
    .version(packageVersion())
    .enablePositionalOptions()
    // Commander's own error line is suppressed: runCli reports every error once, with its code and hint.
    .configureOutput({ writeOut: (s) => streams.stdout.write(s), writeErr: (s) => streams.stderr.write(s), outputError: () => {} })
    .exitOverride();
  // Harness options of the direct form go before the engine name; after it every argument is the engine's.
  addStartOptions(program);
  registerStart(program, streams, setExit);
  registerResume(program, streams, setExit);
  registerRuns(program, streams);
  registerDoctor(program, streams, setExit);
  registerModel(program);
  registerDemo(program, streams, setExit);
  registerTranslate(program, streams, setExit);
  registerReport(program, streams, setExit);
  for (const engine of ENGINE_IDS) {
    // No options of its own: `agent-harness claude --model sonnet -p hi` hands claude exactly those words
    // (seed 001, Decision 5). Only `--translate N` is taken back out, by startCommand, wherever it stands.
    program
      .command(engine)
      .description(`run ${engine} with exactly these arguments inside the managed env (harness options go before "${engine}")`)
      .argument('[args...]', `${engine} arguments, passed through in order`)
      .passThroughOptions()
      .allowUnknownOption()
      .allowExcessArguments()
      .helpOption(false)
      .action(async (args: string[]) => {
        setExit(await startCommand(streams, engine, args, program.opts<StartCommandOptions>()));
      });
  }
  program.addHelpText('after', `
Quick start:
  agent-harness demo                         real codex + the demo skill on the scripted model
  agent-harness start --translate 3 --prompt "hi" codex
  agent-harness --translate 2 claude --model sonnet -p hi   direct form: claude gets "--model sonnet -p hi"
  agent-harness resume <handle> "next message"
  agent-harness runs                         list runs and their handles
  agent-harness translate <handle> --summary  replay a run's recorded output through the parsers
  agent-harness doctor                       paths, env and self-checks

Errors print "agent-harness: error CODE: message" and a hint; exit status 2 = usage, 1 = other failures.`);
  return program;
}

/** Runs the CLI with `argv` (without node and script); resolves the exit status. */
export async function runCli(argv: readonly string[], streams: CliStreams = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(streams, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
      return reportCliError(new AgentHarnessError('USAGE_ERROR', error.message.replace(/^error: /, '')), streams.stderr);
    }
    return reportCliError(error, streams.stderr);
  }
}
