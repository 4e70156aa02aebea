/**
 * The `model` fixture: one server per file for sequential tests (script reset, logs viewed per test), a
 * private server for a concurrent test.
 */
import { describe, expect } from 'vitest';
import { DEFAULT_REPLY } from '../../src/model/index.js';
import { test, turns } from '../../src/public/vitest.js';

const seen: { url?: string; concurrentUrl?: string } = {};

async function ask(url: string): Promise<string> {
  const response = await fetch(`${url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ stream: false, input: [] }),
  });
  const body = (await response.json()) as { output: Array<{ content: Array<{ text: string }> }> };
  return body.output[0]!.content[0]!.text;
}

describe.sequential('model fixture sharing', () => {
  test('a first test scripts the file server', async ({ model }) => {
    seen.url = model.url;
    model.script(turns.text('scripted for test one'));
    expect(await ask(model.url)).toBe('scripted for test one');
    expect(model.requests).toHaveLength(1);
  });

  test('the next test gets the same server with a fresh script and its own request log', async ({ model }) => {
    expect(model.url).toBe(seen.url);
    expect(model.requests).toHaveLength(0);
    expect(await ask(model.url)).toBe(DEFAULT_REPLY);
    expect(model.requests).toHaveLength(1);
    expect(model.server.requests.length).toBeGreaterThanOrEqual(2);
  });
});

describe('concurrent tests', () => {
  test.concurrent('get a private server', async ({ model }) => {
    seen.concurrentUrl = model.url;
    expect(model.url).not.toBe(seen.url);
    model.script(turns.text('private'));
    expect(await ask(model.url)).toBe('private');
  });
});
