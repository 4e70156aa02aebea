/**
 * The Orchestrator: Ingest → Gather (intent and memory in parallel) → Respond → Recover. It coordinates
 * harnesses it is given (each already bound to its model by a factory); harnesses never see each other.
 * A turn never throws: a failed phase is its `HarnessRunResult.error`, and the turn's `error` is the first one.
 * The utility harness runs outside the turn, on demand (`runUtility`).
 */
import { toAgentHarnessError, type AgentHarnessError } from '../errors/index.js';
import { harnessContextConfig, type OrchestratorConfig } from './config.js';
import type { ResponseOutput, UtilityInput, UtilityOutput } from './harness/lib/types.js';
import { UtilityHarness } from './harness/utility/utility-harness.js';
import type { RecordKeeper } from './record-keeper.js';
import { runPhase } from './run-phase.js';
import type { ConversationThread, Harness, HarnessContext, HarnessRunResult, PhaseResult } from './types.js';

/** The harnesses of one orchestrator. */
export interface OrchestratorHarnesses<TIntent, TMemory> {
  intent: Harness<{ message: string }, TIntent>;
  memory: Harness<{ query: string }, TMemory>;
  respond: Harness<{ message: string; intent: TIntent; memories: TMemory }, ResponseOutput>;
  /** Runs on demand through `runUtility` (default: the stub `UtilityHarness`). */
  utility?: Harness<UtilityInput, UtilityOutput>;
  /** Outputs used when a harness fails, so later phases still run on something defined. */
  fallback: { intent: TIntent; memory: TMemory };
}

/** What Recover did: whether the assistant turn was appended, and why not. */
export interface RecoverOutput {
  appended: boolean;
  reason?: string;
}

/** The outcome of one conversation turn. */
export interface TurnOutcome<TIntent, TMemory> {
  /** The assistant's reply; null when the turn failed before a reply. */
  reply: string | null;
  phases: {
    intent?: PhaseResult<TIntent>;
    memory?: PhaseResult<TMemory>;
    respond?: PhaseResult<ResponseOutput>;
    recover?: PhaseResult<RecoverOutput>;
  };
  /** The first error of the turn (ingest or a phase), if any. */
  error?: AgentHarnessError;
}

/** Runs conversation turns through the phases. */
export class Orchestrator<TIntent, TMemory> {
  private readonly utility: Harness<UtilityInput, UtilityOutput>;

  constructor(
    private readonly recordKeeper: RecordKeeper,
    private readonly harnesses: OrchestratorHarnesses<TIntent, TMemory>,
    private readonly config: OrchestratorConfig,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.utility = harnesses.utility ?? new UtilityHarness();
  }

  /** Runs one turn for the incoming message `raw`; never throws. */
  async run(raw: unknown, options: { signal?: AbortSignal } = {}): Promise<TurnOutcome<TIntent, TMemory>> {
    let conversation: ConversationThread;
    try {
      conversation = this.recordKeeper.ingest(raw);
    } catch (error) {
      return { reply: null, phases: {}, error: toAgentHarnessError(error) };
    }
    const ctx = this.context(conversation, options.signal);
    const message = conversation.latest;
    const { fallback } = this.harnesses;
    const [intent, memory] = await Promise.all([
      runPhase('intent', this.harnesses.intent, { message }, ctx, fallback.intent),
      runPhase('memory', this.harnesses.memory, { query: message }, ctx, fallback.memory),
    ]);
    const respond = await runPhase(
      'respond',
      this.harnesses.respond,
      { message, intent: intent.output, memories: memory.output },
      ctx,
      { text: '', toolCalls: [] },
    );
    const recover = await runPhase('recover', { run: async () => this.recover(respond) }, undefined, ctx, {
      appended: false,
    });
    for (const result of [intent, memory, respond, recover])
      this.recordKeeper.recordPhase(result.trace, result.error !== undefined);
    const error = intent.error ?? memory.error ?? respond.error ?? recover.error;
    const reply = recover.output.appended ? respond.output.text : null;
    return { reply, phases: { intent, memory, respond, recover }, ...(error ? { error } : {}) };
  }

  /**
   * Runs the utility harness on the conversation so far (e.g. `{ task: 'title' }`), as a `utility` phase counted
   * in the statistics; never throws (a failure is the result's `error`).
   */
  async runUtility(input: UtilityInput, options: { signal?: AbortSignal } = {}): Promise<PhaseResult<UtilityOutput>> {
    const ctx = this.context(this.recordKeeper.snapshot(), options.signal);
    const result = await runPhase('utility', this.utility, input, ctx, { task: input.task, text: null });
    this.recordKeeper.recordPhase(result.trace, result.error !== undefined);
    return result;
  }

  /** The context of one turn (or utility run): the turn timeout and the caller's signal, the per-phase model names. */
  private context(conversation: ConversationThread, signal: AbortSignal | undefined): HarnessContext {
    const turnSignal = AbortSignal.any([AbortSignal.timeout(this.config.timeouts.turnMs), ...(signal ? [signal] : [])]);
    return { conversation, config: harnessContextConfig(this.config), now: this.now, signal: turnSignal };
  }

  /** Recover: appends the assistant turn when the respond phase produced one. */
  private recover(respond: HarnessRunResult<ResponseOutput>): HarnessRunResult<RecoverOutput> {
    if (respond.error || !respond.output.text.trim())
      return { output: { appended: false, reason: respond.error ? 'respond failed' : 'empty reply' }, done: true };
    this.recordKeeper.append({ role: 'assistant', text: respond.output.text });
    return { output: { appended: true }, done: true };
  }
}
