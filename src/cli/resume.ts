/**
 * `agent-harness resume [--translate N] <handle> <message>`: the next turn of a run's session. The engine's
 * resume command is rebuilt from the run's metadata; the translate view is the run's unless given.
 */
import type { Command } from 'commander';
import type { IsolationMode, TranslateMode } from '../protocol/index.js';
import type { EarlyInit } from '../runtime/isolation/early-init.js';
import { resolveHarnessPaths } from '../runtime/paths.js';
import { collectExpose, EXPOSE_HELP, parseIsolationMode, parsePositiveInt, parseTranslateMode } from './options.js';
import type { CliStreams } from './output.js';
import { withEarlyInit } from './start.js';

/** Options of a resume. */
interface ResumeOptions {
  translate?: TranslateMode;
  script?: string;
  timeoutMs?: number;
  isolation?: IsolationMode;
  expose?: string[];
}

/** Registers `resume`. */
export function registerResume(program: Command, streams: CliStreams, setExit: (code: number) => void): void {
  program
    .command('resume')
    .description("send the next message to a run's session (attempt N+1 in the same run directory)")
    .argument('<handle>', 'run handle (8 hex digits, or a unique prefix), run id or run directory')
    .argument('<message>', 'the next user message')
    .option('--translate <mode>', "output view 0..3 (default: the run's)", parseTranslateMode)
    .option('--script <file>', "model script (default: the run's)")
    .option('--timeout-ms <ms>', 'kill the engine after this many milliseconds', parsePositiveInt('--timeout-ms'))
    .option('--isolation <mode>', 'namespaces for the engine: auto (default), require, off', parseIsolationMode)
    .option('--expose <path[:ro]>', EXPOSE_HELP, collectExpose)
    .addHelpText('after', '\nExample:\n  agent-harness resume 3f9a01bc "now add a README"')
    .action(async (handle: string, message: string, options: ResumeOptions) => {
      // As in a start, the namespaces' init first, booting while the attempt's code loads (killed if unused).
      setExit(await withEarlyInit(options, (early) => resumeRun(streams, handle, message, options, early)));
    });
}

/**
 * Runs the resume's attempt (the run found by `handle`), its request made by `resumeRequest` as the providers' and the
 * Vitest fixtures' are; resolves the exit status. The run's translate view and script stand unless given.
 */
async function resumeRun(
  streams: CliStreams,
  handle: string,
  message: string,
  options: ResumeOptions,
  earlyInit: EarlyInit | null,
): Promise<number> {
  const [{ resumeRequest }, { chooseIo, runAttemptCommand }] = await Promise.all([
    import('../core/session.js'),
    import('./attempt-command.js'),
  ]);
  const request = await resumeRequest({ selector: handle }, message, {
    earlyInit,
    paths: resolveHarnessPaths(),
    ...(options.script ? { script: options.script } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.isolation ? { isolation: options.isolation } : {}),
    ...(options.expose ? { expose: options.expose } : {}),
  });
  const translate = options.translate ?? request.run?.translate_mode ?? 0;
  const { status } = await runAttemptCommand(
    streams,
    { ...request, translateMode: translate, io: chooseIo(translate, undefined) },
    'Resume',
  );
  return status;
}
