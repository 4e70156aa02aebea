/**
 * The cassette file (`agent-harness.cassette/1`): what one recorded attempt asked the vendor and what it answered,
 * per interaction, with the normalized request (what replay matches on) and the response as it came: status,
 * allow-listed headers, and the body in its chunks with the delay before each. Secrets never reach it (redact.ts).
 */
import * as z from 'zod';
import { AgentHarnessError } from '../errors/index.js';
import { readCassetteText } from './cassette-file.js';

/** The format tag of a cassette file. */
export const CASSETTE_FORMAT = 'agent-harness.cassette/1';

/** Wire APIs a cassette records (the model server's). */
export const CassetteWireSchema = z.enum(['openai-responses', 'openai-chat', 'anthropic-messages', 'gemini']);

/** One piece of a response body as it arrived, and how long after the previous one (or the request) it did. */
export const CassetteChunkSchema = z.object({
  delay_ms: z.number().nonnegative(),
  data: z.string(),
});

/** One request and its answer. */
export const CassetteInteractionSchema = z.object({
  /** 1, 2, 3… in the order the requests were sent. */
  seq: z.number().int().positive(),
  wire: CassetteWireSchema,
  /** The engine's bookkeeping call (title, token count…), or null for a model call. */
  side_kind: z.string().nullable(),
  /** Model outputs already in the request's history: the place in the conversation. */
  position: z.number().int().nonnegative(),
  request: z.object({
    method: z.string(),
    path: z.string(),
    /** Query parameters, keys redacted. */
    query: z.record(z.string(), z.string()),
    /** Allow-listed request headers; credentials as salted placeholders. */
    headers: z.record(z.string(), z.string()),
    /** The normalized JSON body (normalize.ts): what replay compares. */
    normalized: z.unknown(),
    /** sha256 of the normalized method, path and body. */
    hash: z.string(),
  }),
  response: z.object({
    status: z.number().int(),
    headers: z.record(z.string(), z.string()),
    /** `sse` for an event stream, `json` or `text` otherwise. */
    kind: z.enum(['sse', 'json', 'text']),
    chunks: z.array(CassetteChunkSchema),
    /** False when the upstream or the engine broke the response off before its end. */
    complete: z.boolean(),
  }),
});

/** A cassette file. */
export const CassetteSchema = z.object({
  format: z.literal(CASSETTE_FORMAT),
  created_at: z.string(),
  /** The engine recorded, when known. */
  engine: z.string().nullable(),
  /** The origin recorded against (no credentials, no query). */
  upstream: z.string().nullable(),
  /** Names of the redaction rules that fired while recording (never the values). */
  redactions: z.array(z.string()),
  interactions: z.array(CassetteInteractionSchema),
});

/** A cassette. */
export type Cassette = z.infer<typeof CassetteSchema>;
/** One recorded interaction. */
export type CassetteInteraction = z.infer<typeof CassetteInteractionSchema>;
/** One response chunk. */
export type CassetteChunk = z.infer<typeof CassetteChunkSchema>;

/** Parses a cassette's JSON value; CASSETTE_INVALID naming the first problem and `where`. */
export function parseCassette(value: unknown, where: string): Cassette {
  const parsed = CassetteSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = issue?.path.length ? issue.path.join('.') : '(root)';
  throw new AgentHarnessError(
    'CASSETTE_INVALID',
    `${where} is not a valid ${CASSETTE_FORMAT} cassette: at ${at}: ${issue?.message ?? 'invalid'}.`,
    { details: { path: where, at } },
  );
}

/**
 * Reads and validates a cassette file; CASSETTE_NOT_FOUND when it does not exist, INPUT_NOT_REGULAR_FILE when it is a
 * FIFO, a device or a directory, INPUT_TOO_LARGE past the limit of `env` (cassette-file.ts), CASSETTE_INVALID when
 * broken.
 */
export function loadCassette(file: string, env: NodeJS.ProcessEnv = process.env): Cassette {
  const text = readCassetteText(file, env);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AgentHarnessError('CASSETTE_INVALID', `Cassette ${file} is not JSON: ${(error as Error).message}`, {
      cause: error,
      details: { path: file },
    });
  }
  return parseCassette(value, file);
}
