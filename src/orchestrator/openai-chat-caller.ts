/**
 * An LLMCaller over the OpenAI Chat Completions wire API (any OpenAI-compatible endpoint), built on the
 * official `openai` client with `baseURL` pointed at the endpoint, SSE streaming or not. `openai` is an optional
 * peer dependency, imported when the caller is created (see vendor-sdk.ts).
 */
import { createBoundedFetch } from './bounded-fetch.js';
import { callWithRetries, normalizeRetryPolicy, type RetryPolicy } from './call-with-retries.js';
import { normalizeCallerLimits, normalizeDefaultMaxTokens } from './caller-limits.js';
import { loadOpenAiSdk, vendorErrorClasses } from './vendor-sdk.js';
import type { LLMCaller, LLMResponse, LLMToolCall, LLMUsage } from './types.js';

/** Options of the HTTP callers. */
export interface HttpCallerOptions {
  /** Endpoint root, e.g. `http://127.0.0.1:PORT/v1` (openai) or `http://127.0.0.1:PORT` (anthropic). */
  baseURL: string;
  /** API key; the scripted server accepts any value. */
  apiKey: string;
  /** Deadline of each HTTP attempt, headers and body together (default 60 s): LLM_TIMEOUT. */
  timeoutMs?: number;
  /** Longest wait for the next body chunk once the headers are in (default 30 s, never past timeoutMs): LLM_TIMEOUT. */
  idleTimeoutMs?: number;
  /** Most bytes of one response body read (default 8 MiB): LLM_RESPONSE_TOO_LARGE, reading stops at the cap. */
  maxResponseBytes?: number;
  /** Retry settings; see {@link RetryPolicy}. */
  retry?: Partial<RetryPolicy>;
  /** max_tokens when a call gives none (default 1024; Anthropic requires one). */
  defaultMaxTokens?: number;
}

/**
 * Creates an OpenAI Chat Completions caller. It starts importing `openai`; when that package is not installed,
 * each call rejects with DEPENDENCY_MISSING (`npm install openai`).
 */
export function createOpenAiChatCaller(options: HttpCallerOptions): LLMCaller {
  const policy = normalizeRetryPolicy(options.retry);
  const limits = normalizeCallerLimits(options);
  const defaultMaxTokens = normalizeDefaultMaxTokens(options.defaultMaxTokens);
  // The SDK's own retry is off (maxRetries 0): one policy for both vendors, each attempt counted in the trace,
  // and every error mapped to one code set; our loop honours retry-after as the SDK's would.
  const ready = loadOpenAiSdk().then((OpenAI) => ({
    client: new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      maxRetries: 0,
      timeout: limits.deadlineMs,
      fetch: createBoundedFetch(limits, { vendor: 'openai-chat' }),
    }),
    errorClasses: vendorErrorClasses(OpenAI),
  }));
  ready.catch(() => {}); // a caller never called must not leave an unhandled rejection behind
  return {
    async call(input): Promise<LLMResponse> {
      const { client, errorClasses } = await ready;
      const started = performance.now();
      const params = {
        model: input.model,
        messages: input.messages,
        ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
        max_tokens: input.maxTokens ?? defaultMaxTokens,
      };
      const request = { ...(input.signal ? { signal: input.signal } : {}) };
      const { value, attempts } = await callWithRetries(
        async () => {
          if (!input.stream) {
            const completion = await client.chat.completions.create({ ...params, stream: false }, request);
            const message = completion.choices[0]?.message;
            const toolCalls: LLMToolCall[] = (message?.tool_calls ?? []).flatMap((call) =>
              call.type === 'function'
                ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }]
                : [],
            );
            const usage = completion.usage
              ? { inputTokens: completion.usage.prompt_tokens, outputTokens: completion.usage.completion_tokens }
              : null;
            return { text: message?.content ?? '', toolCalls, model: completion.model, usage };
          }
          const stream = await client.chat.completions.create(
            { ...params, stream: true, stream_options: { include_usage: true } },
            request,
          );
          let text = '';
          let model = input.model;
          let usage: LLMUsage | null = null;
          const calls = new Map<number, LLMToolCall>();
          for await (const chunk of stream) {
            model = chunk.model || model;
            if (chunk.usage)
              usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
            const delta = chunk.choices[0]?.delta;
            if (delta?.content) text += delta.content;
            for (const piece of delta?.tool_calls ?? []) {
              const call = calls.get(piece.index) ?? {
                id: piece.id ?? '',
                name: piece.function?.name ?? '',
                arguments: '',
              };
              call.arguments += piece.function?.arguments ?? '';
              calls.set(piece.index, call);
            }
          }
          // The SDKs end a stream quietly when it is aborted (an AbortError ends the iteration): partial text is
          // not an answer.
          input.signal?.throwIfAborted();
          return { text, toolCalls: [...calls.values()], model, usage };
        },
        {
          vendor: 'openai-chat',
          model: input.model,
          policy,
          errorClasses,
          ...(input.signal ? { signal: input.signal } : {}),
        },
      );
      return { ...value, latencyMs: Math.round(performance.now() - started), attempts };
    },
  };
}
