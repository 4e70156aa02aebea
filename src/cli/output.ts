/**
 * The CLI's output contract. stderr: info lines before the runtime, the begin/end separators, the summary.
 * stdout: only the engine's output in the chosen translate view, so `> file` captures a clean stream.
 */
import pc from 'picocolors';
import type { AttemptReadyInfo } from '../core/run-attempt.js';
import type { AttemptResult } from '../core/attempt-result.js';
import type { EngineId, StreamName, TranslateMode } from '../protocol/index.js';
import { readJsonlFile } from '../core/event-spool.js';
import { createViewWriter } from '../translate/view-sink.js';
import type { FcmpEvent, RaspEvent } from '../protocol/index.js';
import { createBatchedWriter } from './batched-writer.js';
import { resumeHint } from './resume-hint.js';

/** Where the CLI writes. */
export interface CliStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** The separator line printed once before and once after the engine's output. */
export function separator(engine: EngineId, which: 'begin' | 'end'): string {
  return `[agent:${engine}] ---------------- runtime ${which} ----------------`;
}

/** The `engine_version:` line (`2.1.328 (unchecked; checked: 2.1.197)`), when the version is known. */
function engineVersionLine(info: AttemptReadyInfo): string[] {
  const v = info.engineVersion;
  if (!v?.version) return [];
  const mark =
    v.checked === true ? ' (checked)' : v.checked === false ? ` (unchecked; checked: ${v.checkedVersions})` : '';
  return [`engine_version: ${v.version}${mark}`];
}

/** Prints the info lines and the begin separator. */
export function printReady(streams: CliStreams, info: AttemptReadyInfo, passthrough: readonly string[]): void {
  const names = info.skills.skills.map((skill) => skill.name);
  const lines = [
    `run_id: ${info.run.run_id}`,
    `run_dir: ${info.run.run_dir}`,
    `attempt: ${info.attempt}`,
    `executable: ${info.executable}`,
    ...engineVersionLine(info),
    `passthrough: ${JSON.stringify(passthrough)}`,
    `translate_mode: ${info.translateMode}`,
    `injected_skills: ${info.skills.skill_count}${names.length ? ` (${names.join(', ')})` : ''}`,
    `config_roots: ${info.configRoots.join(', ')}`,
    `model: ${info.modelUrl ?? 'live'}`,
    `isolation: network=${info.isolation.network} processes=${info.isolation.processes} filesystem=${info.isolation.filesystem ?? 'host'}`,
  ];
  if (info.engineVersion?.checked === false)
    lines.push(
      pc.yellow(
        `warning ENGINE_VERSION_UNCHECKED: ${info.run.engine} ${info.engineVersion.version} was not checked (checked: ${info.engineVersion.checkedVersions}); its stream may have changed`,
      ),
    );
  if (info.isolation.reason !== null && info.isolation.mode === 'auto') {
    lines.push(
      pc.yellow(
        `warning ISOLATION_DEGRADED: ${info.isolation.processes === 'pid-namespace' ? 'the host filesystem' : 'no namespaces'} (${info.isolation.reason}); set --isolation require to refuse instead`,
      ),
    );
  }
  streams.stderr.write(`${lines.join('\n')}\n${separator(info.run.engine, 'begin')}\n`);
}

/** Live output handlers for a view: raw chunks for view 0, RASP lines for view 1. */
export function liveHandlers(
  streams: CliStreams,
  mode: TranslateMode,
): {
  onOutput?: (stream: StreamName, chunk: Uint8Array) => void;
  onRaspEvent?: (event: RaspEvent) => void;
} {
  if (mode === 0)
    return { onOutput: (stream, chunk) => (stream === 'stderr' ? streams.stderr : streams.stdout).write(chunk) };
  if (mode === 1) {
    return {
      onRaspEvent: (event) => {
        if (event.data.type !== 'raw.line') streams.stdout.write(`${JSON.stringify(event)}\n`);
      },
    };
  }
  return {};
}

/**
 * Writes view 2 or 3 of an attempt's FCMP, piece by piece with the output's backpressure: from memory, or for a long
 * attempt (events past the memory budget) read from its `fcmp.N.jsonl` as it is written.
 */
async function writeFinishedView(stdout: NodeJS.WritableStream, mode: 2 | 3, result: AttemptResult): Promise<void> {
  const out = createBatchedWriter(stdout);
  const view = createViewWriter(mode, out.write);
  const events: Iterable<FcmpEvent> = result.eventsInMemory ? result.fcmp : readJsonlFile<FcmpEvent>(result.audit.fcmp);
  let count = 0;
  for (const event of events) {
    view.sink.fcmp?.(event);
    if (++count % 1024 === 0) await out.drain();
  }
  view.end();
  await out.drain();
}

/** `failed (reason): CODE, category C` for a failed attempt (its `conversation.failed`), else `state (reason)`. */
function completionLine(result: AttemptResult): string {
  const { state, reason } = result.completion;
  const failed = state === 'failed' ? result.fcmp.findLast((event) => event.type === 'conversation.failed') : undefined;
  const failure = failed?.type === 'conversation.failed' ? failed.data : null;
  if (!failure) return `Completion: ${state} (${reason})`;
  return `Completion: ${state} (${reason}${failure.code === reason ? '' : `: ${failure.code}`}, category ${failure.category})`;
}

/** `Cassette: replay FILE: N exact, N divergent, N missed, N unused of N` (cassette modes only). */
function cassetteLine(result: AttemptResult): string | null {
  const c = result.cassette;
  if (!c) return null;
  if (c.mode === 'record') return `Cassette: recorded ${c.path}: ${c.interactions} interaction(s)`;
  return `Cassette: replayed ${c.path}: ${c.exact} exact, ${c.divergent} divergent, ${c.missed} missed, ${c.unused} unused of ${c.interactions}`;
}

/** Prints what is printed after the process ended: views 2/3, the end separator and the summary. */
export async function printFinished(
  streams: CliStreams,
  result: AttemptResult,
  mode: TranslateMode,
  verb: 'Start' | 'Resume',
  readyPrinted: boolean,
  interrupted: { status: number; signal: NodeJS.Signals } | null = null,
): Promise<void> {
  if (readyPrinted) {
    if (mode === 2 || mode === 3) await writeFinishedView(streams.stdout, mode, result);
    streams.stderr.write(`${separator(result.engine, 'end')}\n`);
  }
  const lines = [
    `Run id: ${result.runId}`,
    `Run directory: ${result.runDir}`,
    `Run handle: ${result.handle}`,
    `Attempt: ${result.attempt}`,
    `Session: ${result.sessionId ?? '(none)'}`,
    completionLine(result),
    ...(cassetteLine(result) ? [cassetteLine(result)!] : []),
    `Audit: ${result.audit.dir}`,
    interrupted
      ? `${verb} interrupted. exitCode=${interrupted.status} (${interrupted.signal}; engine exit ${result.exitCode ?? result.signal ?? 'unknown'})`
      : result.error && result.exitCode === null && !result.signal
        ? // The engine never exited (it did not start, or the harness failed around it): not "complete".
          `${verb} failed (${result.error.code}): the engine did not exit.`
        : `${verb} complete. exitCode=${result.exitCode ?? 'null'}${result.signal ? ` (killed by ${result.signal})` : ''}`,
  ];
  // A harness failure (a cassette that cannot answer, an audit changed behind it) is fixed by re-recording or
  // starting again, never by resuming the session: its error, printed next, says what to do.
  const hint = interrupted || result.error ? null : await resumeHint(result);
  // The script ran out: a resume goes on only with a script that has the next turns.
  if (hint && result.completion.code === 'MODEL_SCRIPT_EXHAUSTED')
    lines.push(
      `To continue this session, run: agent-harness resume --script FILE ${result.handle} <message> (FILE: a model script with the turns after those used)`,
    );
  else if (hint) lines.push(hint);
  streams.stderr.write(`${lines.join('\n')}\n`);
}
