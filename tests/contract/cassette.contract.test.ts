/**
 * Cassettes without an engine: the schema, redaction, normalization and the matching ladder; then a recording through
 * the harness's model server against a local keyed "vendor" (a second scripted server on another loopback port),
 * replayed with the vendor stopped: the same bytes, no key in the file, a changed prompt a CASSETTE_MISS with a diff,
 * an unasked recorded call CASSETTE_UNUSED, a lenient miss served by the script.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  collapseAuditListing,
  diffValues,
  loadCassette,
  matchRequest,
  normalizeBody,
  openCassette,
  parseCassette,
  Redactor,
  requestHash,
  resolveCassettePlan,
  type Cassette,
  type CassetteInteraction,
  type MatchRequest,
} from '../../src/cassette/index.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { attemptAgent } from '../../src/fluent/attempt-agent.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import type { AgentHarnessAttemptRecord } from '../../src/report/attempt-record.js';
import { buildConsistencyReport } from '../../src/report/build.js';
import { renderMarkdown } from '../../src/report/render.js';
import { turns, type ModelServer } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';
import { BIN, createCliSandbox, runCliProcess } from '../helpers/cli.js';
import { startKeyedVendor, type KeyedVendor } from '../helpers/keyed-vendor.js';
import { waitUntil } from '../helpers/load-scaled.js';

const KEY = 'sk-test-SECRET-0123456789abcdef';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-cassette-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes a valid cassette with no interactions at `file`. */
function writeEmptyCassette(file: string): void {
  fs.writeFileSync(
    file,
    JSON.stringify({
      format: 'agent-harness.cassette/1',
      created_at: '',
      engine: null,
      upstream: null,
      redactions: [],
      interactions: [],
    }),
  );
}

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return null;
}

describe('schema', () => {
  it('a cassette of another format, or a broken interaction, is CASSETTE_INVALID naming where', () => {
    const bad = thrownBy(() => parseCassette({ format: 'x' }, 'c.json'));
    expect(isAgentHarnessError(bad, 'CASSETTE_INVALID')).toBe(true);
    expect((bad as Error).message).toContain('c.json');
    const ok: Cassette = {
      format: 'agent-harness.cassette/1',
      created_at: new Date().toISOString(),
      engine: null,
      upstream: null,
      redactions: [],
      interactions: [],
    };
    expect(parseCassette(ok, 'c.json')).toEqual(ok);
    const broken = thrownBy(() =>
      parseCassette({ ...ok, interactions: [{ seq: 0, wire: 'openai-responses' }] }, 'c.json'),
    );
    expect((broken as Error).message).toMatch(/at interactions\.0\./);
  });

  it('a missing file is CASSETTE_NOT_FOUND, non-JSON CASSETTE_INVALID', () => {
    const dir = tempDir();
    expect(
      isAgentHarnessError(
        thrownBy(() => loadCassette(path.join(dir, 'no.json'))),
        'CASSETTE_NOT_FOUND',
      ),
    ).toBe(true);
    fs.writeFileSync(path.join(dir, 'bad.json'), '{');
    expect(
      isAgentHarnessError(
        thrownBy(() => loadCassette(path.join(dir, 'bad.json'))),
        'CASSETTE_INVALID',
      ),
    ).toBe(true);
  });
});

describe('redaction', () => {
  it("secret variables' values, keys in query, body and headers become salted placeholders; rules are named", () => {
    const redactor = new Redactor({ MY_TOKEN: 'tok-abcdefgh12345', HOME: '/home/me', SHORT_KEY: 'abc' });
    const text = redactor.text('use tok-abcdefgh12345 twice: tok-abcdefgh12345 at /home/me with abc');
    expect(text).not.toContain('tok-abcdefgh12345');
    const placeholders = text.match(/<redacted:secret-env:MY_TOKEN:[0-9a-f]{8}>/g);
    expect(placeholders).toHaveLength(2);
    expect(placeholders?.[0]).toBe(placeholders?.[1]);
    expect(text).toContain('/home/me with abc');
    expect(redactor.value({ api_key: 'k-1', nested: ['tok-abcdefgh12345'] })).toEqual({
      api_key: expect.stringMatching(/^<redacted:body-key:[0-9a-f]{8}>$/),
      nested: [expect.stringMatching(/^<redacted:secret-env:MY_TOKEN:/)],
    });
    expect(redactor.query(new URLSearchParams('alt=sse&key=AIza-secret'))).toEqual({
      alt: 'sse',
      key: expect.stringMatching(/^<redacted:query-key:/),
    });
    expect(
      redactor.requestHeaders({ authorization: 'Bearer x', 'content-type': 'application/json', host: 'h' }),
    ).toEqual({ authorization: expect.stringMatching(/^<redacted:auth-header:/), 'content-type': 'application/json' });
    expect(redactor.fired).toEqual(['auth-header', 'body-key', 'query-key', 'secret-env:MY_TOKEN']);
    // Another recording, another salt: a placeholder cannot be compared across cassettes to guess a value.
    expect(new Redactor({ MY_TOKEN: 'tok-abcdefgh12345' }).text('tok-abcdefgh12345')).not.toBe(
      redactor.text('tok-abcdefgh12345'),
    );
  });
});

describe('normalization', () => {
  const request = (runDir: string, ids: [string, string], date: string, prompt: string) => ({
    model: 'm',
    max_output_tokens: ids[0].length,
    reasoning: { effort: 'high' },
    prompt_cache_key: ids[1],
    input: [
      { role: 'user', content: [{ type: 'input_text', text: `${prompt} in ${runDir}/src on ${date}` }] },
      { type: 'function_call', call_id: ids[0], name: 'shell', arguments: '{}' },
      {
        type: 'function_call_output',
        call_id: ids[0],
        output: `session ${ids[1]} at 2026-01-0${ids.length}T10:00:00Z\nChunk ID: ${ids[0].length.toString(16)}f0\nWall time: 0.00${ids[0].length} seconds\nDefaults to 30000 ms.`,
      },
    ],
  });

  it('ids, dates, run paths, cache keys, token limits and thinking config do not change the hash; the prompt does', () => {
    const a = normalizeBody(
      request('/tmp/run-a', ['call_AAAAAAA1', '5b0c1f8e-1111-4222-8333-444455556666'], '2026-11-26', 'Fix it'),
      {
        replacements: [['/tmp/run-a', '<run-dir>']],
      },
    );
    const b = normalizeBody(
      request(
        '/data/runs/x7',
        ['call_BBBBBBBBBB2', '9d8c7b6a-aaaa-4bbb-8ccc-ddddeeeeffff'],
        'Friday, November 27, 2026',
        'Fix it',
      ),
      { replacements: [['/data/runs/x7', '<run-dir>']] },
    );
    expect(a).toEqual(b);
    expect(requestHash('POST', '/v1/responses', a)).toBe(requestHash('POST', '/v1/responses', b));
    const c = normalizeBody(request('/tmp/run-a', ['call_AAAAAAA1', 'u'], '2026-11-26', 'Break it'), {
      replacements: [['/tmp/run-a', '<run-dir>']],
    });
    expect(requestHash('POST', '/v1/responses', c)).not.toBe(requestHash('POST', '/v1/responses', a));
    // Which call an output answers is kept: the same id is the same ordinal.
    const input = (a as { input: Array<{ call_id?: string }> }).input;
    expect(input[1]?.call_id).toBe(input[2]?.call_id);
    // A static duration is kept: only measured (fractional) ones vary.
    expect(JSON.stringify(a)).toContain('Defaults to 30000 ms.');
  });

  // gemini's first request lists the workspace; which audit files exist then is a race with the harness.
  const listing = (auditFiles: string[], workspaceFile = 'notes.md') =>
    [
      '<session_context>',
      '- **Directory Structure:**',
      '',
      '/tmp/run-a/',
      '├───.audit/',
      ...auditFiles.map((name, i) => `│   ${i === auditFiles.length - 1 ? '└' : '├'}───${name}`),
      '├───.gemini/',
      '│   └───settings.json',
      `└───${workspaceFile}`,
      '</session_context>',
    ].join('\n');
  const geminiHash = (text: string) =>
    requestHash(
      'POST',
      '/p',
      normalizeBody({ contents: [{ role: 'user', parts: [{ text }, { text: 'Write a.txt' }] }] }),
    );

  it("the harness's .audit files in a directory listing do not change the hash; the workspace's files do", () => {
    const early = geminiHash(listing(['meta.1.json', 'rasp.1.jsonl', 'stdout.1.log']));
    expect(geminiHash(listing(['fs-before.1.json', 'meta.1.json', 'rasp.1.jsonl', 'stdout.1.log']))).toBe(early);
    expect(
      geminiHash(listing(['fs-before.1.json.tmp-4f2a', 'meta.1.json', 'model-requests.1.jsonl', 'stdout.1.log'])),
    ).toBe(early);
    expect(geminiHash(listing(['meta.1.json', 'rasp.1.jsonl', 'stdout.1.log'], 'other.md'))).not.toBe(early);
    expect(collapseAuditListing(listing(['meta.1.json']))).toContain(
      '├───.audit/\n├───.gemini/\n│   └───settings.json',
    );
  });

  it("the order gemini found its skills in (a glob's) does not change the hash; a skill of its own does", () => {
    const skill = (name: string) =>
      `  <skill>\n    <name>${name}</name>\n    <description>About ${name}.</description>\n  </skill>`;
    const request = (names: string[]) =>
      requestHash(
        'POST',
        '/p',
        normalizeBody({
          systemInstruction: {
            parts: [{ text: `Intro\n<available_skills>\n${names.map(skill).join('\n')}\n</available_skills>\nRest` }],
          },
          tools: [
            {
              functionDeclarations: [
                {
                  name: 'activate_skill',
                  description: `Activates a skill (Available: ${names.map((n) => `'${n}'`).join(', ')}). Returns it.`,
                  parametersJsonSchema: { properties: { name: { type: 'string', enum: names } } },
                },
              ],
            },
          ],
        }),
      );
    const found = request(['skill-creator', 'antigravity-support']);
    expect(request(['antigravity-support', 'skill-creator'])).toBe(found);
    expect(request(['antigravity-support', 'skill-creator', 'csv-stats'])).not.toBe(found);
    expect(request(['antigravity-support', 'skill-maker'])).not.toBe(found);
  });
});

describe('matching ladder', () => {
  const interaction = (seq: number, normalized: unknown, position = 0): CassetteInteraction => ({
    seq,
    wire: 'openai-responses',
    side_kind: null,
    position,
    request: {
      method: 'POST',
      path: '/v1/responses',
      query: {},
      headers: {},
      normalized,
      hash: requestHash('POST', '/v1/responses', normalized),
    },
    response: { status: 200, headers: {}, kind: 'json', chunks: [], complete: true },
  });
  const ask = (normalized: { prompt: string; tools?: string[] }, position = 0): MatchRequest => ({
    wire: 'openai-responses',
    sideKind: null,
    position,
    method: 'POST',
    path: '/v1/responses',
    normalized,
    hash: requestHash('POST', '/v1/responses', normalized),
    userText: normalized.prompt,
  });
  const recorded = [interaction(1, { prompt: 'hi', tools: ['a'] }), interaction(2, { prompt: 'hi', tools: ['a'] }, 1)];
  const userText = (i: CassetteInteraction) => (i.request.normalized as { prompt: string }).prompt;

  it('exact first, then the same place with the same prompt (divergent, with the fields), else a miss with a diff', () => {
    expect(matchRequest(ask({ prompt: 'hi', tools: ['a'] }, 1), recorded, new Set(), userText)).toEqual({
      kind: 'exact',
      index: 0,
    });
    const divergent = matchRequest(ask({ prompt: 'hi', tools: ['b'] }, 1), recorded, new Set(), userText);
    expect(divergent).toEqual({
      kind: 'divergent',
      index: 1,
      differences: [{ path: 'tools[0]', recorded: 'a', requested: 'b' }],
    });
    const miss = matchRequest(ask({ prompt: 'bye', tools: ['a'] }), recorded, new Set(), userText);
    expect(miss).toMatchObject({
      kind: 'miss',
      nearest: 0,
      differences: [{ path: 'prompt', recorded: 'hi', requested: 'bye' }],
    });
    // A used interaction is not served twice.
    expect(matchRequest(ask({ prompt: 'hi', tools: ['a'] }), recorded, new Set([0, 1]), userText).kind).toBe('miss');
    expect(diffValues({ a: [1, 2] }, { a: [1] })).toEqual([{ path: 'a[1]', recorded: '2', requested: '(absent)' }]);
  });

  it('a cassette recorded before a normalization rule was added still matches exactly', () => {
    const before = { prompt: 'hi', tools: ['├───.audit/\n│   └───fs-before.1.json\n└───a.txt'] };
    const now = normalizeBody(before) as { prompt: string; tools: string[] };
    expect(now.tools[0]).toBe('├───.audit/\n└───a.txt');
    expect(matchRequest(ask(now), [interaction(1, before)], new Set(), userText)).toEqual({ kind: 'exact', index: 0 });
  });
});

describe('modes', () => {
  it('auto replays an existing cassette, records a missing one with a key, and refuses without one', () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.json');
    const noKey = thrownBy(() => resolveCassettePlan({ mode: 'auto', file, wire: 'anthropic-messages', hostEnv: {} }));
    expect(isAgentHarnessError(noKey, 'CASSETTE_KEY_MISSING')).toBe(true);
    expect((noKey as Error).message).toContain('ANTHROPIC_API_KEY');
    expect(
      resolveCassettePlan({
        mode: 'auto',
        file,
        wire: 'gemini',
        hostEnv: { GOOGLE_API_KEY: 'g' },
        upstream: 'http://127.0.0.1:9/',
      }),
    ).toEqual({ mode: 'record', file, upstream: 'http://127.0.0.1:9' });
    writeEmptyCassette(file);
    expect(resolveCassettePlan({ mode: 'auto', file, wire: 'gemini', hostEnv: {} }).mode).toBe('replay');
    expect(
      resolveCassettePlan({ mode: 'auto', file, wire: 'gemini', hostEnv: { GEMINI_API_KEY: 'g' }, update: true }).mode,
    ).toBe('record');
    expect(
      isAgentHarnessError(
        thrownBy(() => resolveCassettePlan({ mode: 'replay', file: null, wire: 'gemini', hostEnv: {} })),
        'USAGE_ERROR',
      ),
    ).toBe(true);
  });
});

describe('record through the model server, replay offline', () => {
  const body = (prompt: string, stream = true) => ({
    model: 'gpt-test',
    stream,
    input: [{ role: 'user', content: [{ type: 'input_text', text: prompt }] }],
  });
  async function harness(cassette: ReturnType<typeof openCassette>): Promise<ModelServer> {
    const server = await startModelServer({
      script: { version: 1, turns: [turns.final('from the script')] },
      intercept: cassette.intercept,
    });
    cleanups.push(() => server.close());
    return server;
  }
  const post = (server: ModelServer, payload: unknown) =>
    fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-agent-harness-scripted' },
      body: JSON.stringify(payload),
    });

  async function recordOne(file: string): Promise<{ vendor: KeyedVendor; text: string }> {
    const vendor = await startKeyedVendor(KEY, { version: 1, turns: [turns.final('Recorded answer.')] });
    cleanups.push(() => vendor.close());
    const cassette = openCassette({
      mode: 'record',
      file,
      upstream: vendor.url,
      hostEnv: { OPENAI_API_KEY: KEY, OTHER_SECRET_TOKEN: 'other-secret-value-42' },
      engine: 'codex',
    });
    const server = await harness(cassette);
    const response = await post(server, body('Say it, other-secret-value-42'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    // FILE.partial is written after each interaction, before the attempt ends: a crash keeps what was recorded there.
    const partial = `${file}.partial`;
    expect(await waitUntil(() => fs.existsSync(partial), 5000, 25)).toBe(true);
    expect(loadCassette(partial).interactions).toHaveLength(1);
    // The cassette itself only once the recording succeeded.
    expect(fs.existsSync(file)).toBe(false);
    const report = await cassette.finish();
    expect(report).toMatchObject({ mode: 'record', interactions: 1, error: null });
    expect(fs.existsSync(partial)).toBe(false);
    expect(vendor.accepted).toBe(1);
    expect(vendor.refused).toBe(0);
    return { vendor, text };
  }

  it('the vendor gets the real key, the engine the stream as it came; the file holds neither the key nor the secrets', async () => {
    const file = path.join(tempDir(), 'c.json');
    const { text } = await recordOne(file);
    expect(text).toContain('Recorded answer.');
    const raw = fs.readFileSync(file, 'utf8');
    expect(raw).not.toContain(KEY);
    expect(raw).not.toContain('other-secret-value-42');
    const cassette = loadCassette(file);
    expect(cassette.redactions).toEqual(expect.arrayContaining(['auth-header', 'secret-env:OTHER_SECRET_TOKEN']));
    expect(cassette.upstream).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(cassette.interactions[0]?.response.kind).toBe('sse');
    expect(cassette.interactions[0]?.response.chunks.map((c) => c.data).join('')).toBe(text);
  });

  it('replays the same bytes with the vendor stopped; a changed prompt is CASSETTE_MISS with a diff', async () => {
    const file = path.join(tempDir(), 'c.json');
    const { vendor, text } = await recordOne(file);
    await vendor.close();
    const replay = openCassette({ mode: 'replay', file, cassette: loadCassette(file), hostEnv: {} });
    const server = await harness(replay);
    const again = await post(server, body('Say it, other-secret-value-42'));
    expect(await again.text()).toBe(text);
    expect((await replay.finish()).error).toBeNull();

    const strict = openCassette({ mode: 'replay', file, cassette: loadCassette(file), hostEnv: {} });
    const other = await harness(strict);
    const missed = await post(other, body('Say something else'));
    expect(missed.status).toBe(400);
    expect(await missed.text()).toContain('CASSETTE_MISS');
    const report = await strict.finish();
    expect(report.missed).toBe(1);
    expect(report.error?.code).toBe('CASSETTE_MISS');
    expect(report.error?.message).toMatch(/nearest is #1/);
    expect(report.error?.message).toContain('Say something else');
    // The recorded call was never asked for: also reported.
    expect(report.diagnostics.map((d) => d.code)).toEqual(['CASSETTE_MISS', 'CASSETTE_UNUSED']);
  });

  it('a replay that never asks for a recorded call fails with CASSETTE_UNUSED; lenient falls back to the script', async () => {
    const file = path.join(tempDir(), 'c.json');
    await recordOne(file);
    const unused = openCassette({ mode: 'replay', file, cassette: loadCassette(file), hostEnv: {} });
    await harness(unused);
    expect((await unused.finish()).error?.code).toBe('CASSETTE_UNUSED');

    const lenient = openCassette({ mode: 'replay', file, cassette: loadCassette(file), hostEnv: {}, strict: false });
    const server = await harness(lenient);
    const fallback = await post(server, body('Something not recorded'));
    expect(await fallback.text()).toContain('from the script');
    const report = await lenient.finish();
    expect(report.error).toBeNull();
    expect(report.diagnostics.map((d) => [d.code, d.level])).toEqual([
      ['CASSETTE_MISS', 'warning'],
      ['CASSETTE_UNUSED', 'warning'],
    ]);
  });

  it('an unreachable upstream answers the engine 502 and fails the recording with CASSETTE_UPSTREAM_FAILED', async () => {
    const file = path.join(tempDir(), 'c.json');
    const gone = await startModelServer({});
    const url = gone.url;
    await gone.close();
    const cassette = openCassette({ mode: 'record', file, upstream: url, hostEnv: { OPENAI_API_KEY: KEY } });
    const server = await harness(cassette);
    const response = await post(server, body('hi'));
    expect(response.status).toBe(502);
    expect(await response.text()).not.toContain(KEY);
    const report = await cassette.finish();
    expect(report.error?.code).toBe('CASSETTE_UPSTREAM_FAILED');
    expect(report.error?.message).toContain(url);
    // A failed recording writes no cassette (an empty one would be replayed, and missed, by every later auto run)
    // and says how to re-record.
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(`${file}.partial`)).toBe(false);
    const notWritten = report.diagnostics.find((d) => d.code === 'CASSETTE_NOT_WRITTEN');
    expect(notWritten?.level).toBe('error');
    expect(notWritten?.message).toContain(`The recording of ${file} failed (CASSETTE_UPSTREAM_FAILED)`);
    expect(notWritten?.message).toContain('vitest -u');
  });

  it('a recording that fails after recording something keeps the cassette already there, and its part aside', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.json');
    writeEmptyCassette(file);
    const before = fs.readFileSync(file, 'utf8');
    const vendor = await startKeyedVendor(KEY, { version: 1, turns: [turns.final('Recorded answer.')] });
    cleanups.push(() => vendor.close());
    // The vendor answers the first call, then is gone: the second is an upstream failure.
    const cassette = openCassette({ mode: 'record', file, upstream: vendor.url, hostEnv: { OPENAI_API_KEY: KEY } });
    const server = await harness(cassette);
    expect((await post(server, body('first'))).status).toBe(200);
    await vendor.close();
    expect((await post(server, body('second'))).status).toBe(502);
    const report = await cassette.finish();
    expect(report.error?.code).toBe('CASSETTE_UPSTREAM_FAILED');
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    expect(loadCassette(`${file}.partial`).interactions).toHaveLength(1);
    expect(report.diagnostics.find((d) => d.code === 'CASSETTE_NOT_WRITTEN')?.message).toContain(`${file}.partial`);
  });

  it('a replay of an empty cassette says the cassette is empty and how to re-record, first', async () => {
    const file = path.join(tempDir(), 'c.json');
    writeEmptyCassette(file);
    const replay = openCassette({ mode: 'replay', file, cassette: loadCassette(file), hostEnv: {} });
    const server = await harness(replay);
    expect((await post(server, body('hi'))).status).toBe(400);
    const report = await replay.finish();
    expect(report.error?.code).toBe('CASSETTE_MISS');
    expect(report.error?.message).toMatch(/^The cassette is empty: /);
    expect(report.error?.message).toContain('-u (vitest -u)');
  });

  it('paced replay keeps the chunks and their order', async () => {
    const file = path.join(tempDir(), 'c.json');
    const { text } = await recordOne(file);
    const paced = openCassette({ mode: 'replay', file, cassette: loadCassette(file), hostEnv: {}, pace: 0.5 });
    const server = await harness(paced);
    expect(await (await post(server, body('Say it, other-secret-value-42'))).text()).toBe(text);
  });

  it("a path split across a Chat Completions tool call's argument fragments is recorded as its token (the wire's rewriteStream)", async () => {
    const file = path.join(tempDir(), 'c.json');
    // Longer than a third of the arguments: the scripted wire streams them in three fragments, so it straddles one.
    const runDir = '/tmp/agent-harness-runs/20260101T000000-opencode-0a1b2c3d/a-long-workspace-folder';
    const vendor = await startKeyedVendor(KEY, { version: 1, turns: [turns.shell(`cat ${runDir}/data.csv`)] });
    cleanups.push(() => vendor.close());
    const cassette = openCassette({
      mode: 'record',
      file,
      upstream: vendor.url,
      hostEnv: { OPENAI_API_KEY: KEY },
      context: () => ({ replacements: [], responsePaths: [[runDir, '{{run_dir}}']] }),
    });
    const server = await harness(cassette);
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-agent-harness-scripted' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'Read it' }] }),
    });
    const streamed = await response.text();
    // The engine gets the stream as it came, with the path in pieces.
    expect(streamed).not.toContain(runDir);
    await cassette.finish();
    const recorded = loadCassette(file)
      .interactions[0]!.response.chunks.map((c) => c.data)
      .join('');
    expect(recorded).not.toContain('a-long-workspace');
    expect(recorded).toContain('{{run_dir}}/data.csv');
  });
});

describe('forking a replay onto the live model', () => {
  const post = (server: ModelServer, input: unknown[]) =>
    fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-agent-harness-scripted' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, input }),
    });
  const user = (text: string) => ({ role: 'user', content: [{ type: 'input_text', text }] });
  const assistant = (text: string) => ({ role: 'assistant', content: [{ type: 'output_text', text }] });
  const serve = async (intercept: ReturnType<typeof openCassette>['intercept']) => {
    const server = await startModelServer({
      script: { version: 1, turns: [turns.final('from the script')] },
      intercept,
    });
    cleanups.push(() => server.close());
    return server;
  };

  it('replays the turns before the fork, forwards the rest with the key, and writes the forked conversation', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.json');
    const vendor = await startKeyedVendor(KEY, {
      version: 1,
      turns: [turns.final('Recorded answer.'), turns.final('Recorded second answer.')],
    });
    cleanups.push(() => vendor.close());
    const record = openCassette({ mode: 'record', file, upstream: vendor.url, hostEnv: { OPENAI_API_KEY: KEY } });
    const recording = await serve(record.intercept);
    expect(await (await post(recording, [user('Say it')])).text()).toContain('Recorded answer.');
    const second = [user('Say it'), assistant('Recorded answer.'), user('Again')];
    expect(await (await post(recording, second)).text()).toContain('Recorded second answer.');
    expect((await record.finish()).interactions).toBe(2);
    await vendor.close();

    const live = await startKeyedVendor(KEY, {
      version: 1,
      turns: [turns.final('never served'), turns.final('Live answer.')],
    });
    cleanups.push(() => live.close());
    const output = path.join(dir, 'forked.json');
    const fork = openCassette({
      mode: 'replay',
      file,
      cassette: loadCassette(file),
      fork: { at: 1, to: 'live', upstream: live.url, output },
      hostEnv: { OPENAI_API_KEY: KEY },
    });
    const server = await serve(fork.intercept);
    expect(await (await post(server, [user('Say it')])).text()).toContain('Recorded answer.');
    expect(live.accepted).toBe(0);
    const answer = await (await post(server, second)).text();
    expect(answer).toContain('Live answer.');
    expect(answer).not.toContain('Recorded second answer.');
    expect(live.accepted).toBe(1);
    expect(live.refused).toBe(0);
    const report = await fork.finish();
    expect(report).toMatchObject({ exact: 1, missed: 0, unused: 0, error: null });
    expect(report.diagnostics.map((d) => d.code)).toEqual(['CASSETTE_FORKED']);

    // The forked conversation: the replayed turn, then the live one, renumbered; no key.
    expect(fs.readFileSync(output, 'utf8')).not.toContain(KEY);
    const forked = loadCassette(output);
    expect(forked.interactions.map((i) => [i.seq, i.position])).toEqual([
      [1, 0],
      [2, 1],
    ]);
    expect(forked.interactions[1]?.response.chunks.map((c) => c.data).join('')).toContain('Live answer.');
    expect(forked.redactions).toContain('auth-header');
  });

  it('a live fork needs --fork-at, a replay and a key; --fork-cassette needs --fork-to live', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.json');
    writeEmptyCassette(file);
    const { prepareAttempt } = await import('../../src/core/prepare-attempt.js');
    const refusal = (cassette: Record<string, unknown>, hostEnv: NodeJS.ProcessEnv = {}) =>
      prepareAttempt({
        paths: resolveHarnessPaths({ env: {}, projectRoot: dir, skillRoots: [] }),
        engine: 'codex',
        launch: 'start',
        prompt: 'hi',
        modelMode: 'replay',
        isolation: 'off',
        cassette: { path: file, ...cassette },
        hostEnv,
      }).then(
        () => null,
        (error: unknown) => error as Error,
      );
    const noAt = await refusal({ forkTo: 'live' });
    expect(isAgentHarnessError(noAt, 'USAGE_ERROR')).toBe(true);
    expect(noAt?.message).toContain('--fork-at');
    const noKey = await refusal({ forkAt: 1, forkTo: 'live' });
    expect(isAgentHarnessError(noKey, 'CASSETTE_KEY_MISSING')).toBe(true);
    expect(noKey?.message).toContain('OPENAI_API_KEY');
    const scriptedOutput = await refusal({ forkAt: 1, forkCassette: 'out.json' });
    expect(isAgentHarnessError(scriptedOutput, 'USAGE_ERROR')).toBe(true);
    expect(scriptedOutput?.message).toContain('--fork-to live');
    const sameFile = await refusal({ forkAt: 1, forkTo: 'live', forkCassette: file }, { OPENAI_API_KEY: KEY });
    expect(isAgentHarnessError(sameFile, 'USAGE_ERROR')).toBe(true);
    expect(await refusal({ forkAt: 1, forkTo: 'live' }, { OPENAI_API_KEY: KEY })).toBeNull();
  });

  it('start --model replay --upstream without a live fork is a usage error: the upstream would go unused', () => {
    const sandbox = createCliSandbox();
    cleanups.push(() => sandbox.cleanup());
    const run = runCliProcess(sandbox, [
      'start',
      '--model',
      'replay',
      '--cassette',
      'c.json',
      '--upstream',
      'http://127.0.0.1:9',
      'codex',
    ]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('USAGE_ERROR');
    expect(run.stderr).toContain('a replay reaches no upstream');
  });
});

describe('model serve --cassette', () => {
  it('serves a cassette to any client, refuses what it lacks, and sums up when stopped', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.json');
    const input = (text: string) => [{ role: 'user', content: [{ type: 'input_text', text }] }];
    const vendor = await startKeyedVendor(KEY, { version: 1, turns: [turns.final('Served from the cassette.')] });
    cleanups.push(() => vendor.close());
    const record = openCassette({ mode: 'record', file, upstream: vendor.url, hostEnv: { OPENAI_API_KEY: KEY } });
    const recording = await startModelServer({ intercept: record.intercept });
    cleanups.push(() => recording.close());
    const post = (url: string, text: string) =>
      fetch(`${url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer anything' },
        body: JSON.stringify({ model: 'gpt-test', stream: true, input: input(text) }),
      });
    const recorded = await (await post(recording.url, 'Say it')).text();
    await record.finish();
    await vendor.close();

    const child = spawn(process.execPath, [BIN, 'model', 'serve', '--cassette', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => {
      child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await waitUntil(() => /listening on (\S+)/.test(stdout), 10_000, 25);
    const url = /listening on (\S+)/.exec(stdout)?.[1];
    expect(url, stderr).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await (await post(url!, 'Say it')).text()).toBe(recorded);
    const missed = await post(url!, 'Say something else');
    expect(missed.status).toBe(400);
    expect(await missed.text()).toContain('CASSETTE_MISS');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toContain('1 exact, 0 divergent, 1 missed, 0 unused of 1');
    expect(stderr).toContain('error CASSETTE_MISS');
  });
});

describe('fidelity table of the consistency report', () => {
  const attempt = (cassette?: AgentHarnessAttemptRecord['cassette']): AgentHarnessAttemptRecord => ({
    runId: 'r',
    attempt: 1,
    launch: 'start',
    exitCode: 0,
    completion: { state: 'completed', reason: 'done_marker' },
    fcmpCounts: {},
    auditDir: '/a',
    durationMs: 1,
    usage: null,
    toolCalls: 0,
    retry: 0,
    ...(cassette ? { cassette } : {}),
  });
  const input = (id: string, engine: string, attempts: AgentHarnessAttemptRecord[]) => ({
    id,
    name: id,
    fullName: `${engine} > ${id}`,
    project: 'p',
    file: 'f.test.ts',
    state: 'passed' as const,
    durationMs: 1,
    retryCount: 0,
    flaky: false,
    errors: [],
    meta: { engine, runId: 'r', handle: 'h', sessionId: null, attempts },
  });

  it('sums exact, divergent, missed and unused per engine; absent when no attempt used a cassette', () => {
    const report = buildConsistencyReport(
      [
        input('a', 'codex', [attempt({ mode: 'record', exact: 0, divergent: 0, missed: 0, unused: 0 })]),
        input('b', 'codex', [attempt({ mode: 'replay', exact: 2, divergent: 1, missed: 0, unused: 0 })]),
        input('c', 'claude', [attempt({ mode: 'replay', exact: 1, divergent: 0, missed: 1, unused: 1 }), attempt()]),
      ],
      'passed',
    );
    expect(report.fidelity).toEqual([
      { engine: 'claude', recorded: 0, replayed: 1, exact: 1, divergent: 0, missed: 1, unused: 1 },
      { engine: 'codex', recorded: 1, replayed: 1, exact: 2, divergent: 1, missed: 0, unused: 0 },
    ]);
    expect(renderMarkdown(report)).toContain('## Cassette fidelity');
    expect(renderMarkdown(report)).toContain('| codex | 1 | 1 | 2 | 1 | 0 | 0 |');
    const plain = buildConsistencyReport([input('d', 'codex', [attempt()])], 'passed');
    expect(plain.fidelity).toBeUndefined();
    expect(renderMarkdown(plain)).not.toContain('Cassette fidelity');
  });
});

describe('cassettes in the fluent attemptAgent', () => {
  it("each call gets its own cassette: a replay of a missing one is CASSETTE_NOT_FOUND naming that call's file", async () => {
    const dir = tempDir();
    const Agent = attemptAgent('codex', {
      paths: resolveHarnessPaths({ env: {}, projectRoot: dir, skillRoots: [] }),
      modelServer: { url: 'http://127.0.0.1:9', setScript: () => undefined },
      model: 'replay',
      cassette: (call, prompt) => `tapes/${call}-${prompt.length}.json`,
    });
    const agent = new Agent();
    const first = await agent.execute('hi').catch((error: unknown) => error);
    expect(isAgentHarnessError(first, 'CASSETTE_NOT_FOUND')).toBe(true);
    expect((first as Error).message).toContain(path.join(dir, 'tapes', '1-2.json'));
    const second = await agent.execute('hello').catch((error: unknown) => error);
    expect((second as Error).message).toContain(path.join(dir, 'tapes', '2-5.json'));
  });
});
