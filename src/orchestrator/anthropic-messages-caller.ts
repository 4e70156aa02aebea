/**
 * An LLMCaller over the Anthropic Messages wire API, built on the official `@anthropic-ai/sdk` client with
 * `baseURL` pointed at the endpoint, SSE streaming or not. System messages become the `system` field.
 * `@anthropic-ai/sdk` is an optional peer dependency, imported when the caller is created (see vendor-sdk.ts).
 */
import { createBoundedFetch } from './bounded-fetch.js';
import { callWithRetries, normalizeRetryPolicy } from './call-with-retries.js';
import { normalizeCallerLimits, normalizeDefaultMaxTokens } from './caller-limits.js';
import { loadAnthropicSdk, vendorErrorClasses } from './vendor-sdk.js';
import type { HttpCallerOptions } from './openai-chat-caller.js';
import type { LLMCaller, LLMResponse, LLMToolCall, LLMUsage } from './types.js';

/**
 * Creates an Anthropic Messages caller. It starts importing `@anthropic-ai/sdk`; when that package is not
 * installed, each call rejects with DEPENDENCY_MISSING (`npm install @anthropic-ai/sdk`).
 */
export function createAnthropicMessagesCaller(options: HttpCallerOptions): LLMCaller {
  const policy = normalizeRetryPolicy(options.retry);
  const limits = normalizeCallerLimits(options);
  const defaultMaxTokens = normalizeDefaultMaxTokens(options.defaultMaxTokens);
  // SDK retry off for the same reason as the OpenAI caller: one policy, counted attempts, one code set.
  const ready = loadAnthropicSdk().then((Anthropic) => ({
    client: new Anthropic({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      maxRetries: 0,
      timeout: limits.deadlineMs,
      fetch: createBoundedFetch(limits, { vendor: 'anthropic-messages' }),
    }),
    errorClasses: vendorErrorClasses(Anthropic),
  }));
  ready.catch(() => {}); // a caller never called must not leave an unhandled rejection behind
  return {
    async call(input): Promise<LLMResponse> {
      const { client, errorClasses } = await ready;
      const started = performance.now();
      const system = input.messages
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n\n');
      const params = {
        model: input.model,
        max_tokens: input.maxTokens ?? defaultMaxTokens,
        messages: input.messages
          .filter((m) => m.role !== 'system')
          .map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content })),
        ...(system ? { system } : {}),
        ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
      };
      const request = { ...(input.signal ? { signal: input.signal } : {}) };
      const { value, attempts } = await callWithRetries(
        async () => {
          if (!input.stream) {
            const message = await client.messages.create({ ...params, stream: false }, request);
            const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
            const toolCalls: LLMToolCall[] = message.content.flatMap((block) =>
              block.type === 'tool_use'
                ? [{ id: block.id, name: block.name, arguments: JSON.stringify(block.input) }]
                : [],
            );
            return {
              text,
              toolCalls,
              model: message.model,
              usage: { inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens },
            };
          }
          const stream = await client.messages.create({ ...params, stream: true }, request);
          let text = '';
          let model = input.model;
          let usage: LLMUsage | null = null;
          const calls = new Map<number, LLMToolCall>();
          for await (const event of stream) {
            if (event.type === 'message_start') {
              model = event.message.model;
              usage = {
                inputTokens: event.message.usage.input_tokens,
                outputTokens: event.message.usage.output_tokens,
              };
            } else if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
              calls.set(event.index, { id: event.content_block.id, name: event.content_block.name, arguments: '' });
            } else if (event.type === 'content_block_delta') {
              if (event.delta.type === 'text_delta') text += event.delta.text;
              else if (event.delta.type === 'input_json_delta') {
                const call = calls.get(event.index);
                if (call) call.arguments += event.delta.partial_json;
              }
            } else if (event.type === 'message_delta' && usage) {
              usage = { inputTokens: usage.inputTokens, outputTokens: event.usage.output_tokens };
            }
          }
          // The SDKs end a stream quietly when it is aborted (an AbortError ends the iteration): partial text is
          // not an answer.
          input.signal?.throwIfAborted();
          return { text, toolCalls: [...calls.values()], model, usage };
        },
        {
          vendor: 'anthropic-messages',
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
