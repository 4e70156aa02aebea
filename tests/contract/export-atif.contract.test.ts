/**
 * ATIF export: golden recordings of every engine (fixtures/streams/<engine>/) are translated as `agent-harness
 * translate` does (parsers → RASP → FCMP), then turned into ATIF v1.7, checked against the schema derived from the
 * RFC and compared with a golden file (`vitest -u` updates it). A tool-using recording gives tool-call steps on
 * every engine that reports tool calls.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTranslationAdapter } from '../../src/engines/registry.js';
import { buildAtifTrajectory } from '../../src/export/atif.js';
import { AtifTrajectorySchema, type AtifTrajectory } from '../../src/export/atif-schema.js';
import type { FcmpEvent, RaspEvent } from '../../src/protocol/index.js';
import { DONE_MARKER } from '../../src/protocol/versions.js';
import { translateRecordedStreams, type RecordedSources } from '../../src/translate/recorded-stream.js';

const STREAMS = path.join(import.meta.dirname, '..', '..', 'fixtures', 'streams');

interface GoldenCase {
  engine: 'codex' | 'claude' | 'gemini' | 'opencode' | 'copilot' | 'qwen' | 'iflow';
  name: string;
  /** Tool calls the recording holds (0: a recording without tools). */
  toolCalls: number;
  launch?: 'start' | 'resume';
}

const CASES: GoldenCase[] = [
  { engine: 'codex', name: 'turn1', toolCalls: 1 },
  { engine: 'codex', name: 'file-change', toolCalls: 4 },
  { engine: 'codex', name: 'done-marker', toolCalls: 1 },
  { engine: 'codex', name: 'turn-failed-429', toolCalls: 0 },
  { engine: 'claude', name: 'recorded-turn1', toolCalls: 1 },
  { engine: 'claude', name: 'tool-kinds', toolCalls: 6 },
  { engine: 'claude', name: 'thinking', toolCalls: 0 },
  { engine: 'claude', name: 'bash-failed', toolCalls: 1 },
  { engine: 'gemini', name: 'turn1', toolCalls: 1 },
  { engine: 'gemini', name: 'result-error', toolCalls: 2 },
  { engine: 'opencode', name: 'turn1', toolCalls: 1 },
  { engine: 'opencode', name: 'file-tool', toolCalls: 2 },
  { engine: 'copilot', name: 'turn1', toolCalls: 1 },
  { engine: 'copilot', name: 'tools', toolCalls: 3 },
  { engine: 'qwen', name: 'turn1', toolCalls: 1 },
  { engine: 'qwen', name: 'bash-failed', toolCalls: 1 },
  // iFlow prints its answer as text: its output carries no tool calls to export.
  { engine: 'iflow', name: 'done', toolCalls: 0 },
  { engine: 'iflow', name: 'api-error', toolCalls: 0 },
];

function sourcesOf(engine: string, name: string): RecordedSources {
  const sources: RecordedSources = {};
  for (const stream of ['stdout', 'stderr', 'pty'] as const)
    for (const ext of ['jsonl', 'log']) {
      const file = path.join(STREAMS, engine, `${name}.${stream}.${ext}`);
      if (fs.existsSync(file))
        sources[stream] = async function* () {
          yield fs.readFileSync(file);
        };
    }
  return sources;
}

async function atifOf(c: GoldenCase): Promise<AtifTrajectory> {
  const adapter = await loadTranslationAdapter(c.engine);
  const rasp: RaspEvent[] = [];
  const fcmp: FcmpEvent[] = [];
  const runId = `20250601T100000-${c.engine}-0a1b2c3d`;
  await translateRecordedStreams(
    adapter,
    sourcesOf(c.engine, c.name),
    { runId, attempt: 1, launch: c.launch ?? 'start' },
    { rasp: (e) => rasp.push(e), fcmp: (e) => fcmp.push(e) },
  );
  return buildAtifTrajectory(
    { rasp, fcmp },
    {
      runId,
      attempt: 1,
      engine: c.engine,
      engineVersion: '0.0.0-golden',
      prompt: 'the golden prompt',
      handle: '0a1b2c3d',
      cacheReportedApart: adapter.cacheReportedApart === true,
    },
  );
}

/** The document with its timestamps (taken when the recording is translated) replaced. */
function stable(trajectory: AtifTrajectory): string {
  const copy = structuredClone(trajectory);
  for (const step of copy.steps) if (step.timestamp) step.timestamp = '<ts>';
  return `${JSON.stringify(copy, null, 2)}\n`;
}

describe('ATIF export of the golden recordings', () => {
  it.each(CASES)('$engine $name → ATIF-v1.7', async (c) => {
    const trajectory = await atifOf(c);
    const parsed = AtifTrajectorySchema.safeParse(trajectory);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(trajectory.schema_version).toBe('ATIF-v1.7');
    expect(trajectory.steps.map((s) => s.step_id)).toEqual(trajectory.steps.map((_, i) => i + 1));
    expect(trajectory.steps[0]).toMatchObject({ source: 'user', message: 'the golden prompt' });
    const calls = trajectory.steps.flatMap((s) => s.tool_calls ?? []);
    expect(calls).toHaveLength(c.toolCalls);
    if (c.toolCalls > 0) {
      // Every call has its result in the same step, by id.
      for (const step of trajectory.steps.filter((s) => s.tool_calls?.length)) {
        const ids = (step.tool_calls ?? []).map((t) => t.tool_call_id);
        for (const result of step.observation?.results ?? []) expect(ids).toContain(result.source_call_id);
      }
      expect(trajectory.final_metrics?.extra?.tool_calls).toBe(c.toolCalls);
    }
    // The done marker stays in the raw recording, never in what the agent is shown to have said.
    for (const step of trajectory.steps) expect(step.message).not.toContain(DONE_MARKER);
    await expect(stable(trajectory)).toMatchFileSnapshot(
      path.join(STREAMS, c.engine, '__snapshots__', `${c.name}.atif.json`),
    );
  });

  it('every registered engine has a golden ATIF case, and each engine that reports tools has a tool-using one', async () => {
    const { engineIds } = await import('../../src/engines/registry.js');
    for (const engine of engineIds()) {
      expect(CASES.some((c) => c.engine === engine)).toBe(true);
      if (engine !== 'iflow') expect(CASES.some((c) => c.engine === engine && c.toolCalls > 0)).toBe(true);
    }
  });
});

describe('the ATIF schema', () => {
  const valid = (): AtifTrajectory => ({
    schema_version: 'ATIF-v1.7',
    agent: { name: 'codex', version: '1' },
    steps: [
      { step_id: 1, source: 'user', message: 'hi' },
      {
        step_id: 2,
        source: 'agent',
        message: '',
        tool_calls: [{ tool_call_id: 'c1', function_name: 'shell', arguments: { command: 'ls' } }],
        observation: { results: [{ source_call_id: 'c1', content: 'a' }] },
      },
    ],
  });

  it('accepts a minimal valid trajectory', () => {
    expect(AtifTrajectorySchema.safeParse(valid()).success).toBe(true);
  });

  it.each([
    ['steps out of order', (t: AtifTrajectory) => void (t.steps[1]!.step_id = 3)],
    ['tool calls on a user step', (t: AtifTrajectory) => void (t.steps[0]!.tool_calls = t.steps[1]!.tool_calls)],
    [
      'a result naming no call of its step',
      (t: AtifTrajectory) => void (t.steps[1]!.observation!.results[0]!.source_call_id = 'c9'),
    ],
    ['an unknown key', (t: AtifTrajectory) => void ((t as unknown as Record<string, unknown>).trajectory = 1)],
    ['a missing agent version', (t: AtifTrajectory) => void ((t.agent as { version?: string }).version = undefined)],
    ['no steps', (t: AtifTrajectory) => void (t.steps = [])],
    [
      'arguments not an object',
      (t: AtifTrajectory) => void ((t.steps[1]!.tool_calls![0] as { arguments: unknown }).arguments = 'ls'),
    ],
  ])('refuses %s', (_name, breakIt) => {
    const t = valid();
    breakIt(t);
    expect(AtifTrajectorySchema.safeParse(t).success).toBe(false);
  });
});
