/**
 * Redaction of what a cassette stores: credentials in headers, keys in the query or the body, and the values of the
 * user's secret variables become salted placeholders (`<redacted:RULE:8 hex>`): the same value gives the same
 * placeholder within one recording, and the salt is never stored, so a placeholder cannot be checked against a guess.
 * Each rule that fires is named in the cassette's `redactions` list; never the value.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { SECRET_NAME } from '../runtime/env.js';

/** Headers that carry credentials. */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'cookie',
  'proxy-authorization',
]);

/** Request headers kept in a cassette (besides the credential ones, as placeholders). */
const REQUEST_HEADER_ALLOWLIST: ReadonlySet<string> = new Set([
  'content-type',
  'accept',
  'anthropic-version',
  'anthropic-beta',
  'openai-beta',
]);

/** Query parameters and body fields that carry a key. */
const KEY_FIELDS: ReadonlySet<string> = new Set(['key', 'api_key', 'apikey', 'access_token', 'token']);

/** Shorter values are not treated as secrets (they would match ordinary text). */
const MIN_SECRET_LENGTH = 8;

/** The placeholder pattern, for normalization (the hash part varies per recording). */
export const PLACEHOLDER_PATTERN = /<redacted:([a-z0-9:_-]+?):[0-9a-f]{8}>/gi;

/** Redacts one recording; collects the rules that fired. */
export class Redactor {
  private readonly salt = randomBytes(16);
  private readonly rules = new Set<string>();
  /** Secret values, longest first, each with the rule that names it. */
  private readonly secrets: Array<{ value: string; rule: string }>;

  /**
   * @param hostEnv where the user's secret variables are read from (names matching KEY, TOKEN, SECRET…)
   * @param extra more secret values (the key injected upstream), with their rule names
   */
  constructor(hostEnv: NodeJS.ProcessEnv, extra: ReadonlyArray<{ value: string; rule: string }> = []) {
    const found = new Map<string, string>();
    for (const { value, rule } of extra) if (value.length >= MIN_SECRET_LENGTH) found.set(value, rule);
    for (const [name, value] of Object.entries(hostEnv)) {
      if (!value || value.length < MIN_SECRET_LENGTH || !SECRET_NAME.test(name) || found.has(value)) continue;
      found.set(value, `secret-env:${name}`);
    }
    this.secrets = [...found].map(([value, rule]) => ({ value, rule })).sort((a, b) => b.value.length - a.value.length);
  }

  /** The secret values this redactor replaces, longest first, each with its rule (the audit's redaction uses them). */
  get secretValues(): ReadonlyArray<{ value: string; rule: string }> {
    return this.secrets;
  }

  /** The rules that fired so far, sorted. */
  get fired(): string[] {
    return [...this.rules].sort();
  }

  /** The salted placeholder of `value` under `rule` (the rule is recorded as fired). */
  placeholder(rule: string, value: string): string {
    this.rules.add(rule);
    const mac = createHmac('sha256', this.salt).update(value).digest('hex').slice(0, 8);
    return `<redacted:${rule}:${mac}>`;
  }

  /** `text` with every secret value replaced by its placeholder. */
  text(text: string): string {
    let out = text;
    for (const { value, rule } of this.secrets) {
      if (out.includes(value)) out = out.split(value).join(this.placeholder(rule, value));
    }
    return out;
  }

  /** A JSON value with secrets in its strings, and every key-like field's value, redacted. */
  value(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((item) => this.value(item));
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] =
        KEY_FIELDS.has(key.toLowerCase()) && typeof item === 'string' && item !== ''
          ? this.placeholder('body-key', item)
          : this.value(item);
    }
    return out;
  }

  /** Query parameters as a record: key parameters as placeholders, secrets in the others redacted. */
  query(query: URLSearchParams): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of query) {
      out[name] = KEY_FIELDS.has(name.toLowerCase()) ? this.placeholder('query-key', value) : this.text(value);
    }
    return out;
  }

  /** The allow-listed request headers, credentials as placeholders. */
  requestHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, raw] of Object.entries(headers)) {
      if (raw === undefined) continue;
      const value = Array.isArray(raw) ? raw.join(', ') : raw;
      if (CREDENTIAL_HEADERS.has(name)) out[name] = this.placeholder('auth-header', value);
      else if (REQUEST_HEADER_ALLOWLIST.has(name)) out[name] = this.text(value);
    }
    return out;
  }
}
