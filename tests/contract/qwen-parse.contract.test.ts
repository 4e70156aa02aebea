/**
 * Qwen Code `-p --output-format stream-json` parser, over the streams recorded from the real Qwen Code 0.24.4 against
 * the scripted model (fixtures/streams/qwen/README.md; their golden RASP and FCMP are engine-goldens.contract's),
 * through `translateRecorded` (line splitter → RASP builder → FCMP, as a live attempt): the verdict each one gets.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { qwenEngine } from '../../src/engines/qwen/index.js';
import { qwenShellExitCode } from '../../src/engines/qwen/parse.js';
import { translateRecorded } from '../../src/translate/recorded.js';

const STREAMS = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams', 'qwen');
function recorded(name: string) {
  return translateRecorded(
    qwenEngine,
    { stdout: fs.readFileSync(path.join(STREAMS, `${name}.stdout.jsonl`)) },
    { runId: 'golden' },
  );
}

describe('qwen parser (its goldens are engine-goldens.contract.test.ts)', () => {
  it.each([
    ['turn1', { state: 'completed', reason: 'done_marker' }],
    ['turn2-resume', { state: 'completed', reason: 'done_marker' }],
    ['skill-write', { state: 'completed', reason: 'done_marker' }],
    ['error-401', { state: 'failed', failure: { category: 'auth', code: 'ENGINE_AUTH_FAILED' } }],
    ['error-429', { state: 'failed', failure: { category: 'rate_limit', code: 'ENGINE_RATE_LIMITED' } }],
    ['malformed', { state: 'failed', failure: { category: 'protocol', code: 'ENGINE_PROTOCOL_ERROR' } }],
    ['drop', { state: 'failed', failure: { category: 'network', code: 'ENGINE_NETWORK_ERROR' } }],
  ])('%s: %o', (name, verdict) => {
    const result = recorded(name);
    expect(result.judgement).toMatchObject(verdict);
    // An API error is never the model's answer, and no line of a real stream is unknown.
    if (verdict.state === 'failed') expect(result.fcmp.some((e) => e.type === 'assistant.message.final')).toBe(false);
    expect(result.summary.diagnostics ?? []).toEqual([]);
  });

  it('reads tool calls with their kinds, the shell exit code, and the files written', () => {
    const skill = recorded('skill-write');
    expect(skill.fcmp.filter((e) => e.type === 'tool.call').map((e) => [e.data.kind, e.data.name])).toEqual([
      ['skill', 'skill'],
      ['file_change', 'write_file'],
    ]);
    const failed = recorded('bash-failed').fcmp.find((e) => e.type === 'tool.result');
    expect(failed?.data).toMatchObject({ status: 'failed', exit_code: 3 });
    expect(qwenShellExitCode('Command: x\nExit Code: 0\nSignal: (none)')).toBe(0);
    expect(qwenShellExitCode('no report')).toBeNull();
  });

  it('a stream cut before its result is not a completed turn', () => {
    expect(recorded('truncated').judgement.state).not.toBe('completed');
  });
});
