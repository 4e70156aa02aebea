/**
 * The typed result of one attempt, derived from its RASP and FCMP events: what a test asserts on and what
 * the CLI summarizes.
 */
import type { AgentHarnessError } from '../errors/index.js';
import type {
  AttemptMeta,
  Completion,
  ConformanceReport,
  EngineId,
  FcmpEvent,
  FsDiff,
  RaspEvent,
  Usage,
} from '../protocol/index.js';
import type { AttemptAuditPaths } from './audit-files.js';
import { toolCallsOf } from '../translate/fcmp-tool-calls.js';
import type { NormalizedToolCall } from '../translate/tool-calls.js';
import type { EventSpool } from './event-spool.js';

/**
 * A tool call the engine made, with its result when seen: read from FCMP (`translate/fcmp-tool-calls.ts`), where it
 * was normalized across engines once; `input` and `output` are the RASP events' own, whole.
 */
export type ToolCallRecord = NormalizedToolCall;

/** The outcome of one attempt. */
export interface AttemptResult {
  runId: string;
  handle: string;
  runDir: string;
  engine: EngineId;
  attempt: number;
  launch: 'start' | 'resume';
  sessionId: string | null;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  completion: Completion;
  rasp: RaspEvent[];
  fcmp: FcmpEvent[];
  /**
   * False when the attempt's events passed the memory budget (a long attempt): `rasp`, `fcmp`, `toolCalls` and
   * `assistantMessages` are then read from the audit files when first used, not held while the attempt ran.
   */
  eventsInMemory: boolean;
  assistantMessages: string[];
  finalMessage: string | null;
  toolCalls: ToolCallRecord[];
  fsDiff: FsDiff | null;
  usage: Usage | null;
  durationMs: number;
  /** Version of the engine CLI (from its npm package), null when unknown. */
  engineVersion: string | null;
  /**
   * Whether `engineVersion` is one the engine's adapter was checked against: false marks a run made with an unchecked
   * version; null when either is unknown (absent in results made without a meta).
   */
  engineVersionChecked?: boolean | null;
  /** Names of the skills injected into the run dir. */
  skillsInjected: string[];
  /** Injected skills the engine offered the model in its first real request; null when unknown (live mode). */
  skillsOffered: string[] | null;
  audit: AttemptAuditPaths;
  /** The attempt's conformance report (as written to `conformance-report.N.json`): event counts, diagnostics, verdict. */
  conformance: ConformanceReport;
  /** Set when the harness itself failed (before or around the engine); the audit files exist anyway. */
  error: AgentHarnessError | null;
  /** The cassette the attempt recorded or replayed and how its requests matched (cassette modes only). */
  cassette?: NonNullable<AttemptMeta['model']['cassette']>;
}

/** What an attempt's result needs of its RASP events, taken as they go by (the events themselves are spooled). */
export interface RaspFacts {
  push(event: RaspEvent): void;
  /** The last session id seen, else the one the run had. */
  readonly sessionId: string | null;
  /** True once the engine reported a session. */
  readonly sawSession: boolean;
  /** The last usage the engine reported, or null. */
  readonly usage: Usage | null;
  /** The skills of the last `engine.skills.offered` event found in a model request, or null. */
  readonly offered: string[] | null;
}

/** Creates {@link RaspFacts}; `session` is the run's session before the attempt (null for a new one). */
export function createRaspFacts(session: string | null): RaspFacts {
  let sawSession = false;
  let usage: Usage | null = null;
  let offered: string[] | null = null;
  return {
    push({ data }) {
      if (data.type === 'engine.session') {
        session = data.session_id;
        sawSession = true;
      } else if (data.type === 'engine.usage') usage = data.usage;
      else if (data.type === 'engine.skills.offered' && data.source === 'model_request') offered = data.skills;
    },
    get sessionId() {
      return session;
    },
    get sawSession() {
      return sawSession;
    },
    get usage() {
      return usage;
    },
    get offered() {
      return offered;
    },
  };
}

/** Where an attempt's events are: {@link EventSpool}s, in memory or past their budget in the audit files. */
export interface AttemptEvents {
  rasp: EventSpool<RaspEvent>;
  fcmp: EventSpool<FcmpEvent>;
}

/**
 * The result of an attempt. While its events are in memory, `rasp`, `fcmp`, `toolCalls` and `assistantMessages` are
 * plain arrays. An attempt whose events passed the memory budget (`AttemptRequest.eventMemoryBytes`) did not keep
 * them: those four are read from its audit files when first asked for (checked to be what the attempt wrote;
 * AUDIT_TAMPERED if not), then kept. `finalMessage` is always at hand. `eventsInMemory` says which; either way the
 * values are the same.
 */
export function attemptResult(
  fields: Omit<AttemptResult, 'rasp' | 'fcmp' | 'toolCalls' | 'assistantMessages' | 'eventsInMemory'>,
  events: AttemptEvents,
): AttemptResult {
  const inMemory = events.rasp.inMemory && events.fcmp.inMemory;
  // Both read the events as they go by: past the budget, neither holds the attempt's RASP or FCMP to collect its part.
  // The FCMP is sealed: a call with no result has its `abandoned` result there.
  const toolCalls = (): ToolCallRecord[] => toolCallsOf(events.fcmp.events(), events.rasp.events());
  const assistantMessages = (): string[] => {
    const texts: string[] = [];
    for (const event of events.fcmp.events()) if (event.type === 'assistant.message.final') texts.push(event.data.text);
    return texts;
  };
  if (inMemory)
    return {
      ...fields,
      rasp: events.rasp.all(),
      fcmp: events.fcmp.all(),
      toolCalls: toolCalls(),
      assistantMessages: assistantMessages(),
      eventsInMemory: true,
    };
  const result = { ...fields, eventsInMemory: false } as AttemptResult;
  const lazy = <K extends 'rasp' | 'fcmp' | 'toolCalls' | 'assistantMessages'>(
    key: K,
    read: () => AttemptResult[K],
  ): void => {
    let value: AttemptResult[K] | undefined;
    Object.defineProperty(result, key, {
      enumerable: true,
      configurable: true,
      get: () => (value ??= read()),
      set: (next: AttemptResult[K]) => {
        value = next;
      },
    });
  };
  lazy('rasp', () => events.rasp.all());
  lazy('fcmp', () => events.fcmp.all());
  lazy('toolCalls', toolCalls);
  lazy('assistantMessages', assistantMessages);
  return result;
}
