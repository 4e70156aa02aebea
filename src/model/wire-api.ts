/**
 * The contract of one vendor wire API in the scripted model server. Each wire module decides which requests
 * are its own, how many model turns a request's history holds, and how a turn is rendered. The server owns
 * everything vendor-neutral (turn selection, recording, egress guard), so adding Anthropic Messages, Gemini or
 * OpenAI Chat is one new module plus one entry in the server's `WIRE_APIS`. Which tool an engine's shell call or
 * intent goes to is not the wire's knowledge: each request carries the tool tables of the engines on its wire.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ContentTurn } from './script.js';
import type { EngineToolTable, ShellPoll } from './tool-table.js';

/**
 * Ids of the wire APIs the model server can speak. Declared here because `model/` sits below `engines/` in the
 * layering; an engine's `tools.wire` (its tool table, `engines/<id>/facts.ts`) is one of them.
 */
export type WireApiId = 'openai-responses' | 'anthropic-messages' | 'gemini' | 'openai-chat';

/** A parsed request as a wire module sees it. */
export interface WireRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (null when the request had none). */
  body: unknown;
  /**
   * The tool tables of the engines that speak this wire (how each takes a shell call or an intent), in registry
   * order; absent or empty: a generic `shell {command}` call.
   */
  tools?: readonly EngineToolTable[];
}

/** One chunk of a streamed response as it was received: its text and the delay before it (ms). */
export interface StreamChunk {
  delay_ms: number;
  data: string;
}

/**
 * Where a recording (cassette/record.ts) forwards this API's requests and how it signs them with the user's key: the
 * vendor's own facts, declared with the wire that speaks them.
 */
export interface WireUpstream {
  /** The vendor's origin, used when the recording is given no `--upstream`. */
  readonly origin: string;
  /** The variables the user's key is read from, in order (the first set one wins). */
  readonly keyVariables: readonly string[];
  /**
   * The header the key goes in when the engine's request carries none of the known credential headers
   * (`authorization` as `Bearer <key>`, the others as the bare key).
   */
  readonly authHeader: 'authorization' | 'x-api-key' | 'x-goog-api-key';
}

/** One vendor wire API. */
export interface WireApiHandler {
  /** The id recorded with each request. */
  readonly id: WireApiId;
  /** The vendor's API this wire records from (see {@link WireUpstream}). */
  readonly upstream: WireUpstream;
  /** Routes this module serves (`"POST /v1/responses"`), listed in the 404 message. */
  readonly paths: readonly string[];
  /**
   * True when the request is this API's model call. Takes the whole request rather than (method, path)
   * because some APIs route on more (Gemini puts the model and `:streamGenerateContent` in the path,
   * Anthropic adds `?beta=true`).
   */
  matches(request: WireRequest): boolean;
  /**
   * Number of model outputs already in the request's history. This is the index of the scripted turn to
   * answer, which makes turn selection stateless (see `selectTurn` in script.ts).
   */
  countModelTurns(body: unknown): number;
  /** Text of the last user message in the request (what the agent was just asked), or null. */
  lastUserText(body: unknown): string | null;
  /**
   * The kind of the engine's own bookkeeping call (token counting, session title, router or other
   * structured-output check), or null for a real model call. The server answers side requests before it picks a
   * scripted turn — `respond` gets an empty text turn and ignores it — so they never use up or fail with one.
   */
  sideRequestKind?(request: WireRequest): string | null;
  /** Writes the 200 response for a text/shell/final `turn` (SSE or JSON, as the request asked). */
  respond(request: WireRequest, turn: ContentTurn, response: ServerResponse): void;
  /**
   * The poll this request calls for, when its last input is the output of a shell call (or of an earlier poll) whose
   * process still runs, as the engine's tool table's `poll.running` reads it; null otherwise. Absent: the wire's
   * engines have no poll (their shell tools return when the command ends).
   */
  pendingPoll?(request: WireRequest): PendingPoll | null;
  /** Writes the 200 response that calls `poll.tool` for the running process of `pending`. */
  respondPoll?(request: WireRequest, pending: PendingPoll, response: ServerResponse): void;
  /** Writes an error with `status` in this API's JSON error shape. */
  respondError(response: ServerResponse, status: number, message: string, type: string): void;
  /**
   * A streamed (SSE) response rewritten by `rewrite` (a cassette templating the attempt's paths) where rewriting each
   * chunk alone cannot reach: a value this API splits across events (Chat Completions' tool-call arguments). The
   * caller then rewrites each chunk as well. Absent: each chunk alone is enough.
   */
  rewriteStream?(chunks: readonly StreamChunk[], rewrite: (text: string) => string): StreamChunk[];
}

/** A shell command still running after its tool returned (see {@link WireApiHandler.pendingPoll}). */
export interface PendingPoll {
  /** The engine's poll tool. */
  poll: ShellPoll;
  /** The running process's session number, as the tool output gave it. */
  sessionId: number;
  /** Index of the script turn whose shell call started the process. */
  turnIndex: number;
  /** Polls already made for that call. */
  polls: number;
}
