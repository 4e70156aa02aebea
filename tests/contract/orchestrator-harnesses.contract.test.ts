/**
 * The packaged harnesses of seed 004 (`agent-harness/orchestrator`): intent, response, memory and utility, memory
 * and utility stubs by default with LLM-backed versions opt-in, utility reachable from the Orchestrator,
 * `ResponseOutput.toolCalls` kept, `ctx.config` typed with the per-phase model names, and no harness importing
 * another. The scripted caller is the only fake (the model).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  bindModel,
  buildOrchestratorConfig,
  createScriptedCaller,
  defaultIntent,
  emptyMemory,
  harnessContextConfig,
  IntentHarness,
  LlmMemoryHarness,
  LlmUtilityHarness,
  MemoryHarness,
  Orchestrator,
  RecordKeeper,
  ResponseHarness,
  UtilityHarness,
  type Harness,
  type HarnessContext,
  type HarnessRunResult,
  type Intent,
  type LLMCaller,
  type LLMResponse,
  type MemoryOutput,
  type ResponseOutput,
} from 'agent-harness/orchestrator';

const config = buildOrchestratorConfig({
  models: { intent: 'm-intent', memory: 'm-memory', respond: 'm-respond', utility: 'm-utility' },
});

/** The seed's intent harness, as the seed writes it: an unbound caller and `ctx.config.intentModel`. */
class SeedIntentHarness implements Harness<{ message: string }, { intent: string }> {
  constructor(
    private llm: LLMCaller,
    private maxIters = 4,
  ) {}
  async run(input: { message: string }, ctx: HarnessContext): Promise<HarnessRunResult<{ intent: string }>> {
    let intent = 'unknown';
    for (let i = 0; i < this.maxIters; i++) {
      const res = await this.llm.call({
        model: ctx.config.intentModel,
        messages: [{ role: 'user', content: input.message }],
        temperature: 0,
      });
      intent = res.text.trim() || intent;
      if (!res.text.trim()) break;
    }
    return { output: { intent }, done: true };
  }
}

function build(
  answer: (model: string) => string,
  harnesses: {
    utility?: Harness<{ task: string }, { task: string; text: string | null }>;
    memory?: 'stub' | 'llm';
  } = {},
) {
  const caller = createScriptedCaller({ answers: (call) => answer(call.model) });
  const recordKeeper = new RecordKeeper();
  const orchestrator = new Orchestrator<Intent, MemoryOutput>(
    recordKeeper,
    {
      intent: new IntentHarness(bindModel(caller, config.models.intent)),
      memory:
        harnesses.memory === 'llm'
          ? new LlmMemoryHarness(bindModel(caller, config.models.memory))
          : new MemoryHarness(),
      respond: new ResponseHarness(bindModel(caller, config.models.respond)),
      ...(harnesses.utility ? { utility: harnesses.utility } : {}),
      fallback: { intent: defaultIntent(), memory: emptyMemory() },
    },
    config,
  );
  return { caller, recordKeeper, orchestrator };
}

const answers = (model: string): string =>
  model === 'm-intent'
    ? '{"intent":"greet","done":true}'
    : model === 'm-utility'
      ? ' Greetings '
      : model === 'm-memory'
        ? 'a note'
        : 'Hello!';

describe('packaged harnesses', () => {
  it('memory and utility are stubs by default: no model call, empty outputs, utility reachable from the Orchestrator', async () => {
    const { caller, orchestrator, recordKeeper } = build(answers);
    const outcome = await orchestrator.run('hi there');
    expect(outcome.error).toBeUndefined();
    expect(outcome.reply).toBe('Hello!');
    expect(outcome.phases.memory?.output).toEqual({ memories: [], note: '' });
    expect(caller.calls.map((c) => c.model)).toEqual(['m-intent', 'm-respond']);
    const utility = await orchestrator.runUtility({ task: 'title' });
    expect(utility.output).toEqual({ task: 'title', text: null });
    expect(utility.trace.phase).toBe('utility');
    expect(caller.calls).toHaveLength(2);
    expect(recordKeeper.statistics().phases.utility).toMatchObject({ runs: 1, calls: 0, errors: 0 });
  });

  it('the LLM-backed memory and utility are opt-in; utility titles the conversation through the Orchestrator', async () => {
    const { caller, orchestrator, recordKeeper } = build(answers, {
      memory: 'llm',
      utility: new LlmUtilityHarness(
        bindModel(createScriptedCaller({ answers: () => ' Greetings ' }), config.models.utility),
      ),
    });
    await orchestrator.run('my cat is Miso');
    const second = await orchestrator.run('what is my cat called?');
    expect(second.phases.memory?.output.memories).toEqual(['user: my cat is Miso', 'assistant: Hello!']);
    expect(caller.calls.filter((c) => c.model === 'm-memory')).toHaveLength(2);
    const title = await orchestrator.runUtility({ task: 'title' });
    expect(title.output).toEqual({ task: 'title', text: 'Greetings' });
    expect(recordKeeper.statistics().phases.utility).toMatchObject({ runs: 1, calls: 1 });
    const unknown = await orchestrator.runUtility({ task: 'translate' });
    expect(unknown.error?.code).toBe('CONFIG_INVALID');
    expect(unknown.output).toEqual({ task: 'translate', text: null });
  });

  it('ResponseOutput keeps the tool calls the model asked for', async () => {
    const toolCalling: LLMCaller = {
      async call(input): Promise<LLMResponse> {
        return {
          text: 'Let me look.',
          toolCalls: [{ id: 'c1', name: 'search', arguments: '{"q":"miso"}' }],
          model: input.model,
          usage: null,
          latencyMs: 0,
          attempts: 1,
        };
      },
    };
    const keeper = new RecordKeeper();
    const result = await new ResponseHarness(bindModel(toolCalling, 'm')).run(
      { message: 'find', intent: defaultIntent(), memories: emptyMemory() },
      { conversation: keeper.ingest('find'), config: harnessContextConfig(config), now: () => new Date() },
    );
    expectTypeOf(result.output).toEqualTypeOf<ResponseOutput>();
    expect(result.output).toEqual({
      text: 'Let me look.',
      toolCalls: [{ id: 'c1', name: 'search', arguments: '{"q":"miso"}' }],
    });
  });

  it('a harness written as the seed writes it compiles and reads ctx.config.intentModel', async () => {
    const caller = createScriptedCaller({ answers: ['greeting', ''] });
    const keeper = new RecordKeeper();
    const ctx: HarnessContext = {
      conversation: keeper.ingest('hello'),
      config: harnessContextConfig(config),
      now: () => new Date(),
    };
    expectTypeOf(ctx.config.intentModel).toEqualTypeOf<string>();
    expectTypeOf(ctx.config.responseModel).toEqualTypeOf<string>();
    const result = await new SeedIntentHarness(caller).run({ message: 'hello' }, ctx);
    expect(result.output.intent).toBe('greeting');
    expect(caller.calls.map((c) => c.model)).toEqual(['m-intent', 'm-intent']);
    // A bound caller's model is the default; a call naming ctx.config's model uses it.
    const bound = bindModel(caller, 'bound-model');
    await bound.call({ messages: [], model: ctx.config.memoryModel }).catch(() => undefined);
    expect(caller.calls.at(-1)?.model).toBe('m-memory');
    expect(new UtilityHarness()).toBeInstanceOf(UtilityHarness);
  });

  it('no harness imports another harness (shared types live in harness/lib)', () => {
    const root = path.resolve('src/orchestrator/harness');
    const dirs = fs
      .readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect(dirs.sort()).toEqual(['intent', 'lib', 'memory', 'respond', 'utility']);
    let checked = 0;
    for (const dir of dirs.filter((d) => d !== 'lib')) {
      for (const file of fs
        .readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))) {
        const full = path.join(root, dir, file);
        for (const [, specifier] of fs.readFileSync(full, 'utf8').matchAll(/from\s+'([^']+)'/g)) {
          const target = path.resolve(path.dirname(full), specifier!);
          const other = path.relative(root, target).split(path.sep)[0];
          if (!target.startsWith(root)) continue;
          expect([dir, 'lib'], `${dir}/${file} imports ${specifier}`).toContain(other);
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(5);
  });
});
