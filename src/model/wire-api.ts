/**
 * The contract of one vendor wire API in the scripted model server. Each wire module decides which requests
 * are its own, how many model turns a request's history holds, and how a turn is rendered.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WireApi } from '../engines/engine.js';
import type { ModelTurn } from './script.js';

/** A parsed request as a wire module sees it. */
export interface WireRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/** One vendor wire API. */
export interface WireApiHandler {
  /** The id recorded with each request. */
  readonly id: WireApi;
  /** Paths this module serves, for the 404 message. */
  readonly paths: readonly string[];
  /** True when the request is this API's model call. */
  matches(request: WireRequest): boolean;
  /** Number of model outputs already in the request's history (= index of the turn to answer). */
  countModelTurns(body: unknown): number;
  /** Writes the response for `turn` (SSE or JSON, as the request asked). */
  respond(request: WireRequest, turn: ModelTurn, response: ServerResponse): void;
  /** Writes an error in this API's error shape. */
  respondError(response: ServerResponse, status: number, message: string, type: string): void;
}
