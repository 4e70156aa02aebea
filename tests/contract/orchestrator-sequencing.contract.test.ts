import { describe, expect, it } from 'vitest';
import { AgentHarnessError } from '../../src/errors/index.js';
import {
  bindModel,
  buildOrchestratorConfig,
  createScriptedCaller,
  defaultIntent,
  emptyMemory,
  harnessContextConfig,
  IntentHarness,
  LlmMemoryHarness,
  Orchestrator,
  RecordKeeper,
  ResponseHarness,
  type Intent,
  type LLMCallConfig,
  type MemoryOutput,
} from 'agent-harness/orchestrator';
import { within } from '../helpers/load-scaled.js';

const config = buildOrchestratorConfig({
  models: { intent: 'm-intent', memory: 'm-memory', respond: 'm-respond', utility: 'm-utility' },
});

/** A promise resolved from outside. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Fails (instead of hanging) when `promise` is not settled within a generous, load-scaled bound. */
function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
  return within(promise, 20_000, what);
}

function build(answer: (call: LLMCallConfig) => string | Error | Promise<string | Error>) {
  const caller = createScriptedCaller({ answers: (call) => answer(call) });
  const recordKeeper = new RecordKeeper();
  const orchestrator = new Orchestrator<Intent, MemoryOutput>(
    recordKeeper,
    {
      intent: new IntentHarness(bindModel(caller, config.models.intent), 3),
      memory: new LlmMemoryHarness(bindModel(caller, config.models.memory)),
      respond: new ResponseHarness(bindModel(caller, config.models.respond)),
      fallback: { intent: defaultIntent(), memory: emptyMemory() },
    },
    config,
  );
  return { caller, recordKeeper, orchestrator };
}

describe('orchestrator sequencing', () => {
  it('starts intent and memory before either finishes, responds after both, recover appends the assistant turn', async () => {
    const events: string[] = [];
    const intentStarted = deferred();
    const memoryStarted = deferred();
    const { recordKeeper, orchestrator, caller } = build(async (call) => {
      const phase = call.model.slice(2);
      events.push(`${phase}:start`);
      if (phase === 'intent') {
        intentStarted.resolve();
        await bounded(memoryStarted.promise, 'memory start while intent was in flight');
      } else if (phase === 'memory') {
        memoryStarted.resolve();
        await bounded(intentStarted.promise, 'intent start while memory was in flight');
      }
      events.push(`${phase}:end`);
      return phase === 'intent'
        ? '{"intent":"greet","done":true}'
        : phase === 'memory'
          ? 'nothing earlier'
          : 'Hi there';
    });
    const outcome = await orchestrator.run('hello');
    expect(outcome.error).toBeUndefined();
    expect(outcome.reply).toBe('Hi there');
    expect(events.slice(0, 2).sort()).toEqual(['intent:start', 'memory:start']);
    expect(events.indexOf('respond:start')).toBe(4);
    expect(caller.calls.map((c) => c.model).sort()).toEqual(['m-intent', 'm-memory', 'm-respond']);
    expect(recordKeeper.recent(2).map((t) => [t.role, t.text])).toEqual([
      ['user', 'hello'],
      ['assistant', 'Hi there'],
    ]);
    expect(outcome.phases.respond?.output.text).toBe('Hi there');
    expect(outcome.phases.intent?.output.intent).toBe('greet');
    for (const phase of ['intent', 'memory', 'respond', 'recover'] as const)
      expect(outcome.phases[phase]?.trace.phase).toBe(phase);
  });

  it("passes what memory recalled from turn one into the second turn's response prompt", async () => {
    const { orchestrator, caller } = build((call) =>
      call.model === 'm-intent'
        ? '{"intent":"x","done":true}'
        : call.model === 'm-memory'
          ? 'note'
          : `reply ${caller.calls.length}`,
    );
    await orchestrator.run('my cat is called Miso');
    await orchestrator.run('what is my cat called?');
    const respondCalls = caller.calls.filter((c) => c.model === 'm-respond');
    expect(respondCalls[1]!.messages[0]!.content).toContain('user: my cat is called Miso');
    expect(respondCalls[0]!.messages[0]!.content).toContain('- (none)');
  });
});

describe('intent loop stop conditions', () => {
  async function runIntent(answers: string[], max = 3) {
    const caller = createScriptedCaller({ answers });
    const harness = new IntentHarness(bindModel(caller, 'm'), max);
    const recordKeeper = new RecordKeeper();
    const result = await harness.run(
      { message: 'book a table' },
      {
        conversation: recordKeeper.ingest('book a table'),
        config: harnessContextConfig(config),
        now: () => new Date(),
      },
    );
    return { result, caller };
  }

  it('stops on a blank answer, keeping the last parsed intent', async () => {
    const { result, caller } = await runIntent(['{"intent":"booking"}', '   ', '{"intent":"never"}']);
    expect(caller.calls).toHaveLength(2);
    expect(result.output.intent).toBe('booking');
    expect(result.trace?.notes).toEqual({ iterations: 2, stopReason: 'blank' });
  });

  it('stops on done and replays earlier answers to the model', async () => {
    const { result, caller } = await runIntent(['not json', '{"intent":"booking","done":true}', '{"intent":"never"}']);
    expect(caller.calls).toHaveLength(2);
    expect(result.output).toEqual({ intent: 'booking', topics: [], done: true });
    expect(caller.calls[1]!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(result.trace?.notes?.stopReason).toBe('done');
  });

  it('stops at max iterations', async () => {
    const { result, caller } = await runIntent(
      ['{"intent":"a"}', '{"intent":"b"}', '{"intent":"c"}', '{"intent":"d"}'],
      3,
    );
    expect(caller.calls).toHaveLength(3);
    expect(result.output.intent).toBe('c');
    expect(result.trace?.notes?.stopReason).toBe('max_iterations');
  });
});

describe('error propagation', () => {
  it('a failing gather phase becomes HarnessRunResult.error; respond still runs on the fallback', async () => {
    const failure = new AgentHarnessError('LLM_HTTP_ERROR', 'boom', { details: { status: 503 } });
    const { orchestrator, recordKeeper } = build((call) =>
      call.model === 'm-intent' ? failure : call.model === 'm-memory' ? 'n' : 'still answered',
    );
    const outcome = await orchestrator.run('hello');
    expect(outcome.phases.intent?.error).toBe(failure);
    expect(outcome.phases.intent?.output).toEqual(defaultIntent());
    expect(outcome.error).toBe(failure);
    expect(outcome.reply).toBe('still answered');
    expect(recordKeeper.statistics().phases.intent).toMatchObject({ runs: 1, errors: 1 });
  });

  it('a failing respond phase appends no assistant turn and never throws; a plain Error becomes INTERNAL_ERROR', async () => {
    const { orchestrator, recordKeeper } = build((call) =>
      call.model === 'm-respond'
        ? new Error('socket hang up')
        : call.model === 'm-intent'
          ? '{"intent":"a","done":true}'
          : 'n',
    );
    const outcome = await orchestrator.run('hello');
    expect(outcome.reply).toBeNull();
    expect(outcome.error?.code).toBe('INTERNAL_ERROR');
    expect(outcome.phases.recover?.output).toEqual({ appended: false, reason: 'respond failed' });
    expect(recordKeeper.snapshot().turns.map((t) => t.role)).toEqual(['user']);
  });

  it('bad input is ORCHESTRATOR_INPUT_INVALID in the outcome, and history is unchanged', async () => {
    const { orchestrator, recordKeeper, caller } = build(() => 'x');
    const outcome = await orchestrator.run('  \r\n ');
    expect(outcome.error?.code).toBe('ORCHESTRATOR_INPUT_INVALID');
    expect((await orchestrator.run(42)).error?.code).toBe('ORCHESTRATOR_INPUT_INVALID');
    expect(recordKeeper.snapshot().turns).toHaveLength(0);
    expect(caller.calls).toHaveLength(0);
  });
});
