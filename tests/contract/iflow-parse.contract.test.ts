/**
 * iFlow parser on authentication failures (constructed from documented output, see fixtures/streams/iflow/README.md):
 * the stdout `[API Error: …]` line is the turn's failure, named by the server's code, never the answer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { iflowEngine } from '../../src/engines/iflow/index.js';
import { describeIflowApiError } from '../../src/engines/iflow/parse.js';
import { translateRecorded } from '../../src/translate/recorded.js';

const STREAMS = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams', 'iflow');

function recorded(name: string) {
  const read = (ext: string): Buffer | undefined => (fs.existsSync(path.join(STREAMS, `${name}.${ext}.log`)) ? fs.readFileSync(path.join(STREAMS, `${name}.${ext}.log`)) : undefined);
  const stdout = read('stdout');
  const stderr = read('stderr');
  return translateRecorded(iflowEngine, { ...(stdout ? { stdout } : {}), ...(stderr ? { stderr } : {}) }, { runId: 'golden' });
}

function normalized(events: readonly { ts: string }[]): string {
  return events.map((event) => JSON.stringify({ ...event, ts: '<ts>' })).join('\n') + '\n';
}

describe('iflow authentication failures', () => {
  it.each(['auth-expired', 'invalid-api-key'])('%s matches its golden RASP and FCMP', async (name) => {
    const result = recorded(name);
    await expect(normalized(result.rasp)).toMatchFileSnapshot(path.join(STREAMS, '__snapshots__', `${name}.rasp.jsonl`));
    await expect(normalized(result.fcmp)).toMatchFileSnapshot(path.join(STREAMS, '__snapshots__', `${name}.fcmp.jsonl`));
  });

  it('expired OAuth token: failed as auth, the error names the server code, the execution info does not complete it', () => {
    const { summary, judgement, fcmp } = recorded('auth-expired');
    expect(summary.session_id).toBe('session-0c1d2e3f-4a5b-4c6d-8e7f-90a1b2c3d4e5');
    expect(summary.error).toBe('iFlow API error (server code 401): token has expired, please login again');
    expect(judgement).toMatchObject({ state: 'failed', failure: { category: 'auth', code: 'ENGINE_AUTH_FAILED' } });
    expect(fcmp.some((e) => e.type === 'assistant.message.final')).toBe(false);
  });

  it('invalid API key without execution info: failed as auth', () => {
    const { summary, judgement } = recorded('invalid-api-key');
    expect(summary.error).toContain('Invalid API key provided');
    expect(judgement).toMatchObject({ state: 'failed', failure: { category: 'auth', code: 'ENGINE_AUTH_FAILED' } });
  });

  it('names the server code from either JSON body shape or an HTTP status', () => {
    expect(describeIflowApiError('x {"error":{"code":"invalid_token","message":"expired"}}')).toBe('iFlow API error (server code invalid_token): expired');
    expect(describeIflowApiError('Request failed with status 403')).toBe('iFlow API error (server code 403): Request failed with status 403');
    expect(describeIflowApiError('{broken')).toBe('iFlow API error: {broken');
  });
});
