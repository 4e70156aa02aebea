/**
 * `agent-harness demo [--engine codex]`: the real engine CLI does the `demo-hello` skill end to end against
 * the embedded scripted model: the script makes the agent run a shell command that writes hello.txt, then
 * answer with the done marker. Prints the markdown view and the summary; exits 0 only when the conversation
 * completed and the file exists.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { ModelScript } from '../model/index.js';
import { PACKAGE_ROOT } from '../runtime/executables.js';
import { resolveHarnessPaths } from '../runtime/paths.js';
import type { CliStreams } from './output.js';

/** The file the demo skill writes. */
export const DEMO_FILE = 'hello.txt';

/** The reply to the first message sent after the demo (the resume its summary suggests). */
export const DEMO_FOLLOW_UP =
  'The demo script has one more reply, this one; for a longer session give `--script` more turns.';

/**
 * The demo's model script (built on demand: the model module is loaded by the demo only). A turn past the demo's
 * own answers the resume that the demo's summary suggests, so that next step works too.
 */
export async function demoScript(): Promise<ModelScript> {
  const { turns } = await import('../model/script.js');
  return {
    version: 1,
    turns: [
      turns.shell(`printf 'hello from agent-harness\\n' > ${DEMO_FILE}`),
      turns.final(`I used the demo-hello skill and wrote ${DEMO_FILE}.`, { done: true }),
      turns.final(DEMO_FOLLOW_UP, { done: true }),
    ],
  };
}

/** Runs the demo; returns the exit status. */
export async function demoCommand(streams: CliStreams, engine: string): Promise<number> {
  const { runAttemptCommand } = await import('./attempt-command.js');
  const paths = resolveHarnessPaths({ skillRoots: [path.join(PACKAGE_ROOT, 'fixtures', 'skills')] });
  const { status, result } = await runAttemptCommand(
    streams,
    {
      paths,
      engine,
      launch: 'start',
      prompt: `Use the demo-hello skill: write ${DEMO_FILE} in the current directory.`,
      translateMode: 3,
      modelMode: 'scripted',
      script: await demoScript(),
      io: 'split',
    },
    'Start',
  );
  const file = path.join(result.runDir, DEMO_FILE);
  const fileExists = fs.existsSync(file);
  const completed = result.completion.state === 'completed';
  streams.stderr.write(
    `Demo: conversation ${completed ? 'completed' : `not completed (${result.completion.state}: ${result.completion.reason})`}; ${DEMO_FILE} ${fileExists ? `exists (${file})` : 'is missing'}.\n`,
  );
  if (status !== 0) return status;
  return completed && fileExists ? 0 : 1;
}

/** Registers `demo`. */
export function registerDemo(program: Command, streams: CliStreams, setExit: (code: number) => void): void {
  program
    .command('demo')
    .description('run the real engine CLI on the demo-hello skill against the embedded scripted model')
    .option('--engine <id>', 'engine to run', 'codex')
    .action(async (options: { engine: string }) => {
      setExit(await demoCommand(streams, options.engine));
    });
}
