/**
 * A `fetch` for the vendor SDK clients that bounds each HTTP request in time and size. The SDKs' own `timeout`
 * covers only the wait for the response headers (openai 6.x and @anthropic-ai/sdk clear their timer once `fetch`
 * resolves), so a server that sends headers and then stalls the body or the SSE stream would hold a call forever,
 * and a non-streaming response is buffered whole by `response.json()`. Passed to the clients as their `fetch`
 * option, this wrapper gives every request one deadline covering headers and body, an idle limit between body
 * chunks, and a byte cap that stops reading (and cancels the socket) as soon as it is passed. It pulls the body
 * chunk by chunk, so at most one chunk is held beyond what the SDK itself keeps.
 */
import { AgentHarnessError } from '../errors/index.js';

/** Limits of one HTTP request of a caller. */
export interface FetchLimits {
  /** Deadline of the whole request, headers and body, in ms. */
  deadlineMs: number;
  /** Longest wait for the next body chunk (or SSE event bytes), in ms. */
  idleTimeoutMs: number;
  /** Most body bytes read; past it the request ends with LLM_RESPONSE_TOO_LARGE. */
  maxResponseBytes: number;
}

/** What the limit errors carry so the message names the caller. */
interface FetchContext {
  vendor: string;
}

/** The `fetch` signature the SDKs accept (the global one). */
type Fetch = typeof globalThis.fetch;

/**
 * Wraps `fetchImpl` so each request ends with LLM_TIMEOUT past `deadlineMs` or after `idleTimeoutMs` without a
 * body chunk, and with LLM_RESPONSE_TOO_LARGE past `maxResponseBytes` (a larger `content-length` fails at once).
 * The errors are AgentHarnessErrors; the SDKs pass them through (as the body's error) or wrap them as `cause`.
 */
export function createBoundedFetch(limits: FetchLimits, context: FetchContext, fetchImpl: Fetch = fetch): Fetch {
  return async (input, init) => {
    const controller = new AbortController();
    const outer = init?.signal;
    const onOuterAbort = (): void => controller.abort(outer?.reason);
    if (outer?.aborted) onOuterAbort();
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
    const deadline = setTimeout(
      () => controller.abort(timeoutError(context, `did not finish within its deadline of ${limits.deadlineMs} ms`)),
      limits.deadlineMs,
    );
    const finish = (): void => {
      clearTimeout(deadline);
      outer?.removeEventListener('abort', onOuterAbort);
    };
    let response: Response;
    try {
      response = await fetchImpl(input, { ...init, signal: controller.signal });
    } catch (error) {
      finish();
      throw ownReason(controller.signal) ?? error;
    }
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > limits.maxResponseBytes) {
      const error = tooLargeError(context, limits.maxResponseBytes, `declares content-length ${declared}`);
      controller.abort(error);
      finish();
      throw error;
    }
    if (!response.body) {
      finish();
      return response;
    }
    const reader = response.body.getReader();
    let received = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(stream) {
        const idle = setTimeout(
          () =>
            controller.abort(timeoutError(context, `sent no body bytes for ${limits.idleTimeoutMs} ms (idle timeout)`)),
          limits.idleTimeoutMs,
        );
        try {
          const { done, value } = await reader.read();
          if (done) {
            finish();
            stream.close();
            return;
          }
          received += value.byteLength;
          if (received > limits.maxResponseBytes) {
            const error = tooLargeError(context, limits.maxResponseBytes, `sent more than ${received - 1} bytes`);
            controller.abort(error);
            finish();
            stream.error(error);
            return;
          }
          stream.enqueue(value);
        } catch (error) {
          finish();
          stream.error(ownReason(controller.signal) ?? error);
        } finally {
          clearTimeout(idle);
        }
      },
      cancel(reason) {
        finish();
        controller.abort(reason);
        return reader.cancel(reason).catch(() => undefined);
      },
    });
    const bounded = new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // A constructed Response has no url; the SDKs log it and put it on their errors.
    Object.defineProperty(bounded, 'url', { value: response.url });
    return bounded;
  };
}

/** The abort reason when it is one of ours (a limit), else null (the caller's own signal or a network error). */
function ownReason(signal: AbortSignal): AgentHarnessError | null {
  return signal.aborted && signal.reason instanceof AgentHarnessError ? signal.reason : null;
}

function timeoutError(context: FetchContext, what: string): AgentHarnessError {
  return new AgentHarnessError('LLM_TIMEOUT', `${context.vendor} response ${what}.`, {
    details: { vendor: context.vendor },
  });
}

function tooLargeError(context: FetchContext, max: number, what: string): AgentHarnessError {
  return new AgentHarnessError(
    'LLM_RESPONSE_TOO_LARGE',
    `${context.vendor} response ${what}, over the cap of ${max} bytes (maxResponseBytes); reading stopped there.`,
    { details: { vendor: context.vendor, maxResponseBytes: max } },
  );
}
