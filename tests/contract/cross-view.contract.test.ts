/**
 * One stream, every view: for every golden recording of every engine (fixtures/streams/<engine>/), the RASP its
 * parser gives goes through the attempt's live FCMP (`core/live-fcmp.ts`, written to fcmp.N.jsonl as a real attempt
 * writes it), and each view a user reads is built by its own mapper: the provider events, the ACP session updates,
 * the Vitest `AttemptResult`, the viewer API's attempt (read back from the audit files) and the ATIF export. They
 * must agree with FCMP on every tool call (id, name, command, status, exit code), the final message and the
 * completion, so a fix to how a tool call is shown cannot land in one view only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { createSessionUpdateMapper, stopReasonOf } from '../../src/acp/updates.js';
import { attemptResult, type AttemptResult } from '../../src/core/attempt-result.js';
import { AuditWriteFailures, attemptAuditPaths } from '../../src/core/audit-files.js';
import { EventSpool } from '../../src/core/event-spool.js';
import { createLiveFcmp } from '../../src/core/live-fcmp.js';
import { isEngineId, loadEngine, loadTranslationAdapter } from '../../src/engines/registry.js';
import { buildAtifTrajectory } from '../../src/export/atif.js';
import type { AgentEvent, FcmpEvent, RaspEvent } from '../../src/protocol/index.js';
import { createAgentEventMapper, endEventsOf } from '../../src/providers/events.js';
import { readAttemptView } from '../../src/report/attempt-view.js';
import type { AttemptEvent } from '../../src/translate/attempt-events.js';
import { createConformanceTally } from '../../src/translate/conformance.js';
import { stripDoneMarker } from '../../src/translate/done-marker.js';
import { toolCallsOf } from '../../src/translate/fcmp-tool-calls.js';
import { recordedFcmpOptions } from '../../src/translate/recorded.js';
import { translateRecordedStreams, type RecordedSources } from '../../src/translate/recorded-stream.js';

const STREAMS = path.join(import.meta.dirname, '..', '..', 'fixtures', 'streams');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-cross-view-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const RECORDING = /^(.+)\.(stdout|stderr|pty)\.(jsonl|log)$/;

/** Every golden recording of every registered engine: [engine, name]. */
function goldenStreams(): [string, string][] {
  const out: [string, string][] = [];
  for (const engine of fs.readdirSync(STREAMS).sort()) {
    if (!isEngineId(engine)) continue;
    const names = new Set<string>();
    for (const file of fs.readdirSync(path.join(STREAMS, engine))) {
      const match = RECORDING.exec(file);
      if (match) names.add(match[1]!);
    }
    for (const name of [...names].sort()) out.push([engine, name]);
  }
  return out;
}

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

/** One tool call as a view shows it. */
interface SeenCall {
  callId: string;
  name: string;
  command: string | null;
  status: string | null;
  exitCode: number | null;
}

/** What each view says of an attempt. */
interface Seen {
  toolCalls: SeenCall[];
  /** The last final message, done marker left out (what a user is shown the agent said). */
  finalMessage: string | null;
  /** completed | awaiting_input | failed | no_session (failed includes interrupted). */
  completion: string;
}

const shown = (text: string | null | undefined): string | null => {
  if (text === null || text === undefined) return null;
  const stripped = stripDoneMarker(text)?.trim() ?? '';
  return stripped === '' ? null : stripped;
};

const stateOf = (state: string): string => (state === 'interrupted' ? 'failed' : state);

/** A golden recording run through the attempt's live FCMP, with its audit files where an attempt writes them. */
async function liveAttempt(engine: string, name: string) {
  const adapter = await loadTranslationAdapter(engine as Parameters<typeof loadTranslationAdapter>[0]);
  const runId = `20250601T100000-${engine}-0a1b2c3d`;
  const launch = name.includes('resume') ? 'resume' : 'start';
  const rasp: RaspEvent[] = [];
  await translateRecordedStreams(
    adapter,
    sourcesOf(engine, name),
    { runId, attempt: 1, launch, rawLineEvents: true },
    { rasp: (event) => rasp.push(event) },
  );
  const runDir = fs.mkdtempSync(path.join(tmp, `${engine}-${name}-`));
  const audit = attemptAuditPaths(runDir, 1);
  fs.mkdirSync(audit.dir, { recursive: true });
  const failures = new AuditWriteFailures();
  const raspSpool = new EventSpool<RaspEvent>(audit.rasp, failures);
  const fcmpSpool = new EventSpool<FcmpEvent>(audit.fcmp, failures);
  const events: AttemptEvent[] = [];
  const live = createLiveFcmp({
    options: recordedFcmpOptions(adapter, { runId, attempt: 1, launch }),
    spool: fcmpSpool,
    tally: createConformanceTally(),
    requests: Promise.resolve(null),
    onRaspEvent: (event) => events.push(event),
    onEvent: (event) => events.push(event),
  });
  for (const event of rasp) {
    raspSpool.push(event);
    live.push(event);
  }
  const verdict = live.verdict();
  await live.finish(verdict);
  raspSpool.close();
  fcmpSpool.close();
  expect(failures.list).toEqual([]);
  const completion = {
    state: verdict.state,
    reason: verdict.reason,
    ...(verdict.failure ? { code: verdict.failure.code } : {}),
  };
  const result = attemptResult(
    {
      runId,
      handle: '0a1b2c3d',
      runDir,
      engine: adapter.id,
      attempt: 1,
      launch,
      sessionId: null,
      exitCode: 0,
      signal: null,
      timedOut: false,
      completion,
      finalMessage: live.finalMessage,
      fsDiff: null,
      usage: null,
      durationMs: 0,
      engineVersion: null,
      skillsInjected: [],
      skillsOffered: null,
      audit,
      conformance: {} as AttemptResult['conformance'],
      error: null,
    },
    { rasp: raspSpool, fcmp: fcmpSpool },
  );
  return { adapter, runDir, events, result, fcmp: events.filter((e): e is FcmpEvent => 'type' in e), rasp };
}

/** FCMP itself: the one normalized record. */
function fcmpView(fcmp: readonly FcmpEvent[]): Seen {
  const finals = fcmp.filter((e) => e.type === 'assistant.message.final');
  const terminal = fcmp.find(
    (e) => e.type === 'conversation.completed' || e.type === 'conversation.failed' || e.type === 'user.input.required',
  );
  return {
    toolCalls: toolCallsOf(fcmp).map(({ callId, name, command, status, exitCode }) => ({
      callId,
      name,
      command,
      status,
      exitCode,
    })),
    finalMessage: shown(finals.at(-1)?.data.text),
    completion:
      terminal?.type === 'conversation.completed'
        ? 'completed'
        : terminal?.type === 'user.input.required'
          ? 'awaiting_input'
          : terminal?.type === 'conversation.failed'
            ? 'failed'
            : 'no_session',
  };
}

/** The provider's AgentEvents (seed 003): tool_use/tool_result content, text messages, the closing events. */
function providerView(events: readonly AttemptEvent[], result: AttemptResult, initMessage?: Record<string, string>) {
  const map = createAgentEventMapper(initMessage);
  const agentEvents: AgentEvent[] = [...events.flatMap((event) => map(event)), ...endEventsOf(result, {})];
  const calls = new Map<string, SeenCall>();
  let finalMessage: string | null = null;
  for (const event of agentEvents) {
    const tool = event.content?.tool;
    if (tool) {
      const { callId, name, command, status, exitCode } = tool;
      calls.set(callId, { callId, name, command, status, exitCode });
    } else if (event.content?.kind === 'text') finalMessage = shown(event.content.text);
  }
  const complete = agentEvents.find((e) => e.type === 'complete');
  return { toolCalls: [...calls.values()], finalMessage, success: complete?.result?.success ?? null };
}

/** The ACP session updates an editor gets. */
function acpView(events: readonly AttemptEvent[], result: AttemptResult) {
  const map = createSessionUpdateMapper();
  const updates: SessionUpdate[] = events.flatMap((event) => map(event));
  const calls = new Map<string, { callId: string; title: string; status: string; exitCode: number | null }>();
  const messages = new Map<string, string>();
  let lastMessage: string | null = null;
  for (const update of updates) {
    if (update.sessionUpdate === 'tool_call')
      calls.set(update.toolCallId, {
        callId: update.toolCallId,
        title: update.title,
        status: update.status ?? 'pending',
        exitCode: null,
      });
    else if (update.sessionUpdate === 'tool_call_update') {
      const call = calls.get(update.toolCallId)!;
      call.status = update.status ?? call.status;
      call.exitCode = (update.rawOutput as { exit_code: number | null }).exit_code;
    } else if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') {
      const id = update.messageId ?? '';
      messages.set(id, (messages.get(id) ?? '') + update.content.text);
      lastMessage = id;
    }
  }
  return {
    toolCalls: [...calls.values()],
    finalMessage: lastMessage === null ? null : shown(messages.get(lastMessage)),
    stopReason: stopReasonOf(result, false),
  };
}

/** The viewer API's attempt, read back from the run directory's audit files. */
function viewerView(runDir: string): Omit<Seen, 'completion'> {
  const view = readAttemptView(runDir, 1);
  const timeline = view.timeline ?? [];
  return {
    toolCalls: timeline.flatMap((item) =>
      item.tool
        ? [
            {
              callId: item.tool.callId,
              name: item.tool.name,
              command: item.tool.command,
              status: item.tool.status,
              exitCode: item.tool.exitCode,
            },
          ]
        : [],
    ),
    finalMessage: shown(timeline.filter((item) => item.kind === 'message').at(-1)?.text),
  };
}

/** The ATIF trajectory's tool calls (with their results) and last agent message. */
function atifView(rasp: RaspEvent[], fcmp: FcmpEvent[], engine: string): Seen {
  const trajectory = buildAtifTrajectory(
    { rasp, fcmp },
    { runId: 'r', attempt: 1, engine: engine as never, engineVersion: null, prompt: 'p', handle: 'h' },
  );
  const results = new Map<string, { status: unknown; exit_code: unknown }>();
  for (const step of trajectory.steps)
    for (const result of step.observation?.results ?? [])
      if (result.source_call_id)
        results.set(result.source_call_id, result.extra as { status: unknown; exit_code: unknown });
  const toolCalls = trajectory.steps.flatMap((step) =>
    (step.tool_calls ?? []).map((call) => {
      const result = results.get(call.tool_call_id);
      return {
        callId: call.tool_call_id,
        name: call.function_name,
        command: (call.extra?.command as string | undefined) ?? null,
        status: (result?.status as string | undefined) ?? null,
        exitCode: (result?.exit_code as number | null | undefined) ?? null,
      };
    }),
  );
  const agentMessages = trajectory.steps.filter((s) => s.source === 'agent' && typeof s.message === 'string');
  const last = [...agentMessages].reverse().find((s) => shown(s.message as string) !== null);
  const completion = (trajectory.final_metrics?.extra as { completion?: { state?: string } } | undefined)?.completion;
  return {
    toolCalls,
    finalMessage: shown((last?.message as string | undefined) ?? null),
    completion: completion?.state ? stateOf(completion.state) : 'unknown',
  };
}

/** ACP's status of an FCMP status (its table is the ACP protocol's: no declined, abandoned or running there). */
const ACP_STATUS: Readonly<Record<string, string>> = {
  completed: 'completed',
  failed: 'failed',
  declined: 'failed',
  abandoned: 'failed',
  in_progress: 'in_progress',
  running: 'in_progress',
};

const CASES = goldenStreams();

/** The tool calls the cases compared, to show the agreement was tested on something. */
const compared: SeenCall[] = [];

describe('every view of a golden stream agrees with FCMP', () => {
  it('covers every registered engine that has golden streams', () => {
    expect(new Set(CASES.map(([engine]) => engine)).size).toBeGreaterThanOrEqual(5);
    // Recordings with tool calls are among them, or the agreement on tool calls would prove nothing.
    expect(CASES.length).toBeGreaterThan(40);
  });

  it.each(CASES)('%s %s', async (engine, name) => {
    const { adapter, runDir, events, result, fcmp, rasp } = await liveAttempt(engine, name);
    const truth = fcmpView(fcmp);
    compared.push(...truth.toolCalls);
    // Every tool call FCMP started it also ended (a result, or abandoned): none is left running in a sealed attempt.
    for (const call of truth.toolCalls) expect(call.status, `${call.callId} status`).not.toBe('running');
    expect(stateOf(result.completion.state)).toBe(truth.completion);

    // The Vitest result.
    expect(
      result.toolCalls.map(({ callId, name: n, command, status, exitCode }) => ({
        callId,
        name: n,
        command,
        status,
        exitCode,
      })),
      'Vitest AttemptResult.toolCalls',
    ).toEqual(truth.toolCalls);
    expect(shown(result.finalMessage), 'Vitest finalMessage').toBe(truth.finalMessage);

    // The provider events.
    const provider = providerView(events, result, (await loadEngine(adapter.id)).initMessage);
    expect(provider.toolCalls, 'provider tool calls').toEqual(truth.toolCalls);
    expect(provider.finalMessage, 'provider final message').toBe(truth.finalMessage);
    expect(provider.success, 'provider complete.success').toBe(
      truth.completion === 'completed' || truth.completion === 'awaiting_input',
    );

    // The ACP session updates (its status table is ACP's).
    const acp = acpView(events, result);
    expect(acp.toolCalls, 'ACP tool calls').toEqual(
      truth.toolCalls.map((call) => ({
        callId: call.callId,
        title: call.command !== null && call.command.length > 0 ? call.command : call.name,
        status: ACP_STATUS[call.status ?? ''] ?? 'failed',
        exitCode: call.exitCode,
      })),
    );
    expect(acp.finalMessage, 'ACP final message').toBe(truth.finalMessage);
    expect(acp.stopReason, 'ACP stop reason').toBe(
      truth.completion === 'completed' || truth.completion === 'awaiting_input' ? 'end_turn' : null,
    );

    // The viewer API, from the audit files.
    const viewer = viewerView(runDir);
    expect(viewer.toolCalls, 'viewer tool calls').toEqual(truth.toolCalls);
    expect(viewer.finalMessage, 'viewer final message').toBe(truth.finalMessage);

    // ATIF (a call's function_name is its kind where the engine gave no name).
    const atif = atifView(rasp, fcmp, engine);
    expect(atif.toolCalls, 'ATIF tool calls').toEqual(
      truth.toolCalls.map((call) => ({
        ...call,
        name: call.name || (toolCallsOf(fcmp).find((c) => c.callId === call.callId)?.kind ?? ''),
      })),
    );
    expect(atif.finalMessage, 'ATIF final message').toBe(truth.finalMessage);
    expect(atif.completion, 'ATIF completion').toBe(truth.completion === 'no_session' ? 'unknown' : truth.completion);
  });

  it('compared tool calls of every kind of outcome (run after the cases, in file order)', () => {
    expect(compared.length).toBeGreaterThan(20);
    const statuses = new Set(compared.map((call) => call.status));
    for (const status of ['completed', 'failed']) expect(statuses).toContain(status);
    expect(compared.some((call) => call.exitCode !== null && call.exitCode !== 0)).toBe(true);
    expect(compared.some((call) => call.command !== null)).toBe(true);
  });
});
