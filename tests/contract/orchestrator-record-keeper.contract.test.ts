import { describe, expect, it } from 'vitest';
import { AgentHarnessError } from '../../src/errors/index.js';
import {
  buildOrchestratorConfig,
  harnessContextConfig,
  RecordKeeper,
  runPhase,
  type HarnessTrace,
} from '../../src/orchestrator/index.js';

const fixed = () => new Date('2026-01-02T03:04:05.000Z');

describe('RecordKeeper', () => {
  it('normalizes ingested messages: CRLF, control characters, surrounding space, text parts', () => {
    const keeper = new RecordKeeper({ now: fixed });
    keeper.ingest('  hello\r\nworld\u0007 ');
    keeper.ingest({
      role: 'user',
      content: [
        { type: 'text', text: 'part one' },
        { type: 'text', text: 'part two' },
      ],
    });
    expect(keeper.snapshot().turns).toEqual([
      { role: 'user', text: 'hello\nworld', at: '2026-01-02T03:04:05.000Z' },
      { role: 'user', text: 'part one\npart two', at: '2026-01-02T03:04:05.000Z' },
    ]);
    expect(keeper.snapshot().latest).toBe('part one\npart two');
  });

  it('rejects empty, non-text and assistant-role input with ORCHESTRATOR_INPUT_INVALID and keeps history', () => {
    const keeper = new RecordKeeper();
    keeper.ingest('kept');
    for (const bad of ['', ' \n\t', { content: 3 }, null, { role: 'assistant', content: 'x' }]) {
      expect(() => keeper.ingest(bad)).toThrow(expect.objectContaining({ code: 'ORCHESTRATOR_INPUT_INVALID' }));
    }
    expect(keeper.snapshot().turns.map((t) => t.text)).toEqual(['kept']);
  });

  it('snapshots are frozen copies: harnesses cannot write history', () => {
    const keeper = new RecordKeeper();
    const snap = keeper.ingest('one');
    expect(() => (snap.turns as unknown as unknown[]).push({})).toThrow(TypeError);
    keeper.append({ role: 'assistant', text: 'two' });
    expect(snap.turns).toHaveLength(1);
    expect(keeper.snapshot().turns).toHaveLength(2);
  });

  it('recent(n) returns the last n turns oldest first, copies, and validates n', () => {
    const keeper = new RecordKeeper();
    for (const [i, t] of ['a', 'b', 'c'].entries()) {
      if (i % 2) keeper.append({ role: 'assistant', text: t });
      else keeper.ingest(t);
    }
    expect(keeper.recent(2).map((t) => t.text)).toEqual(['b', 'c']);
    expect(keeper.recent(10).map((t) => t.text)).toEqual(['a', 'b', 'c']);
    expect(keeper.recent(0)).toEqual([]);
    keeper.recent(1)[0]!.text = 'changed';
    expect(keeper.recent(1)[0]!.text).toBe('c');
    expect(() => keeper.recent(-1)).toThrow(AgentHarnessError);
    expect(() => keeper.recent(1.5)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });

  it('statistics count turns, and per phase runs, errors, calls, tokens and latency', () => {
    const keeper = new RecordKeeper();
    keeper.ingest('q');
    keeper.append({ role: 'assistant', text: 'a' });
    const trace = (latencyMs: number, tokens: number[][]): HarnessTrace => ({
      phase: 'intent',
      startedAt: '',
      endedAt: '',
      latencyMs,
      calls: tokens.map(([i, o]) => ({
        model: 'm',
        latencyMs: 1,
        attempts: 1,
        usage: { inputTokens: i!, outputTokens: o! },
      })),
    });
    keeper.recordPhase(
      trace(10, [
        [3, 4],
        [5, 6],
      ]),
      false,
    );
    keeper.recordPhase(trace(7, [[1, 1]]), true);
    keeper.recordPhase({ ...trace(2, []), phase: 'recover' }, false);
    expect(keeper.statistics()).toEqual({
      turns: { user: 1, assistant: 1 },
      phases: {
        intent: { runs: 2, errors: 1, calls: 3, inputTokens: 9, outputTokens: 11, latencyMs: 17 },
        recover: { runs: 1, errors: 0, calls: 0, inputTokens: 0, outputTokens: 0, latencyMs: 2 },
      },
    });
  });

  it('runPhase turns a throwing harness into a result with error, fallback output and a full trace', async () => {
    const keeper = new RecordKeeper();
    const config = harnessContextConfig(
      buildOrchestratorConfig({ models: { intent: 'i', memory: 'm', respond: 'r', utility: 'u' } }),
    );
    const ctx = { conversation: keeper.ingest('x'), config, now: fixed };
    const result = await runPhase(
      'memory',
      {
        run: async () => {
          throw new AgentHarnessError('LLM_TIMEOUT', 'slow');
        },
      },
      {},
      ctx,
      'fallback',
    );
    expect(result).toMatchObject({
      output: 'fallback',
      done: false,
      error: { code: 'LLM_TIMEOUT' },
      trace: { phase: 'memory', calls: [], startedAt: '2026-01-02T03:04:05.000Z' },
    });
  });
});
