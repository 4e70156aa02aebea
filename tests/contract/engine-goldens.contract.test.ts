/**
 * The goldens of every registered engine, one table: each recorded stream under `fixtures/streams/<id>/`
 * (`<name>.stdout.jsonl` or `.stdout.log`, with `<name>.stderr.log` and `<name>.pty.log` when recorded) goes through
 * `translateRecorded` with the engine's facts as the registry loads them (line splitter → RASP builder → FCMP, as a
 * live attempt), every parser output fits the protocol, and the RASP and FCMP match `__snapshots__/<name>.rasp.jsonl`
 * and `.fcmp.jsonl` (update with `-u`). Each engine's error-pattern table is checked against messages it prints.
 * A new engine gets its rows by recording streams and adding its messages below; what only one parser does is in
 * its own `<id>-parse.contract.test.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineIds, loadTranslationAdapter } from '../../src/engines/registry.js';
import { type FailureCategory, FcmpEventSchema, RaspEventSchema } from '../../src/protocol/index.js';
import { matchErrorPattern } from '../../src/translate/completion.js';
import { type RecordedOutput, translateRecorded } from '../../src/translate/recorded.js';

const STREAMS = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams');

/**
 * Engines whose goldens another test owns, and which: codex's streams are the translate pipeline's goldens, fed in
 * chunks of 1, 3 and 7 bytes with exit data and checked for the pipeline's invariants (translate.contract.test.ts).
 */
const GOLDENS_ELSEWHERE: Readonly<Record<string, string>> = { codex: 'translate.contract.test.ts' };

/** The file suffix of each recorded stream. */
const SUFFIXES: ReadonlyArray<[keyof RecordedOutput, RegExp]> = [
  ['stdout', /\.stdout\.(?:jsonl|log)$/],
  ['stderr', /\.stderr\.log$/],
  ['pty', /\.pty\.log$/],
];

/** The recordings of engine `id`, by name: a recording is a stdout or pty capture, with whatever else was captured. */
function recordings(id: string): Array<[string, RecordedOutput]> {
  const dir = path.join(STREAMS, id);
  const found = new Map<string, RecordedOutput>();
  for (const file of fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []) {
    for (const [stream, suffix] of SUFFIXES) {
      if (!suffix.test(file)) continue;
      const name = file.replace(suffix, '');
      found.set(name, { ...found.get(name), [stream]: fs.readFileSync(path.join(dir, file)) });
    }
  }
  return [...found].filter(([, output]) => output.stdout !== undefined || output.pty !== undefined);
}

/** Events as JSON lines, their time stamps normalized. */
function normalized(events: readonly { ts: string }[]): string {
  return `${events.map((event) => JSON.stringify({ ...event, ts: '<ts>' })).join('\n')}\n`;
}

const ROWS = engineIds()
  .filter((id) => !(id in GOLDENS_ELSEWHERE))
  .flatMap((id) => recordings(id).map(([name, output]) => ({ id, name, output })));

describe('engine goldens', () => {
  it('every registered engine has recorded streams with goldens here or in the test that owns them', () => {
    for (const id of engineIds())
      expect(
        ROWS.some((row) => row.id === id) || id in GOLDENS_ELSEWHERE,
        `fixtures/streams/${id}/ holds no recording`,
      ).toBe(true);
  });

  it.each(ROWS)('$id $name matches its golden RASP and FCMP', async ({ id, name, output }) => {
    const result = translateRecorded(await loadTranslationAdapter(id), output, { runId: 'golden' });
    // Every event fits the protocol (built-in parsers are not checked per event at run time: checked-parser.ts).
    for (const event of result.rasp) expect(RaspEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(true);
    for (const event of result.fcmp) expect(FcmpEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(true);
    const snapshots = path.join(STREAMS, id, '__snapshots__');
    await expect(normalized(result.rasp)).toMatchFileSnapshot(path.join(snapshots, `${name}.rasp.jsonl`));
    await expect(normalized(result.fcmp)).toMatchFileSnapshot(path.join(snapshots, `${name}.fcmp.jsonl`));
  });
});

/**
 * Messages each engine prints on a failure (from its recordings, its upstream client and the vendor's error bodies),
 * with the category its error-pattern table must give them; null: no row may match.
 */
const ERROR_MESSAGES: Readonly<Record<string, ReadonlyArray<[string, FailureCategory | null]>>> = {
  codex: [
    ['unexpected status 401 Unauthorized: Incorrect API key provided', 'auth'],
    ['invalid_api_key', 'auth'],
    ['exceeded retry limit, last status: 429 Too Many Requests', 'rate_limit'],
    ['Rate limit reached for requests', 'rate_limit'],
    ['The model `gpt-9` does not exist or you do not have access to it.', 'model'],
    ['Model metadata for `mock-model` not found. Defaulting to fallback metadata', 'model'],
    ['Your input exceeds the context window of this model', 'context_length'],
    ['stream disconnected before completion: stream closed before response.completed', 'protocol'],
    [
      'stream disconnected before completion: error sending request for url (http://127.0.0.1:9/v1/responses)',
      'network',
    ],
    ['Connection refused (os error 111)', 'network'],
    ['something odd happened', null],
  ],
  claude: [
    ['Failed to authenticate. API Error: 401 scripted bad key', 'auth'],
    ['API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}', 'auth'],
    ['API Error: Request rejected (429) · slow down', 'rate_limit'],
    ['{"type":"rate_limit_error"}', 'rate_limit'],
    ['API Error: 404 {"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}', 'model'],
    ['API Error: 400 prompt is too long: 210000 tokens > 200000 maximum', 'context_length'],
    ["The model's tool call could not be parsed (retry also failed)", 'protocol'],
    ['Unable to connect to API (ECONNREFUSED)', 'network'],
    ['TypeError: fetch failed', 'network'],
    // Without the status, as claude also shows it.
    ['OAuth token has expired. Please obtain a new token or refresh your existing token. · Please run /login', 'auth'],
    ['Credit balance is too low', 'auth'],
    ['API Error: 500 scripted upstream failure', null],
  ],
  gemini: [
    [
      '[API Error: {"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}]',
      'auth',
    ],
    ['PERMISSION_DENIED: caller does not have permission', 'auth'],
    ['[API Error: Resource has been exhausted (e.g. check quota).]', 'rate_limit'],
    ['{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}', 'rate_limit'],
    ['models/gemini-9 is not found for API version v1beta', 'model'],
    ['The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', 'context_length'],
    ['request to http://127.0.0.1:9/v1beta failed, reason: connect ECONNREFUSED 127.0.0.1:9', 'network'],
    ['TypeError: fetch failed sending request', 'network'],
  ],
  opencode: [
    ['APIError: scripted bad key (status 401)', 'auth'],
    ['ProviderAuthError: missing key', 'auth'],
    ['APIError: slow down (status 429)', 'rate_limit'],
    ['ProviderModelNotFoundError: agent-harness/x', 'model'],
    ['ContextOverflowError: too long', 'context_length'],
    ['UnknownError: Unable to connect. Is the computer able to access the url?', 'network'],
  ],
  copilot: [
    ['Failed to get response from the AI model; retried 5 times. Last error: 401 (status 401)', 'auth'],
    ['Failed to get response from the AI model; retried 5 times. Last error: 429 Too Many Requests', 'rate_limit'],
    ['Failed to parse chat-completions stream chunk: expected value at line 1 column 19', 'protocol'],
    ['Failed to get response from the AI model; retried 5 times. Last error: 500 (status 500)', 'network'],
    ['something odd happened', null],
  ],
  qwen: [
    ['[API Error: 401 Incorrect API key provided]', 'auth'],
    ['[API Error: 429 Too Many Requests]', 'rate_limit'],
    ['something odd happened', null],
  ],
  iflow: [
    ['Error: 401 invalid api key', 'auth'],
    ['Error: 429 Too Many Requests', 'rate_limit'],
    ['Error when talking to iFlow API: fetch failed', 'network'],
  ],
};

describe('engine error tables', () => {
  it('every registered engine has messages to check its table with', () => {
    expect(Object.keys(ERROR_MESSAGES).sort()).toEqual(engineIds().sort());
  });

  it.each(
    Object.entries(ERROR_MESSAGES).flatMap(([id, rows]) =>
      rows.map(([message, category]) => ({ id, message, category })),
    ),
  )('$id: $message → $category', async ({ id, message, category }) => {
    const { errorPatterns } = await loadTranslationAdapter(id);
    expect(matchErrorPattern(message, errorPatterns)?.category ?? null).toBe(category);
  });
});
