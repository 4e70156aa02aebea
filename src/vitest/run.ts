/**
 * HarnessRun: what `agent.start()` returns — the latest attempt of a managed run plus every attempt so far,
 * and `resume(message)` for the next user message in the same run and session.
 */
import type { AttemptResult, ToolCallRecord } from '../core/attempt-result.js';
import type { AttemptAuditPaths } from '../core/audit-files.js';
import type { Completion, EngineId, FcmpEvent, FsDiff, RaspEvent, Usage } from '../protocol/index.js';
import type { AgentHarnessAttemptRecord } from './types.js';
import type { ModelTurn } from '../model/index.js';
import { stripDoneMarker } from '../translate/completion.js';

/** Runs the next attempt of a run (provided by the `agent` fixture). */
export type ResumeFn = (run: HarnessRun, message: string, options: HarnessResumeOptions) => Promise<AttemptResult>;

/** Options of {@link HarnessRun.resume}. */
export interface HarnessResumeOptions {
  /** Attempt timeout in ms. */
  timeoutMs?: number;
  /**
   * Model turns for this attempt, added after the turns the session already used (turns are numbered across
   * the session, so replacing the script before a resume would not line up).
   */
  turns?: readonly ModelTurn[];
}

/** One managed run started by a test. Fields reflect the latest attempt. */
export class HarnessRun {
  /** Every attempt of the run, oldest first. */
  readonly attempts: AttemptResult[] = [];
  private readonly resumeFn: ResumeFn;

  /** Wraps the first attempt. */
  constructor(first: AttemptResult, resumeFn: ResumeFn) {
    this.attempts.push(first);
    this.resumeFn = resumeFn;
  }

  /** The latest attempt. */
  get last(): AttemptResult {
    return this.attempts.at(-1)!;
  }

  /** Run id. */
  get runId(): string {
    return this.last.runId;
  }
  /** Short handle of the run. */
  get handle(): string {
    return this.last.handle;
  }
  /** Run directory (the engine's working directory). */
  get runDir(): string {
    return this.last.runDir;
  }
  /** Engine id. */
  get engine(): EngineId {
    return this.last.engine;
  }
  /** Engine session id, when seen. */
  get sessionId(): string | null {
    return this.last.sessionId;
  }
  /** Exit code of the latest attempt. */
  get exitCode(): number | null {
    return this.last.exitCode;
  }
  /** Completion of the latest attempt. */
  get completion(): Completion {
    return this.last.completion;
  }
  /** RASP events of the latest attempt. */
  get rasp(): RaspEvent[] {
    return this.last.rasp;
  }
  /** FCMP events of the latest attempt. */
  get fcmp(): FcmpEvent[] {
    return this.last.fcmp;
  }
  /** Final assistant messages of the latest attempt. */
  get assistantMessages(): string[] {
    return this.last.assistantMessages;
  }
  /** Last final assistant message of the latest attempt. */
  get finalMessage(): string | null {
    return this.last.finalMessage;
  }
  /** The last final message without the completion contract's done marker line. */
  get finalText(): string | null {
    return stripDoneMarker(this.last.finalMessage);
  }
  /** Skills injected into the run dir for the latest attempt. */
  get skillsInjected(): string[] {
    return this.last.skillsInjected;
  }
  /** Injected skills the engine offered the model (null when unknown). */
  get skillsOffered(): string[] | null {
    return this.last.skillsOffered;
  }
  /** Tool calls of the latest attempt. */
  get toolCalls(): ToolCallRecord[] {
    return this.last.toolCalls;
  }
  /** File changes of the latest attempt in the run directory. */
  get fsDiff(): FsDiff | null {
    return this.last.fsDiff;
  }
  /** Token usage of the latest attempt. */
  get usage(): Usage | null {
    return this.last.usage;
  }
  /** Audit file paths of the latest attempt. */
  get audit(): AttemptAuditPaths {
    return this.last.audit;
  }
  /** Audit directory (`<runDir>/.audit`). */
  get auditDir(): string {
    return this.last.audit.dir;
  }
  /** Harness error of the latest attempt, if any. */
  get error(): AttemptResult['error'] {
    return this.last.error;
  }

  /** Sends the next user message in the same session (a new attempt in the same run); returns this run. */
  async resume(message: string, options: HarnessResumeOptions = {}): Promise<this> {
    this.attempts.push(await this.resumeFn(this, message, options));
    return this;
  }
}

/** FCMP event counts by type. */
export function countFcmp(fcmp: readonly FcmpEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of fcmp) counts[event.type] = (counts[event.type] ?? 0) + 1;
  return counts;
}

/** The JSON record of one attempt for `task.meta.agentHarness.attempts`. */
export function attemptRecord(result: AttemptResult, retry: number): AgentHarnessAttemptRecord {
  return {
    runId: result.runId,
    attempt: result.attempt,
    launch: result.launch,
    exitCode: result.exitCode,
    completion: { state: result.completion.state, reason: result.completion.reason },
    fcmpCounts: { ...result.conformance.fcmp_counts },
    auditDir: result.audit.dir,
    durationMs: result.durationMs,
    usage: result.usage ? (JSON.parse(JSON.stringify(result.usage)) as unknown) : null,
    toolCalls: result.conformance.tool_call_count,
    retry,
    engineVersion: result.engineVersion ?? null,
    engineVersionChecked: result.engineVersionChecked ?? null,
    ...(result.completion.code ? { failureCode: result.completion.code } : {}),
    ...(result.cassette
      ? {
          cassette: {
            mode: result.cassette.mode,
            exact: result.cassette.exact,
            divergent: result.cassette.divergent,
            missed: result.cassette.missed,
            unused: result.cassette.unused,
          },
        }
      : {}),
  };
}
