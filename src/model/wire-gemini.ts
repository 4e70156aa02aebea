/**
 * Gemini API (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`, `:generateContent`,
 * `:countTokens`; `/v1/…` accepted too), as gemini-cli 0.61.0 speaks it through `@google/genai` with
 * `GOOGLE_GEMINI_BASE_URL`. A streamed answer is SSE `data: {GenerateContentResponse}\n\n` blocks
 * (candidates[0].content {role: "model", parts}, finishReason "STOP", usageMetadata); a plain call gets one
 * GenerateContentResponse JSON. A shell turn is a `functionCall` to the engine's shell tool (its tool table,
 * `src/engines/<id>/facts.ts`) that the request declares. Errors use Google's shape
 * `{"error": {"code", "message", "status"}}`.
 *
 * Side requests are answered without the script: a request that asks for JSON (`generationConfig`
 * `responseMimeType: "application/json"` / `responseJsonSchema` / `responseSchema` — gemini-cli's model
 * router, next-speaker and loop-detection checks) is a side request (answered before any scripted turn is chosen) and gets a JSON text built from its
 * schema (a next-speaker check is told the user speaks next); `:countTokens` gets `{"totalTokens": 10}`.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { finalText, nativeIntentCall } from './script-turns.js';
import type { ContentTurn } from './script.js';
import { shellToolCall } from './tool-table.js';
import type { WireApiHandler, WireRequest } from './wire-api.js';

type Json = Record<string, unknown>;
type RenderedTurn = ContentTurn;
type Content = { role?: unknown; parts?: unknown };

/** `/v1beta/models/{model}:{method}` (also `/v1/` and `/v1alpha/`). */
const ROUTE = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/;

function contents(body: unknown): Content[] {
  const list = (body as { contents?: unknown } | null)?.contents;
  return Array.isArray(list) ? list.filter((c): c is Content => typeof c === 'object' && c !== null) : [];
}

function parts(content: Content): Json[] {
  return Array.isArray(content.parts)
    ? content.parts.filter((p): p is Json => typeof p === 'object' && p !== null)
    : [];
}

function generationConfig(body: unknown): Json {
  const config = (body as { generationConfig?: unknown; config?: unknown } | null)?.generationConfig;
  return typeof config === 'object' && config !== null ? (config as Json) : {};
}

/** The JSON schema of a structured-output request, or null when the request does not ask for JSON. */
export function geminiJsonSchema(body: unknown): unknown {
  const config = generationConfig(body);
  const schema = config.responseJsonSchema ?? config.responseSchema ?? config._responseJsonSchema;
  if (schema !== undefined) return schema;
  return config.responseMimeType === 'application/json' ? { type: 'object' } : null;
}

/** True for a structured-output side request (router, next-speaker, loop detection…). */
export function isGeminiSideRequest(body: unknown): boolean {
  return geminiJsonSchema(body) !== null;
}

/**
 * A value matching a JSON or OpenAPI schema (`OBJECT`, `INTEGER`… in any case), minimally: objects get every
 * property, enums their first value, numbers their `minimum` or 1 (gemini-cli's router rejects a
 * `complexity_score` below 1), strings "x", arrays [].
 */
export function geminiSampleFromSchema(schema: unknown, depth = 0): unknown {
  const s = (typeof schema === 'object' && schema !== null ? schema : {}) as Json;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const rawType = Array.isArray(s.type) ? s.type[0] : s.type;
  const type = typeof rawType === 'string' ? rawType.toLowerCase() : rawType;
  if (depth > 8) return null;
  switch (type) {
    case 'object': {
      const props = (typeof s.properties === 'object' && s.properties !== null ? s.properties : {}) as Json;
      return Object.fromEntries(
        Object.entries(props).map(([key, value]) => [key, geminiSampleFromSchema(value, depth + 1)]),
      );
    }
    case 'array':
      return [];
    case 'number':
    case 'integer':
      return typeof s.minimum === 'number' ? s.minimum : 1;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return 'x';
  }
}

/** The JSON answer to a side request: built from the schema, with the user speaking next. */
export function geminiSideAnswer(body: unknown): Json {
  const sample = geminiSampleFromSchema(geminiJsonSchema(body));
  const answer: Json = typeof sample === 'object' && sample !== null && !Array.isArray(sample) ? (sample as Json) : {};
  if ('next_speaker' in answer) answer.next_speaker = 'user';
  if ('reasoning' in answer) answer.reasoning = 'The scripted model has answered; the user speaks next.';
  return answer;
}

/** Names of the functions the request declares (`tools[].functionDeclarations[].name`). */
function functionNames(body: unknown): string[] {
  const tools = (body as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool) => {
    const decls = (tool as { functionDeclarations?: unknown }).functionDeclarations;
    return Array.isArray(decls)
      ? decls.map((d) => (d as { name?: unknown }).name).filter((n): n is string => typeof n === 'string')
      : [];
  });
}

/** Model parts of a turn: a thought part for reasoning, then the text or the function call. */
function turnParts(request: WireRequest, turn: RenderedTurn): Json[] {
  if (isGeminiSideRequest(request.body)) return [{ text: JSON.stringify(geminiSideAnswer(request.body)) }];
  const out: Json[] = [];
  if ((turn.type === 'text' || turn.type === 'final') && turn.reasoning)
    out.push({ text: turn.reasoning, thought: true });
  const native =
    turn.type === 'shell' ? nativeIntentCall(turn, functionNames(request.body), request.tools ?? [], null) : null;
  if (native) {
    out.push({ functionCall: { name: native.name, args: native.args } });
  } else if (turn.type === 'shell') {
    const { name, args } = shellToolCall(request.tools ?? [], functionNames(request.body), turn.command);
    out.push({ functionCall: { name, args } });
  } else {
    out.push({ text: turn.type === 'final' ? finalText(turn) : turn.text });
  }
  return out;
}

function usageMetadata(): Json {
  return { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
}

/** Google's `status` for an HTTP code. */
export function geminiErrorStatus(code: number): string {
  if (code === 400) return 'INVALID_ARGUMENT';
  if (code === 401) return 'UNAUTHENTICATED';
  if (code === 403) return 'PERMISSION_DENIED';
  if (code === 404) return 'NOT_FOUND';
  if (code === 429) return 'RESOURCE_EXHAUSTED';
  if (code === 503) return 'UNAVAILABLE';
  if (code === 504) return 'DEADLINE_EXCEEDED';
  return 'INTERNAL';
}

/** The Gemini API handler. */
export const geminiWire: WireApiHandler = {
  id: 'gemini',
  upstream: {
    origin: 'https://generativelanguage.googleapis.com',
    keyVariables: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
    authHeader: 'x-goog-api-key',
  },
  paths: [
    'POST /v1beta/models/{model}:streamGenerateContent',
    'POST /v1beta/models/{model}:generateContent',
    'POST /v1beta/models/{model}:countTokens',
  ],
  matches: (request: WireRequest) => request.method === 'POST' && ROUTE.test(request.path),
  /**
   * Turn index rule: the number of `contents` entries with role `model` (a model entry holding several
   * parts counts once).
   */
  sideRequestKind(request: WireRequest): string | null {
    if (ROUTE.exec(request.path)?.[2] === 'countTokens') return 'count_tokens';
    return isGeminiSideRequest(request.body) ? 'structured_output' : null;
  },
  countModelTurns(body: unknown): number {
    return contents(body).filter((c) => c.role === 'model').length;
  },
  lastUserText(body: unknown): string | null {
    const user = contents(body)
      .filter((c) => c.role === 'user' && parts(c).some((p) => typeof p.text === 'string'))
      .at(-1);
    if (!user) return null;
    return parts(user)
      .map((p) => p.text)
      .filter((t): t is string => typeof t === 'string')
      .join('\n');
  },
  respond(request: WireRequest, turn: RenderedTurn, response: ServerResponse): void {
    const match = ROUTE.exec(request.path);
    const method = match?.[2] ?? 'generateContent';
    if (method === 'countTokens') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ totalTokens: 10 }));
      return;
    }
    const body: Json = {
      candidates: [{ content: { role: 'model', parts: turnParts(request, turn) }, finishReason: 'STOP', index: 0 }],
      usageMetadata: usageMetadata(),
      modelVersion: match?.[1] ?? 'scripted',
      responseId: randomBytes(12).toString('base64url'),
    };
    if (method === 'generateContent') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
      return;
    }
    if (request.query.get('alt') === 'sse') {
      response.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      response.write(`data: ${JSON.stringify(body)}\n\n`);
      response.end();
      return;
    }
    // Without alt=sse the API streams a JSON array of responses.
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify([body]));
  },
  respondError(response: ServerResponse, status: number, message: string): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { code: status, message, status: geminiErrorStatus(status) } }));
  },
};
