/**
 * Model-side faults the script can ask for, answered by the server the same way for every wire API (they are
 * transport faults, not vendor payloads): a stream that stalls, a body no client can parse, a connection cut in the
 * middle of an event. Each must end an attempt as `failed` with a stable code within a bounded time.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ModelTurn } from './script.js';

/** A fault turn. */
export type FaultTurn = Extract<ModelTurn, { type: 'stall' | 'malformed' | 'drop' }>;

/** True for the turn types {@link respondFault} answers. */
export function isFaultTurn(turn: ModelTurn): turn is FaultTurn {
  return turn.type === 'stall' || turn.type === 'malformed' || turn.type === 'drop';
}

/** True when the request asked for a stream (SSE): `stream: true` in the body, or gemini's `alt=sse`. */
function wantsStream(body: unknown, query: URLSearchParams, path: string): boolean {
  return (
    (body as { stream?: unknown } | null)?.stream === true ||
    query.get('alt') === 'sse' ||
    path.endsWith(':streamGenerateContent')
  );
}

/**
 * Answers a fault turn. Stalled responses are registered in `open` so the server's `close()` can end them (a stall
 * without `ms` lasts until then, or until the client gives up).
 */
export function respondFault(
  turn: FaultTurn,
  request: { body: unknown; query: URLSearchParams; path: string; raw: IncomingMessage },
  response: ServerResponse,
  open: Set<ServerResponse>,
): void {
  const stream = wantsStream(request.body, request.query, request.path);
  const contentType = stream ? 'text/event-stream' : 'application/json';
  if (turn.type === 'malformed') {
    response.writeHead(200, { 'content-type': contentType });
    response.end(
      stream
        ? 'data: {"agent-harness": malformed event\n\nevent: ???\ndata: }{\n\n'
        : '{"agent-harness": malformed body',
    );
    return;
  }
  response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
  if (turn.type === 'drop') {
    // Half of an event, flushed, then the socket is destroyed: the client sees a connection reset mid-stream.
    response.write(stream ? 'data: {"type": "response.crea' : '{"id": "dropp', () => response.destroy());
    return;
  }
  response.flushHeaders();
  open.add(response);
  const end = (): void => {
    open.delete(response);
    response.destroy();
  };
  response.on('close', () => open.delete(response));
  if (turn.ms !== undefined) {
    const timer = setTimeout(end, turn.ms);
    response.on('close', () => clearTimeout(timer));
  }
}
