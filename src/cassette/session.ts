/**
 * A cassette in use by one attempt's model server: recording (each wire request forwarded upstream and captured, the
 * file rewritten atomically after each interaction, so a crash keeps what was recorded) or replaying (each request
 * matched by the ladder of match.ts and served from the file, fast or at the recorded pace). `finish()` says what
 * happened: counts, diagnostics, and the error that fails the attempt (a miss, or unused interactions, in strict mode).
 */
import type { ServerResponse } from 'node:http';
import { AgentHarnessError } from '../errors/index.js';
import { type InterceptedRequest, type InterceptOutcome, WIRE_APIS, type WireInterceptor } from '../model/server.js';
import { formatDifferences, matchRequest, type MatchRequest, type MatchResult } from './match.js';
import { fillPaths, normalizeBody, normalizePath, requestHash, type NormalizeContext } from './normalize.js';
import { openRecorder, RERECORD, type Recorder } from './recorder.js';
import type { CassetteFork, ForkTarget } from './mode.js';
import type { Cassette, CassetteInteraction } from './schema.js';

/** What a cassette does for an attempt. */
export type CassetteMode = 'record' | 'replay';

/** Options of {@link openCassette}. */
export interface CassetteOptions {
  mode: CassetteMode;
  /** The cassette file (written when recording). */
  file: string;
  /** The cassette to replay (loaded and validated before the attempt). */
  cassette?: Cassette;
  /** Recording: the origin requests go to (default: the vendor of each wire API). */
  upstream?: string | null;
  /** Replay: a miss or an unused interaction fails the attempt (default true); lenient falls back to the script. */
  strict?: boolean;
  /** Replay: 0 or absent serves at once; 1 at the recorded pace, 2 twice as slow… */
  pace?: number;
  /**
   * Replay: fork the conversation after its first `fork.at` model turns: a request at a later place in the
   * conversation (and its side requests) is answered by `fork.to`: the scripted model, or the live model, each
   * request forwarded to `fork.upstream` (null: the vendor) with the user's key from `hostEnv`, and the whole forked
   * conversation (the replayed interactions, then the live ones) written to `fork.output` when it is set. The
   * recorded rest is not expected.
   */
  fork?: CassetteFork;
  /** Where the user's keys and secret variables are read from. */
  hostEnv: NodeJS.ProcessEnv;
  /** The engine recorded, written into the cassette. */
  engine?: string | null;
  /** The attempt's paths to normalize (asked at each request: the run directory exists only later). */
  context?: () => NormalizeContext;
  /**
   * Replay in an attempt: a miss answers the engine with one line (the request, the file), since the attempt's
   * failure carries the whole message and its diff; `model serve` (false) sends the diff in the 400 itself.
   */
  briefMisses?: boolean;
}

/** A diagnostic of the cassette, for the attempt's RASP/FCMP and its conformance report. */
export interface CassetteDiagnostic {
  code:
    | 'CASSETTE_DIVERGENCE'
    | 'CASSETTE_MISS'
    | 'CASSETTE_UNUSED'
    | 'CASSETTE_UPSTREAM_FAILED'
    | 'CASSETTE_FORKED'
    | 'CASSETTE_NOT_WRITTEN';
  level: 'info' | 'warning' | 'error';
  message: string;
}

/** What a cassette did in one attempt. */
export interface CassetteReport {
  mode: CassetteMode;
  file: string;
  /** Interactions recorded (record) or in the cassette (replay). */
  interactions: number;
  exact: number;
  divergent: number;
  missed: number;
  unused: number;
  diagnostics: CassetteDiagnostic[];
  /** What fails the attempt (the first miss, unused interactions in strict mode, an unreachable upstream), or null. */
  error: AgentHarnessError | null;
  /** A replay that forked: after how many model turns, onto what, and the cassette its live part went to. */
  fork?: { at: number; to: ForkTarget; recorded: string | null };
}

/** A cassette attached to a model server. */
export interface CassetteSession {
  readonly mode: CassetteMode;
  /** Hand to the model server's `intercept` option. */
  readonly intercept: WireInterceptor;
  /** Waits for the writes, writes the file a last time (record) and reports. */
  finish(): Promise<CassetteReport>;
}

/** The normalized form of an intercepted request, as the ladder compares it. */
function matchRequestOf(call: InterceptedRequest, context: NormalizeContext): MatchRequest {
  const normalized = normalizeBody(call.request.body, context);
  const path = normalizePath(call.request.path, context);
  const userText = call.wire.lastUserText(normalized);
  return {
    wire: call.wire.id,
    sideKind: call.sideKind,
    position: call.wire.countModelTurns(call.request.body),
    method: call.request.method,
    path,
    normalized,
    hash: requestHash(call.request.method, path, normalized),
    userText,
  };
}

/** Writes a recorded response to the engine: at once, or with the recorded delays scaled by `pace`. */
async function serveRecorded(
  interaction: CassetteInteraction,
  response: ServerResponse,
  pace: number,
  context: NormalizeContext,
): Promise<void> {
  response.writeHead(interaction.response.status, interaction.response.headers);
  response.flushHeaders();
  for (const chunk of interaction.response.chunks) {
    if (pace > 0 && chunk.delay_ms > 0) await new Promise((resolve) => setTimeout(resolve, chunk.delay_ms * pace));
    if (response.destroyed) return;
    response.write(fillPaths(chunk.data, context));
  }
  if (interaction.response.complete) response.end();
  else response.destroy();
}

/** The last user text of a recorded interaction's normalized request, read by its wire's handler. */
function lastUserTextOf(interaction: CassetteInteraction): string | null {
  return WIRE_APIS.find((wire) => wire.id === interaction.wire)?.lastUserText(interaction.request.normalized) ?? null;
}

/** Opens a cassette for one attempt's model server. */
export function openCassette(options: CassetteOptions): CassetteSession {
  const context = (): NormalizeContext => options.context?.() ?? { replacements: [] };
  let firstError: AgentHarnessError | null = null;
  const parts: SessionParts = {
    options,
    context,
    diagnostics: [],
    fail: (error) => {
      firstError ??= error;
    },
    error: () => firstError,
  };
  return options.mode === 'record' ? recordSession(parts) : replaySession(parts);
}

/** What a record or replay session shares: its options, the paths' context, its diagnostics and its first error. */
interface SessionParts {
  options: CassetteOptions;
  context: () => NormalizeContext;
  diagnostics: CassetteDiagnostic[];
  /** Keeps the first error that fails the attempt. */
  fail: (error: AgentHarnessError) => void;
  error: () => AgentHarnessError | null;
}

function recordSession({ options, context, diagnostics, fail, error }: SessionParts): CassetteSession {
  const recorder = openRecorder({
    file: options.file,
    upstream: options.upstream ?? null,
    hostEnv: options.hostEnv,
    engine: options.engine ?? null,
    context,
    fail: upstreamFailure(diagnostics, fail),
  });
  return {
    mode: 'record',
    intercept: (call) => recorder.forward(call, matchRequestOf(call, context())),
    async finish() {
      const failure = error();
      const kept = await recorder.finish(failure === null);
      if (!kept.written) diagnostics.push(notWritten(options.file, failure, kept.partial));
      return {
        mode: 'record',
        file: options.file,
        interactions: recorder.count,
        exact: 0,
        divergent: 0,
        missed: 0,
        unused: 0,
        diagnostics,
        error: error(),
      };
    },
  };
}

/** Says that a recording kept nothing at `file` (failed, or recorded nothing), where its part is, how to re-record. */
function notWritten(file: string, failure: AgentHarnessError | null, partial: string | null): CassetteDiagnostic {
  const why = failure ? `failed (${failure.code})` : 'recorded no interaction';
  const kept = partial ? `; what it recorded is in ${partial}` : '';
  return {
    code: 'CASSETTE_NOT_WRITTEN',
    level: failure ? 'error' : 'warning',
    message: `The recording of ${file} ${why}, so the cassette was not written (one already there is left as it was)${kept}. ${RERECORD}`,
  };
}

/** Fails the attempt with an upstream failure and notes it as a diagnostic. */
function upstreamFailure(diagnostics: CassetteDiagnostic[], fail: (error: AgentHarnessError) => void) {
  return (failure: AgentHarnessError): void => {
    fail(failure);
    diagnostics.push({ code: 'CASSETTE_UPSTREAM_FAILED', level: 'error', message: failure.message });
  };
}

/** What a replay reads and changes: its state, explicit. */
interface ReplayState {
  readonly parts: SessionParts;
  readonly cassette: Cassette;
  readonly strict: boolean;
  readonly pace: number;
  /** The indexes of the interactions served. */
  readonly used: Set<number>;
  readonly counts: { exact: number; divergent: number; missed: number };
  /** The live fork's origin (null: the vendor, or no live fork). */
  readonly upstream: string | null;
  /** The live fork's output cassette, or null. */
  readonly output: string | null;
  /** A live fork forwards what comes after the fork (and writes the forked conversation when asked to). */
  readonly recorder: Recorder | null;
  /** Whether a request past the fork came (the fork was taken). */
  forked: boolean;
}

function replaySession(parts: SessionParts): CassetteSession {
  const { options, context, diagnostics, fail } = parts;
  const cassette = options.cassette;
  if (!cassette) throw new AgentHarnessError('INTERNAL_ERROR', 'A cassette replay was opened without its cassette.');
  const fork = options.fork;
  const live = fork?.to === 'live';
  const upstream = live ? fork.upstream : null;
  const output = live ? fork.output : null;
  const state: ReplayState = {
    parts,
    cassette,
    strict: options.strict ?? true,
    pace: options.pace ?? 0,
    used: new Set(),
    counts: { exact: 0, divergent: 0, missed: 0 },
    upstream,
    output,
    recorder: live
      ? openRecorder({
          file: output,
          upstream,
          hostEnv: options.hostEnv,
          engine: options.engine ?? cassette.engine,
          context,
          fail: upstreamFailure(diagnostics, fail),
          redactions: cassette.redactions,
        })
      : null,
    forked: false,
  };
  return { mode: 'replay', intercept: (call) => replayCall(state, call), finish: () => finishReplay(state) };
}

/** The replay's interceptor: past the fork, the fork's answer; else the matching recorded interaction, or a miss. */
async function replayCall(state: ReplayState, call: InterceptedRequest): Promise<InterceptOutcome | null> {
  const { options, context, diagnostics } = state.parts;
  const forkAt = options.fork?.at;
  const request = matchRequestOf(call, context());
  if (forkAt !== undefined && request.position >= forkAt) return forkCall(state, call, request, forkAt);
  const found = matchRequest(request, state.cassette.interactions, state.used, lastUserTextOf);
  const what = `${request.method} ${call.request.path} (${call.sideKind ? `side request ${call.sideKind}` : `model call at turn ${request.position}`})`;
  if (found.kind === 'miss') return missCall(state, call, found, what);
  state.used.add(found.index);
  const interaction = state.cassette.interactions[found.index]!;
  if (found.kind === 'divergent') {
    state.counts.divergent += 1;
    diagnostics.push({
      code: 'CASSETTE_DIVERGENCE',
      level: 'warning',
      message: `${what} was served by recorded interaction #${interaction.seq}, which differs in:\n${formatDifferences(found.differences)}`,
    });
  } else state.counts.exact += 1;
  state.recorder?.copy(interaction);
  await serveRecorded(interaction, call.response, state.pace, context());
  return { status: interaction.response.status, note: found.kind === 'exact' ? 'replayed' : 'divergent' };
}

/** A request past the fork: said once (changes `forked`), then answered live (the recorder) or by the script (null). */
function forkCall(
  state: ReplayState,
  call: InterceptedRequest,
  request: MatchRequest,
  forkAt: number,
): Promise<InterceptOutcome> | null {
  const { options, diagnostics } = state.parts;
  const { upstream, output } = state;
  if (!state.forked)
    diagnostics.push({
      code: 'CASSETTE_FORKED',
      level: 'info',
      message: `Forked from ${options.file} after ${forkAt} model turn(s): the ${options.fork?.to === 'live' ? `live model (${upstream ?? 'the vendor'})` : 'scripted model'} answers from turn ${forkAt} on${output ? `, recorded into ${output}` : ''}.`,
    });
  state.forked = true;
  return state.recorder ? state.recorder.forward(call, request) : null;
}

/**
 * A request no recorded interaction matches: a side request, or any in lenient mode, goes to the script with a warning;
 * else it fails the attempt and the engine is answered 400. Changes `counts`.
 */
function missCall(
  state: ReplayState,
  call: InterceptedRequest,
  found: Extract<MatchResult, { kind: 'miss' }>,
  what: string,
): InterceptOutcome | null {
  const { options, diagnostics, fail } = state.parts;
  const nearest = found.nearest === null ? null : state.cassette.interactions[found.nearest];
  // An empty cassette (a recording that kept nothing) says so first, and how to re-record it.
  const message = nearest
    ? `No recorded interaction of ${options.file} matches ${what}; the nearest is #${nearest.seq} (${nearest.request.method} ${nearest.request.path}, turn ${nearest.position}). Differences:\n${formatDifferences(found.differences)}`
    : `The cassette is empty: ${options.file} has no recorded interaction to answer ${what}. ${RERECORD}`;
  // A side request (title, token count) is the engine's bookkeeping: the script answers it, with a warning.
  if (call.sideKind || !state.strict) {
    state.counts.missed += call.sideKind ? 0 : 1;
    diagnostics.push({
      code: 'CASSETTE_MISS',
      level: 'warning',
      message: `${message}\nServed by the scripted model.`,
    });
    return null;
  }
  state.counts.missed += 1;
  diagnostics.push({ code: 'CASSETTE_MISS', level: 'error', message });
  fail(
    new AgentHarnessError('CASSETTE_MISS', message, {
      details: { cassette: options.file, request: what, differences: found.differences },
    }),
  );
  // In an attempt the engine gets the gist (it echoes it as its own error); the attempt's failure has the diff.
  const body = options.briefMisses ? `${what} has no recorded answer in ${options.file}` : message;
  call.wire.respondError(call.response, 400, `agent-harness cassette: CASSETTE_MISS: ${body}`, 'cassette_miss');
  return { status: 400, note: 'missed' };
}

/** The replay's report: finishes a live fork's recording, and says (or fails on) the interactions never asked for. */
async function finishReplay(state: ReplayState): Promise<CassetteReport> {
  const { options, diagnostics, fail, error } = state.parts;
  const { cassette, recorder, output, used } = state;
  const fork = options.fork;
  const forkAt = fork?.at;
  if (recorder && output) {
    const kept = await recorder.finish(error() === null);
    if (!kept.written) diagnostics.push(notWritten(output, error(), kept.partial));
  } else await recorder?.finish(error() === null);
  // Past a fork, the recorded rest of the conversation is not expected.
  const unused = cassette.interactions.filter(
    (interaction, index) => !used.has(index) && (forkAt === undefined || interaction.position < forkAt),
  );
  const unusedCalls = unused.filter((interaction) => interaction.side_kind === null);
  if (unused.length > 0) {
    const list = unused.map(
      (i) =>
        `#${i.seq} ${i.request.method} ${i.request.path}${i.side_kind ? ` (${i.side_kind})` : ` (turn ${i.position})`}`,
    );
    const message = `${unused.length} recorded interaction(s) of ${options.file} were never asked for: ${list.join(', ')}.`;
    const failing = state.strict && unusedCalls.length > 0;
    diagnostics.push({ code: 'CASSETTE_UNUSED', level: failing ? 'error' : 'warning', message });
    if (failing) fail(new AgentHarnessError('CASSETTE_UNUSED', message, { details: { cassette: options.file } }));
  }
  return {
    mode: 'replay',
    file: options.file,
    interactions: cassette.interactions.length,
    ...state.counts,
    unused: unused.length,
    diagnostics,
    error: error(),
    ...(fork && state.forked ? { fork: { at: fork.at, to: fork.to, recorded: output } } : {}),
  };
}
