/**
 * The recording half of a cassette, shared by a recording and by a replay forked onto the live model: each wire
 * request is forwarded upstream with the user's key (read from their environment, never stored) and streamed back to
 * the engine; when a file is given, the answer is captured as an interaction, redacted, and `FILE.partial` rewritten
 * atomically after each one (a crash keeps what was recorded there). The cassette itself is written only when the
 * recording succeeded (no upstream failure, at least one interaction): a failed recording never leaves a cassette that
 * `auto` would then replay (and miss on) run after run. A forked replay also copies in the interactions it served
 * from the source cassette, so its file is the whole forked conversation, replayable on its own.
 */
import fs from 'node:fs';
import { AgentHarnessError } from '../errors/index.js';
import type { InterceptedRequest, InterceptOutcome } from '../model/server.js';
import type { WireApiId } from '../model/wire-api.js';
import { writeJsonAtomic } from '../runtime/atomic-write.js';
import type { MatchRequest } from './match.js';
import { templatePaths, type NormalizeContext } from './normalize.js';
import { type CapturedResponse, DEFAULT_UPSTREAMS, forwardRequest, KEY_VARIABLES, vendorKey } from './record.js';
import { Redactor } from './redact.js';
import { CASSETTE_FORMAT, type Cassette, type CassetteInteraction } from './schema.js';

/** Options of {@link openRecorder}. */
export interface RecorderOptions {
  /** The cassette written, or null to forward without keeping anything (a live fork without an output). */
  file: string | null;
  /** The origin requests are forwarded to (default: the vendor of each wire API); the request path is kept. */
  upstream: string | null;
  /** Where the user's keys and secret variables are read from. */
  hostEnv: NodeJS.ProcessEnv;
  /** The engine recorded, written into the cassette. */
  engine: string | null;
  /** The attempt's paths, templated out of the responses. */
  context: () => NormalizeContext;
  /** Called with what fails the attempt (an unreachable upstream). */
  fail: (error: AgentHarnessError) => void;
  /** Redaction rules that already fired on interactions copied in (a fork's source cassette). */
  redactions?: readonly string[];
}

/** A recorder attached to one attempt's model server. */
export interface Recorder {
  /** Forwards `call` upstream, streams the answer to the engine and records it (when there is a file). */
  forward(call: InterceptedRequest, match: MatchRequest): Promise<InterceptOutcome>;
  /** Appends an interaction served from another cassette (a fork's replayed part), renumbered. */
  copy(interaction: CassetteInteraction): void;
  /** Interactions in the file so far. */
  readonly count: number;
  /**
   * Waits for the writes; when `succeeded` and something was recorded, writes the cassette and removes its partial
   * file, else leaves the cassette path alone and keeps the partial file only if it holds an interaction.
   */
  finish(succeeded: boolean): Promise<{ written: boolean; partial: string | null }>;
}

/** How to re-record a cassette: said where one is empty or was not written. */
export const RERECORD =
  'Re-record it: run the test again with -u (vitest -u) in model auto, or agent-harness start --model record --cassette FILE with the vendor key set.';

/** The message of a request that cannot be forwarded for want of a key. */
function noKeyMessage(wire: InterceptedRequest['wire']['id']): string {
  return `agent-harness cassette: no key to forward ${wire} to the vendor with; set ${KEY_VARIABLES[wire].join(' or ')}`;
}

/** What a recorder reads and changes: the recording's state, explicit. */
interface RecorderState {
  readonly options: RecorderOptions;
  readonly redactor: Redactor;
  /** Redaction rules that fired on the interactions copied in. */
  readonly copiedRedactions: ReadonlySet<string>;
  /** The cassette as recorded so far (interactions in `seq` order). */
  readonly cassette: Cassette;
  /** `FILE.partial`, rewritten after each interaction; null without a file. */
  readonly partial: string | null;
  /** The writes so far, in order (a failed write is dropped: the next rewrites the whole file). */
  writing: Promise<void>;
  /** The last interaction number handed out. */
  seq: number;
}

/** Opens a recorder (see the module comment). */
export function openRecorder(options: RecorderOptions): Recorder {
  const keys = (Object.keys(KEY_VARIABLES) as WireApiId[]).flatMap((wire) => {
    const key = vendorKey(wire, options.hostEnv);
    return key ? [{ value: key.value, rule: `vendor-key:${key.name}` }] : [];
  });
  const state: RecorderState = {
    options,
    redactor: new Redactor(options.hostEnv, keys),
    copiedRedactions: new Set(options.redactions ?? []),
    cassette: {
      format: CASSETTE_FORMAT,
      created_at: new Date().toISOString(),
      engine: options.engine,
      upstream: options.upstream ? new URL(options.upstream).origin : null,
      redactions: [],
      interactions: [],
    },
    partial: options.file === null ? null : `${options.file}.partial`,
    writing: Promise.resolve(),
    seq: 0,
  };
  return {
    get count() {
      return state.cassette.interactions.length;
    },
    copy: (interaction) => copyInteraction(state, interaction),
    forward: (call, match) => forwardCall(state, call, match),
    finish: (succeeded) => finishRecording(state, succeeded),
  };
}

/**
 * Queues a write of the cassette as it is now to `file` (default the partial file; none without a file); changes
 * `writing` and the cassette's `redactions`.
 */
function saveCassette(state: RecorderState, file: string | null = state.partial): Promise<void> {
  if (file === null) return state.writing;
  const { cassette } = state;
  cassette.redactions = [...new Set([...state.copiedRedactions, ...state.redactor.fired])];
  const snapshot = JSON.parse(JSON.stringify(cassette)) as Cassette;
  state.writing = state.writing.then(() => writeJsonAtomic(file, snapshot)).catch(() => undefined);
  return state.writing;
}

/** {@link Recorder.copy}: changes `seq` and the cassette's interactions. */
function copyInteraction(state: RecorderState, interaction: CassetteInteraction): void {
  state.seq += 1;
  state.cassette.interactions.push({ ...interaction, seq: state.seq });
  void saveCassette(state);
}

/** {@link Recorder.forward}: changes `seq` (at once, so interactions keep their arrival order) and the interactions. */
async function forwardCall(
  state: RecorderState,
  call: InterceptedRequest,
  match: MatchRequest,
): Promise<InterceptOutcome> {
  const { options } = state;
  const wire = call.wire.id;
  const key = vendorKey(wire, options.hostEnv);
  if (!key) {
    call.wire.respondError(call.response, 401, noKeyMessage(wire), 'authentication_error');
    return { status: 401, note: 'no_key' };
  }
  state.seq += 1;
  const mine = state.seq;
  const origin = options.upstream ?? DEFAULT_UPSTREAMS[wire];
  try {
    const captured = await forwardRequest({
      wire,
      origin,
      method: call.request.method,
      path: call.request.path,
      query: call.request.query,
      headers: call.request.headers,
      body: call.rawBody,
      key: key.value,
      response: call.response,
    });
    // The engine closed its connection before the upstream answered: nothing to keep.
    if (captured === null) return { status: 499, note: 'abandoned' };
    if (options.file === null) return { status: captured.status, note: 'forwarded' };
    state.cassette.interactions.push(interactionOf(state, mine, call, match, captured));
    state.cassette.interactions.sort((a, b) => a.seq - b.seq);
    await saveCassette(state);
    return { status: captured.status, note: 'recorded' };
  } catch (caught) {
    const failure =
      caught instanceof AgentHarnessError
        ? caught
        : new AgentHarnessError('CASSETTE_UPSTREAM_FAILED', `Recording failed: ${(caught as Error).message}`, {
            cause: caught,
          });
    options.fail(failure);
    if (!call.response.headersSent) call.wire.respondError(call.response, 502, failure.message, 'upstream_failed');
    else call.response.destroy();
    return { status: 502, note: 'upstream_failed' };
  }
}

/** The interaction `seq` as kept: the request and the answer redacted, the attempt's paths templated out. */
function interactionOf(
  state: RecorderState,
  seq: number,
  call: InterceptedRequest,
  match: MatchRequest,
  captured: CapturedResponse,
): CassetteInteraction {
  const { redactor } = state;
  const context = state.options.context();
  return {
    seq,
    wire: call.wire.id,
    side_kind: call.sideKind,
    position: match.position,
    request: {
      method: call.request.method,
      path: call.request.path,
      query: redactor.query(call.request.query),
      headers: redactor.requestHeaders(call.request.headers),
      normalized: redactor.value(match.normalized),
      hash: match.hash,
    },
    response: {
      status: captured.status,
      headers: captured.headers,
      kind: captured.kind,
      chunks: (captured.kind === 'sse' && call.wire.rewriteStream
        ? call.wire.rewriteStream(captured.chunks, (text) => templatePaths(text, context))
        : captured.chunks
      ).map((chunk) => ({
        delay_ms: chunk.delay_ms,
        data: redactor.text(templatePaths(chunk.data, context)),
      })),
      complete: captured.complete,
    },
  };
}

/** {@link Recorder.finish}: waits for `writing`, then writes the cassette, or keeps or removes the partial file. */
async function finishRecording(
  state: RecorderState,
  succeeded: boolean,
): Promise<{ written: boolean; partial: string | null }> {
  const { options, partial } = state;
  await state.writing;
  if (options.file === null || partial === null) return { written: false, partial: null };
  const recorded = state.cassette.interactions.length > 0;
  if (succeeded && recorded) {
    await saveCassette(state, options.file);
    fs.rmSync(partial, { force: true });
    return { written: fs.existsSync(options.file), partial: null };
  }
  if (!recorded) {
    fs.rmSync(partial, { force: true });
    return { written: false, partial: null };
  }
  await saveCassette(state, partial);
  return { written: false, partial };
}
