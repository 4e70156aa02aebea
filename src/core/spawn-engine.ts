/**
 * Runs the engine process in the chosen terminal wiring and turns its output into RASP as it arrives:
 * each raw chunk is appended to its audit log first (so a crash keeps it), then split into lines and parsed.
 */
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import type { AcpClient } from '../engines/acp/client.js';
import type { StreamName } from '../protocol/index.js';
import { runPassthrough } from '../runtime/passthrough.js';
import type { ProcessResult } from '../runtime/process-result.js';
import { notStarted, runProcess, spawnSplit, superviseSplit } from '../runtime/process.js';
import type { AttemptIsolation, WrapOptions } from '../runtime/isolation/attempt-isolation.js';
import { checkSpawnable, ptyEnv, runPty } from '../runtime/pty.js';
import { feedLine } from '../translate/feed.js';
import { createLineSplitter, type LineSplitter } from '../translate/line-splitter.js';
import type { RaspBuilder } from '../translate/rasp-builder.js';
import type { IoMode } from './attempt-request.js';
import type { AttemptAuditPaths, RawLogWriter } from './audit-files.js';
import type { ChunkRedactor } from './audit-redaction.js';
import { streamInputFile } from '../runtime/bounded-input.js';

/** What {@link spawnEngine} needs. */
export interface SpawnEngineInput {
  io: IoMode;
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Aborted after `signal`: SIGKILL at once instead of after the grace period. */
  hurry?: AbortSignal;
  /** `ignore` closes stdin; `pipe` gives an empty stdin that is closed at once. */
  stdin: 'ignore' | 'pipe';
  audit: AttemptAuditPaths;
  writer: RawLogWriter;
  rasp: RaspBuilder;
  /** Redacts the known secrets out of the raw output before it is logged, parsed or shown (audit-redaction.ts). */
  redaction?: ChunkRedactor;
  onOutput?: (stream: StreamName, chunk: Uint8Array) => void;
  /** The attempt's namespaces: the command is wrapped to run inside them. */
  isolation?: AttemptIsolation;
  /**
   * Over ACP (split io): starts the harness's ACP client on the engine's live stdin once it runs, fed its stdout; its
   * `stop` kills the engine. `signal` then goes to the client (session/cancel), and the attempt is canceled when it
   * was aborted, however the engine ended.
   */
  acp?: (stdin: Writable, stop: () => void) => AcpClient;
}

/** Runs the engine; every line it printed has been fed to `rasp` when this resolves. Never throws. */
export async function spawnEngine(input: SpawnEngineInput): Promise<ProcessResult> {
  const { io, writer, rasp } = input;
  const splitter = createLineSplitter();
  const write = (stream: StreamName, chunk: Uint8Array): void => {
    if (chunk.byteLength === 0) return;
    const from = writer.append(stream, chunk);
    input.onOutput?.(stream, chunk);
    for (const line of splitter.push(stream, chunk, from)) feedLine(rasp, line);
  };
  const { redaction } = input;
  const feed = redaction
    ? (stream: StreamName, chunk: Uint8Array): void => write(stream, redaction.push(stream, chunk))
    : write;
  if (input.isolation) {
    // Inside the namespaces the init starts the engine; a missing executable is reported before wrapping.
    const unspawnable = checkSpawnable(input.file, input.cwd, input.env);
    if (unspawnable) return notStarted(performance.now(), unspawnable);
  }
  const supervision = {
    timeoutMs: input.timeoutMs,
    ...(input.signal ? { signal: input.signal } : {}),
    ...(input.hurry ? { hurry: input.hurry } : {}),
  };
  const namespaced = input.isolation?.record.processes === 'pid-namespace';
  let result: ProcessResult;
  if (io === 'pty') {
    // Inside the namespaces the PTY's process is the init: the engine gets what node-pty would have added for it.
    result = await runPty({
      ...startedCommand(input, supervision, namespaced ? ptyEnv(input.env, input.cwd) : input.env),
      onChunk: feed,
      onTiming: (line) => writer.timing(line),
    });
  } else if (io === 'passthrough') {
    // `script` hands its descriptors on: the init gets its lifeline and model channel as it does when prestarted.
    result = await runInTerminal(input, startedCommand(input, supervision, input.env, { passing: true }), splitter);
  } else if (input.acp) {
    result = await runAcp(input, input.acp, feed, supervision);
  } else {
    result = await runSplit(input, feed, supervision, namespaced);
  }
  // What was held back as the possible start of a secret was not one: it goes out before the last lines.
  if (redaction) for (const stream of ['stdout', 'stderr', 'pty'] as const) write(stream, redaction.flush(stream));
  for (const line of splitter.flush()) feedLine(rasp, line);
  if (!input.isolation) return result;
  // The init sets the agent's filesystem up before it starts the engine, while the harness goes on: a failure there
  // is known only now, and it is the attempt's (the engine never started; there is no fallback to the host).
  const settled = await input.isolation.settle(result);
  return settled;
}

/** How long the engine may run and what stops it, as the process runners take it. */
type Supervision = { timeoutMs: number; signal?: AbortSignal; hurry?: AbortSignal };

/** Where each chunk of the engine's output goes (the audit log, the listener, the parser). */
type Feed = (stream: StreamName, chunk: Uint8Array) => void;

/**
 * The command to start here, with `env` for the engine: with namespaces, their init (and the environment it starts
 * with), which is sent the engine's command once it is connected.
 */
function startedCommand(
  input: SpawnEngineInput,
  supervision: Supervision,
  env: Record<string, string>,
  options: WrapOptions = {},
) {
  return {
    ...(input.isolation
      ? input.isolation.wrap({ file: input.file, args: input.args, env, cwd: input.cwd }, options)
      : { file: input.file, args: input.args, env }),
    cwd: input.cwd,
    ...supervision,
  };
}

/**
 * Runs the engine in the user's terminal: `script` owns the terminal and writes the log itself; the log is parsed
 * once the engine is done (into `splitter`, then `input.rasp`).
 */
async function runInTerminal(
  input: SpawnEngineInput,
  command: ReturnType<typeof startedCommand>,
  splitter: LineSplitter,
): Promise<ProcessResult> {
  const { audit, rasp } = input;
  const result = await runPassthrough({
    ...command,
    logOut: audit.ptyOutput,
    logTiming: audit.ptyTiming,
    ...('attach' in command && command.attach ? { passSockets: command.passSockets, onPassed: command.attach } : {}),
  });
  // Read in chunks: an interactive session's log can be long.
  try {
    if (fs.existsSync(audit.ptyOutput)) {
      for await (const chunk of streamInputFile(audit.ptyOutput, { what: 'PTY log' }, undefined, {
        reuseChunks: true,
      }))
        splitter.pushEach('pty', chunk, (line) => feedLine(rasp, line));
    }
  } catch (error) {
    rasp.diagnostic({
      code: 'PTY_LOG_UNREADABLE',
      message: `The terminal log ${audit.ptyOutput} could not be read: ${error instanceof Error ? error.message : String(error)}`,
      level: 'error',
    });
  }
  return result;
}

/**
 * Runs the engine with stdout and stderr apart (not over ACP). With namespaces the init was started earlier
 * (prestart): it is only told what to run.
 */
async function runSplit(
  input: SpawnEngineInput,
  feed: Feed,
  supervision: Supervision,
  namespaced: boolean,
): Promise<ProcessResult> {
  const prestarted = input.signal?.aborted
    ? null
    : (input.isolation?.launch({ file: input.file, args: input.args, env: input.env, cwd: input.cwd }) ?? null);
  if (prestarted) return superviseSplit(prestarted, { ...supervision, onChunk: feed });
  if (namespaced)
    return notStarted(
      performance.now(),
      input.signal?.aborted ? null : new Error("internal: the namespaces' init was not started"),
      true,
    );
  return runProcess({
    file: input.file,
    args: input.args,
    cwd: input.cwd,
    env: input.env,
    ...supervision,
    stdin: input.stdin === 'ignore' ? 'ignore' : { text: '' },
    onChunk: feed,
  });
}

/**
 * Runs the engine over ACP: started with a live stdin (through the namespaces' prestarted init, which hands its stdin
 * to the engine), its stdout fed to the audit and parser first, then to the client. The user's abort goes to the
 * client (session/cancel, then a stop after a grace); the process is killed only by the client's stop or a timeout.
 */
async function runAcp(
  input: SpawnEngineInput,
  startClient: NonNullable<SpawnEngineInput['acp']>,
  feed: Feed,
  supervision: Supervision,
): Promise<ProcessResult> {
  const aborted = (): boolean => input.signal?.aborted ?? false;
  if (aborted()) return notStarted(performance.now(), null, true);
  const command = { file: input.file, args: input.args, env: input.env, cwd: input.cwd };
  const child = input.isolation ? input.isolation.launch(command) : spawnSplit({ ...command, stdin: 'live' });
  if (!child)
    return notStarted(performance.now(), new Error("internal: the namespaces' init was not started"), aborted());
  const stopper = new AbortController();
  // A hurried cancel (a second Ctrl-C) does not wait for the engine to answer `cancelled`.
  supervision.hurry?.addEventListener('abort', () => stopper.abort(), { once: true });
  const client = child.stdin ? startClient(child.stdin, () => stopper.abort()) : null;
  const result = await superviseSplit(child, {
    timeoutMs: supervision.timeoutMs,
    signal: stopper.signal,
    ...(supervision.hurry ? { hurry: supervision.hurry } : {}),
    onChunk: (stream, chunk) => {
      feed(stream, chunk);
      if (stream === 'stdout') client?.push(chunk);
    },
  });
  client?.end();
  await client?.done;
  // Stopped by the client after a finished prompt is not a cancel; an abort is, however the engine ended.
  return { ...result, canceled: aborted() };
}
