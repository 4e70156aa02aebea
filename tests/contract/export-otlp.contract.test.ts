/**
 * OTLP export of recorded attempts: GenAI spans built with the OpenTelemetry SDK from golden recordings — one
 * invoke_agent span, an execute_tool span per tool call (child of it), a skill span under a skill call, the verdict
 * as a gen_ai.evaluation.result event — and their OTLP/JSON form.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { loadTranslationAdapter } from '../../src/engines/registry.js';
import { buildOtlpSpans, otlpJsonOf, type OtlpAttempt } from '../../src/export/otlp.js';
import type { FcmpEvent, RaspEvent } from '../../src/protocol/index.js';
import { translateRecordedStreams, type RecordedSources } from '../../src/translate/recorded-stream.js';

const STREAMS = path.join(import.meta.dirname, '..', '..', 'fixtures', 'streams');

async function attemptOf(engine: string, name: string): Promise<OtlpAttempt> {
  const sources: RecordedSources = {};
  for (const stream of ['stdout', 'stderr'] as const)
    for (const ext of ['jsonl', 'log']) {
      const file = path.join(STREAMS, engine, `${name}.${stream}.${ext}`);
      if (fs.existsSync(file))
        sources[stream] = async function* () {
          yield fs.readFileSync(file);
        };
    }
  const rasp: RaspEvent[] = [];
  const fcmp: FcmpEvent[] = [];
  const runId = `20250601T100000-${engine}-0a1b2c3d`;
  const adapter = await loadTranslationAdapter(engine);
  await translateRecordedStreams(
    adapter,
    sources,
    { runId, attempt: 1 },
    { rasp: (e) => rasp.push(e), fcmp: (e) => fcmp.push(e) },
  );
  return {
    events: { rasp, fcmp },
    context: {
      runId,
      attempt: 1,
      engine: engine as never,
      handle: '0a1b2c3d',
      cacheReportedApart: adapter.cacheReportedApart === true,
    },
  };
}

describe('OTLP GenAI spans', () => {
  it('gives claude tool-kinds one agent span, six tool spans under it and a skill span under the skill call', async () => {
    const spans = await buildOtlpSpans([await attemptOf('claude', 'tool-kinds')]);
    const agent = spans.find((s) => s.name === 'invoke_agent claude')!;
    expect(agent.attributes['gen_ai.operation.name']).toBe('invoke_agent');
    expect(agent.attributes['gen_ai.agent.name']).toBe('claude');
    const tools = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool');
    expect(tools).toHaveLength(6);
    for (const tool of tools) {
      expect(tool.parentSpanContext?.spanId).toBe(agent.spanContext().spanId);
      expect(tool.spanContext().traceId).toBe(agent.spanContext().traceId);
    }
    const skillCall = tools.find((s) => s.attributes['agent_harness.tool.kind'] === 'skill')!;
    const skill = spans.find((s) => s.name === 'skill demo-hello');
    expect(skill?.attributes['agent_harness.skill.name']).toBe('demo-hello');
    expect(skill?.parentSpanContext?.spanId).toBe(skillCall.spanContext().spanId);
    const verdict = agent.events.find((e) => e.name === 'gen_ai.evaluation.result');
    expect(verdict?.attributes).toMatchObject({
      'gen_ai.evaluation.name': 'agent_harness.completion',
      'gen_ai.evaluation.score.label': 'completed',
      'gen_ai.evaluation.score.value': 1,
    });
    expect(agent.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it('marks a failed attempt and a failed tool as errors, and adds a test verdict as a further evaluation', async () => {
    const attempt = await attemptOf('claude', 'bash-failed');
    const failedRun = await attemptOf('codex', 'turn-failed-429');
    const spans = await buildOtlpSpans([
      { ...attempt, evaluations: [{ name: 'vitest', label: 'failed', score: 0, explanation: 'expected 1 to be 2' }] },
      failedRun,
    ]);
    const failedTool = spans.find((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool')!;
    expect(failedTool.status.code).toBe(SpanStatusCode.ERROR);
    const claude = spans.find((s) => s.name === 'invoke_agent claude')!;
    expect(claude.events.map((e) => e.attributes?.['gen_ai.evaluation.name'])).toEqual([
      'agent_harness.completion',
      'vitest',
    ]);
    const codex = spans.find((s) => s.name === 'invoke_agent codex')!;
    expect(codex.status.code).toBe(SpanStatusCode.ERROR);
    expect(codex.spanContext().traceId).not.toBe(claude.spanContext().traceId);
  });

  it('serializes to an OTLP/JSON ExportTraceServiceRequest', async () => {
    const body = otlpJsonOf(
      await buildOtlpSpans([await attemptOf('opencode', 'turn1')], { serviceVersion: '9.9.9' }),
    ) as {
      resourceSpans: Array<{
        resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
        scopeSpans: Array<{ scope: { name: string }; spans: Array<{ name: string; traceId: string }> }>;
      }>;
    };
    const resource = body.resourceSpans[0]!;
    expect(resource.resource.attributes).toContainEqual({ key: 'service.version', value: { stringValue: '9.9.9' } });
    expect(resource.scopeSpans[0]!.scope.name).toBe('agent-harness');
    expect(resource.scopeSpans[0]!.spans.map((s) => s.name).sort()).toEqual([
      'execute_tool bash',
      'invoke_agent opencode',
    ]);
    expect(resource.scopeSpans[0]!.spans[0]!.traceId).toMatch(/^[0-9a-f]{32}$/);
  });
});
