/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), as opencode 1.18.33 speaks it through its bundled
 * `@ai-sdk/openai-compatible` provider (and other engines that speak it: each one's tools in its tool table). With `stream: true` the answer is SSE `data: {chat.completion.chunk}`
 * blocks ending in `data: [DONE]`: text as `delta.content`, a shell call as `delta.tool_calls` whose
 * `arguments` arrive in several pieces, `finish_reason` `stop`/`tool_calls`, and a usage chunk when
 * `stream_options.include_usage` is set. Without `stream` a plain `chat.completion` JSON is answered.
 *
 * Side requests are answered without touching the script: opencode asks a small model for a session title
 * (system prompt "You are a title generator…"); such a request counts as no model turn and gets a short title.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { rewriteChatToolArguments } from './chat-stream-arguments.js';
import { finalText, nativeIntentCall, requestWorkingDirectory } from './script-turns.js';
import type { ContentTurn } from './script.js';
import { shellToolCall } from './tool-table.js';
import type { WireApiHandler, WireRequest } from './wire-api.js';

type Json = Record<string, unknown>;
type RenderedTurn = ContentTurn;
type ChatMessage = { role?: unknown; content?: unknown };

/** The title answered to a title-generation side request. */
export const CHAT_SIDE_TITLE = 'Scripted session';

function id(prefix: string): string {
  return `${prefix}${randomBytes(8).toString('hex')}`;
}

function messages(body: unknown): ChatMessage[] {
  const list = (body as { messages?: unknown } | null)?.messages;
  return Array.isArray(list) ? list.filter((m): m is ChatMessage => typeof m === 'object' && m !== null) : [];
}

/** Text of a chat message's `content` (a string or a list of `{type:'text', text}` parts). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part as { text?: unknown }).text)
    .filter((t): t is string => typeof t === 'string')
    .join('\n');
}

/** True for opencode's session-title request (and other small-model side requests recognized by system prompt). */
export function isChatSideRequest(body: unknown): boolean {
  const system = messages(body)
    .filter((m) => m.role === 'system')
    .map((m) => contentText(m.content))
    .join('\n');
  return /you are a title generator/i.test(system);
}

function toolNames(body: unknown): string[] {
  const tools = (body as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return [];
  return tools
    .map(
      (t) => (t as { function?: { name?: unknown }; name?: unknown }).function?.name ?? (t as { name?: unknown }).name,
    )
    .filter((n): n is string => typeof n === 'string');
}

function usage(): Json {
  return { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
}

function sse(response: ServerResponse, chunk: Json | '[DONE]'): void {
  response.write(`data: ${chunk === '[DONE]' ? chunk : JSON.stringify(chunk)}\n\n`);
}

/** Splits `text` into `parts` non-empty pieces (fewer when the text is shorter). */
function pieces(text: string, parts: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

/** What a turn says: text content, or one tool call. Side requests get the title text. */
function rendered(
  request: WireRequest,
  turn: RenderedTurn,
): { text: string | null; call: { id: string; name: string; args: string } | null } {
  if (isChatSideRequest(request.body)) return { text: CHAT_SIDE_TITLE, call: null };
  const native =
    turn.type === 'shell'
      ? nativeIntentCall(turn, toolNames(request.body), request.tools ?? [], requestWorkingDirectory(request.body))
      : null;
  if (native) return { text: null, call: { id: id('call_'), name: native.name, args: JSON.stringify(native.args) } };
  if (turn.type === 'shell') {
    const { name, args } = shellToolCall(request.tools ?? [], toolNames(request.body), turn.command);
    return { text: null, call: { id: id('call_'), name, args: JSON.stringify(args) } };
  }
  return { text: turn.type === 'final' ? finalText(turn) : turn.text, call: null };
}

/** The OpenAI Chat Completions handler. */
export const openAiChatWire: WireApiHandler = {
  id: 'openai-chat',
  upstream: { origin: 'https://api.openai.com', keyVariables: ['OPENAI_API_KEY'], authHeader: 'authorization' },
  paths: ['POST /v1/chat/completions', 'POST /chat/completions'],
  matches: (request: WireRequest) =>
    request.method === 'POST' && (request.path === '/v1/chat/completions' || request.path === '/chat/completions'),
  /** Turn index rule: the number of `assistant` messages in `messages`. */
  sideRequestKind(request: WireRequest): string | null {
    return isChatSideRequest(request.body) ? 'title' : null;
  },
  countModelTurns(body: unknown): number {
    return messages(body).filter((m) => m.role === 'assistant').length;
  },
  lastUserText(body: unknown): string | null {
    const user = messages(body)
      .filter((m) => m.role === 'user')
      .at(-1);
    return user ? contentText(user.content) : null;
  },
  respond(request: WireRequest, turn: RenderedTurn, response: ServerResponse): void {
    const body = request.body as { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } };
    const model = String(body.model ?? 'scripted');
    const { text, call } = rendered(request, turn);
    const completionId = id('chatcmpl-');
    const created = Math.floor(Date.now() / 1000);
    const finish = call ? 'tool_calls' : 'stop';
    if (body.stream !== true) {
      const message: Json = { role: 'assistant', content: text };
      if (call)
        message.tool_calls = [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } }];
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: completionId,
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
          usage: usage(),
        }),
      );
      return;
    }
    const chunk = (delta: Json, finishReason: string | null = null): Json => ({
      id: completionId,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    });
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    sse(response, chunk({ role: 'assistant', content: '' }));
    if (call) {
      const [first, ...rest] = pieces(call.args, 3);
      sse(
        response,
        chunk({
          tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: first } }],
        }),
      );
      for (const piece of rest) sse(response, chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    } else if (text) {
      sse(response, chunk({ content: text }));
    }
    sse(response, chunk({}, finish));
    if (body.stream_options?.include_usage === true)
      sse(response, { id: completionId, object: 'chat.completion.chunk', created, model, choices: [], usage: usage() });
    sse(response, '[DONE]');
    response.end();
  },
  respondError(response: ServerResponse, status: number, message: string, type: string): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { message, type, param: null, code: type } }));
  },
  /** A tool call's arguments come in fragments: each call's are joined before they are rewritten. */
  rewriteStream: rewriteChatToolArguments,
};
