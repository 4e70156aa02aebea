/**
 * `agent-harness translate --engine ID [--stdout F] [--stderr F] [--pty F] [--translate 1|2|3] [--summary]` and
 * `agent-harness translate <run-selector> [--attempt N] …`: recorded output through the same parsers as a
 * live attempt. Views print to stdout as the events are produced; `--summary` prints one JSON object built from
 * counters. Inputs must be regular files (checked before anything is read) and are streamed in chunks, never read
 * whole, and no event is held; SIGINT/SIGTERM end it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AgentHarnessError } from '../errors/index.js';
import type { TranslateMode } from '../protocol/index.js';
import { checkInputFile, streamInputFile } from '../runtime/bounded-input.js';
import { resolveHarnessPaths } from '../runtime/paths.js';
import type { TranslateRecordedOptions } from '../translate/recorded.js';
import type { RecordedSources } from '../translate/recorded-stream.js';
import { createViewWriter } from '../translate/view-sink.js';
import { createBatchedWriter } from './batched-writer.js';
import { runInterruptible } from './interrupt.js';
import { parsePositiveInt, parseTranslateMode } from './options.js';
import type { CliStreams } from './output.js';

interface TranslateOptions {
  engine?: string;
  stdout?: string;
  stderr?: string;
  pty?: string;
  translate?: TranslateMode;
  summary?: boolean;
  attempt?: number;
}

type InputFiles = Partial<Record<'stdout' | 'stderr' | 'pty', string>>;

/** Checks every input before any is read, then streams each (re-checked on open) when the translation wants it. */
function sourcesOf(files: InputFiles, signal: AbortSignal, audit: boolean): RecordedSources {
  const sources: RecordedSources = {};
  for (const [stream, file] of Object.entries(files) as Array<[keyof InputFiles, string]>) {
    // A run's logs are the agent's to tamper with: a link there is refused, not followed.
    const check = { what: audit ? `audit ${stream} log` : `${stream} file`, noFollow: audit };
    checkInputFile(file, check);
    // The translation is done with each chunk before it asks for the next (the splitter copies what it keeps).
    sources[stream] = () => streamInputFile(file, check, signal, { reuseChunks: true });
  }
  return sources;
}

function isNonEmptyFile(file: string): boolean {
  try {
    return fs.statSync(file).size > 0;
  } catch {
    return false;
  }
}

async function fromRun(
  selector: string,
  options: TranslateOptions,
  streams: CliStreams,
): Promise<{
  engine: string;
  files: InputFiles;
  recorded: TranslateRecordedOptions;
  transport: 'native' | 'acp' | undefined;
  clientFile?: string;
}> {
  // Loaded here, not at the top: translating captured files needs neither the run store nor attempt sealing.
  const [{ attemptAuditPaths, fcmpSeqStart }, { findRun }, { readAttemptMetaOrNull }] = await Promise.all([
    import('../core/audit-files.js'),
    import('../core/session.js'),
    import('../runtime/read-attempt-meta.js'),
  ]);
  const paths = resolveHarnessPaths();
  const run = await findRun(
    paths,
    { selector },
    { onUnsaved: (message) => streams.stderr.write(`agent-harness: warning: ${message}\n`) },
  );
  const attempt = options.attempt ?? run.attempts;
  if (attempt < 1) throw new AgentHarnessError('RUN_NOT_FOUND', `Run ${run.run_id} has no attempt yet.`);
  const audit = attemptAuditPaths(run.run_dir, attempt);
  const files: InputFiles = {};
  for (const [key, file] of [
    ['stdout', audit.stdout],
    ['stderr', audit.stderr],
    ['pty', audit.ptyOutput],
  ] as const) {
    if (fs.existsSync(file)) files[key] = file;
  }
  if (!fs.existsSync(audit.meta) && Object.keys(files).length === 0) {
    throw new AgentHarnessError(
      'RUN_NOT_FOUND',
      `Run ${run.run_id} has no attempt ${attempt} (${audit.meta} is missing).`,
      { details: { attempt } },
    );
  }
  const meta = await readAttemptMetaOrNull(audit.meta);
  if (!meta)
    streams.stderr.write(
      `agent-harness: ${audit.meta} is missing or unreadable; translating attempt ${attempt} from its raw logs alone.\n`,
    );
  const exit = meta?.exit
    ? {
        exit_code: meta.exit.code,
        signal: meta.exit.signal,
        timed_out: meta.exit.timed_out,
        canceled: meta.exit.canceled,
        duration_ms: meta.timings.duration_ms ?? 0,
      }
    : null;
  // Without a meta, a resume is known by the message the harness wrote to its stdin log.
  const resumed = meta ? meta.launch === 'resume' : isNonEmptyFile(audit.stdin);
  return {
    engine: run.engine,
    transport: meta?.transport,
    clientFile: audit.acpClient,
    files,
    recorded: {
      runId: run.run_id,
      attempt,
      launch: resumed ? 'resume' : 'start',
      exit,
      seqStart: fcmpSeqStart(run.run_dir, attempt),
    },
  };
}

/** Runs `translate`; returns the exit status. */
export async function translateCommand(
  streams: CliStreams,
  selector: string | undefined,
  options: TranslateOptions,
): Promise<number> {
  let engine: string;
  let files: InputFiles;
  let recorded: TranslateRecordedOptions = {};
  let transport: 'native' | 'acp' | undefined;
  let clientFile: string | undefined;
  if (selector) {
    if (options.stdout || options.stderr || options.pty)
      throw new AgentHarnessError(
        'USAGE_ERROR',
        'Give either a run selector or --stdout/--stderr/--pty files, not both.',
      );
    ({ engine, files, recorded, transport, clientFile } = await fromRun(selector, options, streams));
  } else {
    if (!options.engine)
      throw new AgentHarnessError(
        'USAGE_ERROR',
        'translate needs --engine <id> with --stdout/--stderr/--pty files, or a run selector.',
      );
    if (!options.stdout && !options.stderr && !options.pty)
      throw new AgentHarnessError('USAGE_ERROR', 'translate needs at least one of --stdout, --stderr, --pty.');
    engine = options.engine;
    files = {};
    if (options.stdout) files.stdout = path.resolve(options.stdout);
    if (options.stderr) files.stderr = path.resolve(options.stderr);
    if (options.pty) files.pty = path.resolve(options.pty);
  }
  const mode = options.translate ?? 3;
  if (mode === 0 && !options.summary)
    throw new AgentHarnessError('USAGE_ERROR', 'translate shows views 1, 2 or 3 (view 0 is the raw file itself).');
  // The engine's parser and error patterns only: translating never needs the adapter that runs the engine.
  const [{ loadTranslationAdapter }, { translateRecordedStreams }] = await Promise.all([
    import('../engines/registry.js'),
    import('../translate/recorded-stream.js'),
  ]);
  let adapter = await loadTranslationAdapter(engine);
  // An attempt that ran over ACP is read with the ACP parser (its stdout is JSON-RPC), loaded for such a run only.
  if (transport === 'acp') {
    const { translationForTransport } = await import('../engines/acp/translation.js');
    adapter = translationForTransport(adapter, transport, clientFile);
  }
  if (options.summary || mode === 0) {
    const { summary } = await runInterruptible('translate', (signal) =>
      translateRecordedStreams(adapter, sourcesOf(files, signal, selector !== undefined), recorded),
    );
    streams.stdout.write(`${JSON.stringify(summary)}\n`);
    return 0;
  }
  // The view is written as the events are produced; the output's backpressure holds the reading back.
  const output = createBatchedWriter(streams.stdout);
  const view = createViewWriter(mode, output.write, output.drain);
  await runInterruptible('translate', (signal) =>
    translateRecordedStreams(adapter, sourcesOf(files, signal, selector !== undefined), recorded, view.sink),
  );
  view.end();
  await output.drain();
  return 0;
}

/** Registers `translate`. */
export function registerTranslate(program: Command, streams: CliStreams, setExit: (code: number) => void): void {
  program
    .command('translate')
    .description('replay recorded engine output through the parsers (a run, or captured files)')
    .argument('[run]', 'run selector (handle, run id or run directory); omit to translate files')
    .option('--engine <id>', 'engine whose parser reads the files')
    .option('--stdout <file>', 'captured stdout')
    .option('--stderr <file>', 'captured stderr')
    .option('--pty <file>', 'captured terminal output (used only when stdout/stderr hold no structured events)')
    .option('--attempt <n>', 'attempt of the run (default: the last)', parsePositiveInt('--attempt'))
    .option('--translate <mode>', 'view: 1 RASP, 2 FCMP, 3 markdown (default 3)', parseTranslateMode)
    .option(
      '--summary',
      'print one JSON object: engine, session_id, final_message, tool_calls, completed, error, diagnostics',
    )
    .addHelpText(
      'after',
      `
Examples:
  agent-harness translate --engine codex --stdout codex.jsonl --summary
  agent-harness translate 3f9a01bc --attempt 1 --translate 2`,
    )
    .action(async (run: string | undefined, options: TranslateOptions) => {
      setExit(await translateCommand(streams, run, options));
    });
}
