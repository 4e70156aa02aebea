/**
 * Normalization of a model request before it is matched: what varies from one run of the same conversation to the
 * next is replaced or dropped. Ids (tool calls, responses, sessions, threads, UUIDs) become ordinals in order of first
 * appearance (`<id:1>`), so the structure of who answers what is kept; timestamps and dates become `<time>` and
 * `<date>`; the run directory, temp and home paths become `<run-dir>`, `<tmp>`, `<home>`; cache keys, token limits
 * and thinking configuration are dropped; durations tools report (`Wall time: 0.01 seconds`) become `<duration>`;
 * redaction placeholders lose their salted part; the harness's `.audit/` files in a directory listing are dropped.
 * Lists whose order is the engine's directory walk, not the conversation's, are sorted: the skills it offers (an
 * `<available_skills>` block, gemini's `(Available: 'a', 'b')`) and a JSON Schema's `enum`.
 */
import { createHash } from 'node:crypto';
import { PLACEHOLDER_PATTERN } from './redact.js';

/** Paths and URLs of one attempt to replace by a stable name (longest first when applied). */
export interface NormalizeContext {
  replacements: ReadonlyArray<readonly [value: string, name: string]>;
  /**
   * Paths of the attempt that a response may name (the run directory where a tool call writes), each with the token
   * a recorded response holds instead: replay puts the replaying attempt's path back.
   */
  responsePaths?: ReadonlyArray<readonly [value: string, token: string]>;
}

/** `text` with the attempt's paths replaced by their tokens (recording a response chunk). */
export function templatePaths(text: string, context: NormalizeContext): string {
  let out = text;
  const paths = [...(context.responsePaths ?? [])].sort((a, b) => b[0].length - a[0].length);
  for (const [value, token] of paths) if (value.length > 1 && out.includes(value)) out = out.split(value).join(token);
  return out;
}

/** `text` with the tokens of {@link templatePaths} replaced by this attempt's paths (replaying a response chunk). */
export function fillPaths(text: string, context: NormalizeContext): string {
  let out = text;
  for (const [value, token] of context.responsePaths ?? []) if (out.includes(token)) out = out.split(token).join(value);
  return out;
}

/** Fields dropped wherever they stand: cache keys, token limits, thinking configuration, per-run bookkeeping. */
const DROPPED_FIELDS: ReadonlySet<string> = new Set([
  'prompt_cache_key',
  'cache_control',
  'cachedContent',
  'max_tokens',
  'max_output_tokens',
  'max_completion_tokens',
  'maxOutputTokens',
  'thinking',
  'thinkingConfig',
  'thinking_config',
  'reasoning',
  'reasoning_effort',
  'include',
  'metadata',
  'user',
  'store',
  'stream_options',
  'encrypted_content',
  'signature',
  'thoughtSignature',
  'client_metadata',
]);

/** Fields whose string value is an id of this run: numbered in order of first appearance. */
const ID_FIELDS: ReadonlySet<string> = new Set([
  'id',
  'call_id',
  'tool_call_id',
  'tool_use_id',
  'previous_response_id',
  'item_id',
  'response_id',
  'session_id',
  'sessionId',
  'thread_id',
  'conversation_id',
  'conversation',
  'user_prompt_id',
  'prompt_id',
]);

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
/** Vendor id shapes inside text (`call_…`, `toolu_…`, `fc_…`, `resp_…`, `msg_…`, `chatcmpl-…`). */
const VENDOR_ID = /\b(?:call|toolu|srvtoolu|fc|resp|rs|msg|chatcmpl)[_-][A-Za-z0-9_-]{6,}\b/g;
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g;
const ISO_DATE = /\b\d{4}-\d{2}-\d{2}\b/g;
const LONG_DATE =
  /\b(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,? )?(?:January|February|March|April|May|June|July|August|September|October|November|December) \d{1,2},? \d{4}\b/g;
/** How long something took, as tools report it (`Wall time: 0.0123 seconds`, `1.5s`): a measured, fractional time. */
const DURATION = /\b\d+\.\d+ ?(?:ms|milliseconds?|s|sec|seconds?)\b/g;
/** Codex's per-call output chunk id (`Chunk ID: 1f6688`). */
const CHUNK_ID = /\bChunk ID: [0-9a-f]+\b/g;
/** A loopback URL: the harness's model server listens on an ephemeral port. */
const LOOPBACK_URL = /http:\/\/(?:127\.0\.0\.1|localhost|\[::1\]):\d+/g;
const CLOCK = /\b\d{1,2}:\d{2}:\d{2}(?: ?[AP]M)?\b/g;
/** A directory directly under /tmp or /var/folders (mkdtemp names vary per run). */
const TEMP_DIR = /\/(?:tmp|var\/folders\/[^/\s"']+\/[^/\s"']+\/T)\/[^/\s"'`]+/g;

/** A tree listing's line naming the audit directory (`│   ├───.audit/`): its prefix and connector. */
const AUDIT_TREE_LINE = /^([│ ]*)(├|└)(?:───|── )\.audit\/$/;

/**
 * `text` with the harness's `.audit/` directory in a tree listing kept but its entries dropped. gemini's first request
 * lists the workspace (its session context's directory structure), and which audit files exist at that moment is a
 * race with the harness: fs-before is written while the engine starts (through a temporary file), the request log at
 * the first request. The listing of the workspace's own files is kept.
 */
export function collapseAuditListing(text: string): string {
  if (!text.includes('.audit/')) return text;
  const out: string[] = [];
  let inside: string | null = null;
  for (const line of text.split('\n')) {
    if (inside !== null && line.startsWith(inside) && line.length > inside.length) continue;
    inside = null;
    const audit = AUDIT_TREE_LINE.exec(line);
    if (audit) inside = `${audit[1]}${audit[2] === '├' ? '│' : ' '}   `;
    out.push(line);
  }
  return out.join('\n');
}

/** An Agent Skills listing in a system prompt, and one skill's entry in it. */
const SKILLS_BLOCK = /<available_skills>\n?([\s\S]*?)<\/available_skills>/g;
const SKILL_ENTRY = /[ \t]*<skill>[\s\S]*?<\/skill>\n?/g;
/** gemini's activate_skill description names the skills it found: `(Available: 'a', 'b')`. */
const AVAILABLE_NAMES = /\(Available: ('[^']*'(?:, '[^']*')*)\)/g;

/**
 * `text` with the offered skills in one order: gemini finds its skills with a glob whose order varies from run to run,
 * and lists them in that order in its system prompt and its activate_skill tool.
 */
function sortSkillListings(text: string): string {
  if (!text.includes('<available_skills>') && !text.includes('(Available: ')) return text;
  return text
    .replace(SKILLS_BLOCK, (block, inner: string) => {
      // Only a block of skill entries alone is put in order (each entry's own text is kept as it is).
      const entries = inner.match(SKILL_ENTRY);
      if (!entries || inner.replace(SKILL_ENTRY, '').trim() !== '') return block;
      return block.replace(
        inner,
        `${entries
          .map((entry) => entry.trim())
          .sort()
          .join('\n')}\n`,
      );
    })
    .replace(AVAILABLE_NAMES, (_whole, names: string) => `(Available: ${names.split(', ').sort().join(', ')})`);
}

/** Normalizes one request body (a JSON value); a fresh ordinal table per request. */
export function normalizeBody(body: unknown, context: NormalizeContext = { replacements: [] }): unknown {
  const ids = new Map<string, string>();
  const replacements = [...context.replacements]
    .filter(([value]) => value.length > 1)
    .sort((a, b) => b[0].length - a[0].length);
  const idOf = (value: string): string => {
    let name = ids.get(value);
    if (!name) {
      name = `<id:${ids.size + 1}>`;
      ids.set(value, name);
    }
    return name;
  };
  const text = (value: string): string => {
    let out = sortSkillListings(collapseAuditListing(value));
    for (const [from, name] of replacements) if (out.includes(from)) out = out.split(from).join(name);
    return out
      .replace(PLACEHOLDER_PATTERN, '<redacted:$1>')
      .replace(LOOPBACK_URL, '<local-url>')
      .replace(TEMP_DIR, '<tmp>')
      .replace(UUID, (match) => idOf(match.toLowerCase()))
      .replace(VENDOR_ID, (match) => idOf(match))
      .replace(ISO_TIME, '<time>')
      .replace(ISO_DATE, '<date>')
      .replace(LONG_DATE, '<date>')
      .replace(CLOCK, '<clock>')
      .replace(CHUNK_ID, 'Chunk ID: <id>')
      .replace(DURATION, '<duration>');
  };
  const walk = (value: unknown, key: string | null): unknown => {
    if (typeof value === 'string') return key !== null && ID_FIELDS.has(key) ? idOf(value) : text(value);
    if (Array.isArray(value)) {
      const items = value.map((item) => walk(item, null));
      // A JSON Schema enum is a set: its order is whatever the engine found first.
      return key === 'enum' && items.every((item) => typeof item === 'string') ? items.sort() : items;
    }
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(value).sort()) {
      if (DROPPED_FIELDS.has(name)) continue;
      out[name] = walk((value as Record<string, unknown>)[name], name);
    }
    return out;
  };
  return walk(body, null);
}

/** Normalizes a request path (ids and dates in it, as in the body). */
export function normalizePath(requestPath: string, context: NormalizeContext = { replacements: [] }): string {
  return normalizeBody(requestPath, context) as string;
}

/** The hash a request is matched by: sha256 of its method, normalized path and normalized body. */
export function requestHash(method: string, normalizedPath: string, normalized: unknown): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()} ${normalizedPath}\n`)
    .update(JSON.stringify(normalized))
    .digest('hex');
}
