/**
 * An attempt as OpenTelemetry GenAI spans (semantic conventions for GenAI agent and tool spans), built with the
 * official SDK from the same audit events as the ATIF export:
 *
 * - one `invoke_agent <engine>` span per attempt (`gen_ai.operation.name=invoke_agent`, the agent, the session as
 *   `gen_ai.conversation.id`, token usage), status ERROR when the verdict is a failure;
 * - one `execute_tool <name>` child span per tool call (`gen_ai.tool.name`, `gen_ai.tool.call.id`), from the call to
 *   its result, ERROR when the tool failed;
 * - one `skill <name>` span under the tool call that used a skill (a call of kind `skill`);
 * - a `gen_ai.evaluation.result` event on the agent span for the verdict (`gen_ai.evaluation.name`,
 *   `gen_ai.evaluation.score.label` = the completion state, `gen_ai.evaluation.score.value` 1 or 0,
 *   `gen_ai.evaluation.explanation` = the reason).
 *
 * {@link otlpJsonOf} serializes them as an OTLP/JSON `ExportTraceServiceRequest`; {@link sendOtlp} sends them to
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) with the official OTLP/HTTP exporter.
 */
import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import type { ReadableSpan, TracerProvider as TracerProviderType } from '@opentelemetry/sdk-trace';
import { AgentHarnessError } from '../errors/index.js';
import type { FcmpEvent } from '../protocol/index.js';
import { loadOptionalPeer } from '../runtime/optional-peer.js';
import { type AtifContext, type AtifEvents, buildAtifTrajectory } from './atif.js';
import type { AtifTrajectory } from './atif-schema.js';

/** The OpenTelemetry packages the OTLP export needs: optional peers, loaded when this module is first imported. */
export const OTLP_PACKAGES = [
  '@opentelemetry/api',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/otlp-transformer',
  '@opentelemetry/resources',
  '@opentelemetry/sdk-trace',
] as const;

// Importing this module is the first use (export-attempt.ts imports it on demand): DEPENDENCY_MISSING when absent.
const [
  { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace },
  { OTLPTraceExporter },
  { JsonTraceSerializer },
  { resourceFromAttributes },
  { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider },
] = await loadOptionalPeer({
  packages: OTLP_PACKAGES,
  neededBy: 'the OTLP export',
  load: () =>
    Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/otlp-transformer'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace'),
    ]),
});
type TracerProvider = TracerProviderType;

/** Instrumentation scope of the spans. */
export const OTLP_SCOPE = 'agent-harness';

/** Name of the verdict's evaluation (`gen_ai.evaluation.name`). */
export const VERDICT_EVALUATION = 'agent_harness.completion';

/** One attempt to turn into spans: its audit events and what its meta says. */
export interface OtlpAttempt {
  events: AtifEvents;
  context: AtifContext;
  /** Further evaluations of the attempt (a test's own verdict), each a `gen_ai.evaluation.result` event. */
  evaluations?: ReadonlyArray<{ name: string; label: string; score?: number; explanation?: string }>;
}

/** Options of {@link buildOtlpSpans}. */
export interface OtlpOptions {
  /** `service.name` of the resource (default "agent-harness"). */
  serviceName?: string;
  /** `service.version` of the resource. */
  serviceVersion?: string;
}

function time(ts: string | undefined, fallback: Date): Date {
  const parsed = ts ? new Date(ts) : null;
  return parsed && !Number.isNaN(parsed.getTime()) ? parsed : fallback;
}

function skillNameOf(input: unknown, fallback: string): string {
  if (input !== null && typeof input === 'object') {
    const record = input as Record<string, unknown>;
    for (const key of ['skill', 'name', 'skill_name'])
      if (typeof record[key] === 'string' && record[key] !== '') return record[key] as string;
  }
  return fallback;
}

const FAILED_STATES = new Set(['failed', 'interrupted', 'unknown', 'no_session']);

/** Adds the spans of one attempt to `provider`'s tracer. */
function addAttemptSpans(provider: TracerProvider, attempt: OtlpAttempt): void {
  const tracer = provider.getTracer(OTLP_SCOPE);
  const { events, context } = attempt;
  const trajectory = buildAtifTrajectory(events, context);
  const fcmp = events.fcmp;
  const epoch = new Date(0);
  const start = time(fcmp[0]?.ts ?? events.rasp?.[0]?.ts, epoch);
  const lastTs = time(fcmp[fcmp.length - 1]?.ts, start);
  const end =
    context.durationMs !== undefined && context.durationMs !== null
      ? new Date(Math.max(lastTs.getTime(), start.getTime() + context.durationMs))
      : lastTs;
  const completion = (trajectory.final_metrics?.extra?.completion ?? null) as AtifContext['completion'];
  const agent = tracer.startSpan(
    `invoke_agent ${context.engine}`,
    { kind: SpanKind.INTERNAL, startTime: start, attributes: agentAttributes(context, trajectory, completion) },
    ROOT_CONTEXT,
  );
  addToolSpans(tracer, events, trace.setSpan(ROOT_CONTEXT, agent), start);
  addEvaluations(agent, attempt, completion, end);
  agent.end(end);
}

/** The attributes of the attempt's `invoke_agent` span: the agent, the session, the model, token usage, the verdict. */
function agentAttributes(
  context: AtifContext,
  trajectory: AtifTrajectory,
  completion: AtifContext['completion'],
): Attributes {
  const totals = trajectory.final_metrics;
  const attributes: Attributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': context.engine,
    'gen_ai.agent.id': `${context.runId}.${context.attempt}`,
    'agent_harness.run_id': context.runId,
    'agent_harness.attempt': context.attempt,
    'agent_harness.engine.version': context.engineVersion || 'unknown',
  };
  if (context.handle) attributes['agent_harness.handle'] = context.handle;
  if (trajectory.session_id) attributes['gen_ai.conversation.id'] = trajectory.session_id;
  if (context.modelName) attributes['gen_ai.request.model'] = context.modelName;
  if (typeof totals?.total_prompt_tokens === 'number')
    attributes['gen_ai.usage.input_tokens'] = totals.total_prompt_tokens;
  if (typeof totals?.total_completion_tokens === 'number')
    attributes['gen_ai.usage.output_tokens'] = totals.total_completion_tokens;
  if (completion) {
    attributes['agent_harness.completion.state'] = completion.state;
    attributes['agent_harness.completion.reason'] = completion.reason;
  }
  return attributes;
}

/**
 * One `execute_tool` span per tool call under the agent's span (and a `skill` span under a skill's call): calls from
 * FCMP (normalized), their inputs from RASP (a skill's name), their ends from their results.
 */
function addToolSpans(tracer: Tracer, events: AtifEvents, agentContext: Context, start: Date): void {
  const fcmp = events.fcmp;
  const inputs = new Map<string, unknown>();
  for (const event of events.rasp ?? [])
    if (event.data.type === 'engine.tool.call') inputs.set(event.data.call_id, event.data.input);
  const results = new Map<string, Extract<FcmpEvent, { type: 'tool.result' }>>();
  for (const event of fcmp) if (event.type === 'tool.result') results.set(event.data.call_id, event);
  for (const event of fcmp) {
    if (event.type !== 'tool.call') continue;
    const result = results.get(event.data.call_id);
    const callStart = time(event.ts, start);
    const callEnd = result ? time(result.ts, callStart) : callStart;
    const toolAttributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': event.data.name || event.data.kind,
      'gen_ai.tool.call.id': event.data.call_id,
      'gen_ai.tool.type': event.data.kind === 'mcp' ? 'extension' : 'function',
      'agent_harness.tool.kind': event.data.kind,
    };
    if (event.data.command !== null) toolAttributes['agent_harness.tool.command'] = event.data.command;
    if (result) {
      toolAttributes['agent_harness.tool.status'] = result.data.status;
      if (result.data.exit_code !== null) toolAttributes['agent_harness.tool.exit_code'] = result.data.exit_code;
    }
    const span = tracer.startSpan(
      `execute_tool ${event.data.name || event.data.kind}`,
      { kind: SpanKind.INTERNAL, startTime: callStart, attributes: toolAttributes },
      agentContext,
    );
    if (event.data.kind === 'skill') {
      const skill = skillNameOf(inputs.get(event.data.call_id), event.data.name);
      tracer
        .startSpan(
          `skill ${skill}`,
          {
            kind: SpanKind.INTERNAL,
            startTime: callStart,
            attributes: { 'agent_harness.skill.name': skill, 'gen_ai.tool.call.id': event.data.call_id },
          },
          trace.setSpan(ROOT_CONTEXT, span),
        )
        .end(callEnd);
    }
    const failed = result !== undefined && ['failed', 'declined', 'abandoned'].includes(result.data.status);
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: `tool ${result.data.status}` });
    span.end(callEnd);
  }
}

/** The verdict and the attempt's further evaluations as `gen_ai.evaluation.result` events; ERROR for a failure. */
function addEvaluations(agent: Span, attempt: OtlpAttempt, completion: AtifContext['completion'], end: Date): void {
  if (completion) {
    const ok = !FAILED_STATES.has(completion.state);
    agent.addEvent(
      'gen_ai.evaluation.result',
      {
        'gen_ai.evaluation.name': VERDICT_EVALUATION,
        'gen_ai.evaluation.score.label': completion.state,
        'gen_ai.evaluation.score.value': ok ? 1 : 0,
        'gen_ai.evaluation.explanation': completion.reason,
      },
      end,
    );
    if (!ok) agent.setStatus({ code: SpanStatusCode.ERROR, message: completion.code ?? completion.reason });
  }
  for (const evaluation of attempt.evaluations ?? []) {
    const eventAttributes: Attributes = {
      'gen_ai.evaluation.name': evaluation.name,
      'gen_ai.evaluation.score.label': evaluation.label,
    };
    if (evaluation.score !== undefined) eventAttributes['gen_ai.evaluation.score.value'] = evaluation.score;
    if (evaluation.explanation) eventAttributes['gen_ai.evaluation.explanation'] = evaluation.explanation;
    agent.addEvent('gen_ai.evaluation.result', eventAttributes, end);
  }
}

/** The finished spans of `attempts` (one trace per attempt), built with the SDK's tracer and an in-memory exporter. */
export async function buildOtlpSpans(
  attempts: readonly OtlpAttempt[],
  options: OtlpOptions = {},
): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': options.serviceName ?? 'agent-harness',
      ...(options.serviceVersion ? { 'service.version': options.serviceVersion } : {}),
    }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  for (const attempt of attempts) addAttemptSpans(provider, attempt);
  await provider.forceFlush();
  const spans = [...exporter.getFinishedSpans()];
  await provider.shutdown();
  return spans;
}

/** The spans as an OTLP/JSON `ExportTraceServiceRequest` (the body an OTLP/HTTP JSON exporter posts). */
export function otlpJsonOf(spans: ReadableSpan[]): unknown {
  const bytes = JsonTraceSerializer.serializeRequest(spans);
  if (!bytes) throw new AgentHarnessError('EXPORT_FAILED', 'The OTLP JSON serializer returned no bytes for the spans.');
  return JSON.parse(new TextDecoder().decode(bytes));
}

/** The OTLP endpoint configured in `env`, if any (the traces-specific variable wins, as in the exporter). */
export function otlpEndpointOf(env: NodeJS.ProcessEnv = process.env): string | null {
  return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || null;
}

/**
 * Sends `spans` with the official OTLP/HTTP exporter, which reads `OTEL_EXPORTER_OTLP_ENDPOINT` (posting to
 * `<endpoint>/v1/traces`), `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and `OTEL_EXPORTER_OTLP_HEADERS` itself. Rejects
 * with `EXPORT_FAILED` when the collector refuses them or cannot be reached.
 */
export async function sendOtlp(spans: ReadableSpan[]): Promise<void> {
  const exporter = new OTLPTraceExporter();
  const endpoint = otlpEndpointOf() ?? '(the exporter default, http://localhost:4318/v1/traces)';
  try {
    await new Promise<void>((resolve, reject) => {
      exporter.export(spans, (result) => {
        if (result.code === 0) resolve();
        else
          reject(
            new AgentHarnessError(
              'EXPORT_FAILED',
              `Sending ${spans.length} spans to the OTLP endpoint ${endpoint} failed: ${result.error?.message ?? 'unknown error'}.`,
              { cause: result.error, details: { endpoint } },
            ),
          );
      });
    });
  } finally {
    await exporter.shutdown();
  }
}
