/**
 * The fluent harness's public types as seed 002 writes them, checked by `tsc --noEmit` (strict): the events are a
 * discriminated union typed by the `.on()` filter, agents need `execute`, and the misuse lines do not compile
 * (each `@ts-expect-error` fails the type check if its line ever compiles). The `it` bodies also run, so the
 * types describe what is emitted.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  defineHarness,
  wrapAgent,
  type AgentConstructor,
  type ErrorEvent,
  type ExecuteContext,
  type FluentRunResult,
  type HarnessConfig,
  type HarnessEvent,
  type HarnessEventHandler,
  type HarnessEventType,
  type HarnessFactory,
  type HarnessInstance,
  type NarrativeEvent,
  type ParallelEvent,
  type ParallelItemCompleteEvent,
  type ParallelOptions,
  type PhaseEvent,
  type ResolvedAgents,
  type RetryBackoffEvent,
  type RetryEvent,
  type RetryOptions,
  type StepEvent,
  type StepYield,
  type TaskEvent,
  type WrappedAgent,
} from 'agent-harness/fluent';

class Coder {
  async execute(task: string): Promise<{ code: string }> {
    return { code: `// ${task}` };
  }
  mul(n: number): number {
    return n * 2;
  }
}
class Reviewer {
  execute(code: string): boolean {
    return code.length > 0;
  }
}
class NoExecute {
  review(): boolean {
    return true;
  }
}

describe('seed 002 types', () => {
  it('.on(filter) hands the handler exactly the events the filter selects', async () => {
    const ids: string[] = [];
    const seen: string[] = [];
    const harness = defineHarness({
      name: 'typed',
      agents: { coder: Coder, reviewer: Reviewer },
      state: () => ({ reviewed: false }),
      run: async ({ agents, state, task, retry, parallel, phase }, input: string) =>
        phase('build', async () => {
          const { code } = await task('code', () => agents.coder.execute(input));
          state.reviewed = agents.reviewer.execute(code);
          await retry('flaky', async () => 1, { retries: 1 });
          await parallel('fan', [async () => 1, async () => 2], { concurrency: 1 });
          return code;
        }),
    });
    expectTypeOf(harness).toEqualTypeOf<HarnessFactory<{ reviewed: boolean }, string, string>>();
    const out = await harness
      .create('x')
      .on('task', (e) => {
        expectTypeOf(e).toEqualTypeOf<TaskEvent>();
        expectTypeOf(e.id).toEqualTypeOf<string>();
        expectTypeOf(e.status).toEqualTypeOf<'start' | 'complete' | 'failed'>();
        ids.push(e.id);
      })
      .on('phase', (e) => expectTypeOf(e).toEqualTypeOf<PhaseEvent>())
      .on('retry', (e) => expectTypeOf(e).toEqualTypeOf<RetryEvent>())
      .on('retry:backoff', (e) => {
        expectTypeOf(e).toEqualTypeOf<RetryBackoffEvent>();
        expectTypeOf(e.delay).toEqualTypeOf<number>();
        expectTypeOf(e.error).toEqualTypeOf<string>();
      })
      .on('parallel', (e) => expectTypeOf(e).toEqualTypeOf<ParallelEvent>())
      .on('parallel:item:complete', (e) => {
        expectTypeOf(e).toEqualTypeOf<ParallelItemCompleteEvent>();
        seen.push(`${e.index}/${e.completed}/${e.total}`);
      })
      .on('step', (e) => expectTypeOf(e).toEqualTypeOf<StepEvent>())
      .on('narrative', (e) => expectTypeOf(e).toEqualTypeOf<NarrativeEvent>())
      .on('error', (e) => expectTypeOf(e).toEqualTypeOf<ErrorEvent>())
      .on('*', (e) => {
        expectTypeOf(e).toEqualTypeOf<HarnessEvent>();
        expectTypeOf(e.name).toEqualTypeOf<string>();
        expectTypeOf(e.timestamp).toEqualTypeOf<Date>();
        // The union narrows on `type`.
        if (e.type === 'task:failed') expectTypeOf(e.error).toEqualTypeOf<string>();
        if (e.type === 'agent:complete') expectTypeOf(e.handle).toEqualTypeOf<string | undefined>();
      })
      .run();
    expectTypeOf(out).toEqualTypeOf<FluentRunResult<{ reviewed: boolean }, string>>();
    expect(ids).toEqual(['code', 'code']);
    expect(seen).toEqual(['0/1/2', '1/2/2']);
    expect(out.state.reviewed).toBe(true);
  });

  it('agents keep their method types: a synchronous method returns its value, not a promise', async () => {
    let product: unknown;
    await defineHarness({
      agents: { coder: Coder },
      run: async ({ agents }) => {
        expectTypeOf(agents.coder.mul).toEqualTypeOf<(n: number) => number>();
        expectTypeOf(agents).toEqualTypeOf<ResolvedAgents<{ coder: typeof Coder }>>();
        product = agents.coder.mul(2);
      },
    })
      .create()
      .run();
    expect(product).toBe(4);
  });

  it("the seed's type names compose as the seed writes them", () => {
    expectTypeOf<HarnessEventHandler<'phase'>>().toEqualTypeOf<(event: PhaseEvent) => void>();
    expectTypeOf<HarnessEventHandler<'task'>>().toEqualTypeOf<(event: TaskEvent) => void>();
    expectTypeOf<HarnessEventHandler<'*'>>().toEqualTypeOf<(event: HarnessEvent) => void>();
    expectTypeOf<
      'phase' | 'task' | 'step' | 'narrative' | 'error' | 'retry' | 'parallel' | '*'
    >().toExtend<HarnessEventType>();
    expectTypeOf<typeof Coder>().toExtend<AgentConstructor>();
    expectTypeOf<WrappedAgent<Coder>['run']>().toEqualTypeOf<(task: string) => Promise<{ code: string }>>();
    const config: HarnessConfig<{ coder: typeof Coder }, { n: number }, number, number> = {
      name: 'seed',
      mode: 'live',
      agents: { coder: Coder },
      state: (input) => ({ n: input }),
      run: async (context: ExecuteContext<{ coder: typeof Coder }, { n: number }>, input) => context.state.n + input,
    };
    const generator: HarnessConfig<{ coder: typeof Coder }, object, void, string> = {
      agents: { coder: Coder },
      async *execute({ agents }): AsyncGenerator<StepYield, string> {
        const out = await agents.coder.execute('plan');
        yield { step: 'plan', output: out };
        return out.code;
      },
    };
    const options: [RetryOptions, ParallelOptions] = [
      { retries: 3, minTimeout: 1000, maxTimeout: 5000 },
      { concurrency: 5 },
    ];
    const instance: HarnessInstance<{ n: number }, number> = defineHarness(config).create(1);
    expect([typeof generator.execute, options.length, typeof instance.run]).toEqual(['function', 2, 'function']);
  });

  it('misuse does not compile (and is CONFIG_INVALID at run time for JavaScript)', async () => {
    const instance = defineHarness({ agents: {}, run: async () => 1 }).create();
    // @ts-expect-error an unknown event type
    expect(() => instance.on('bogus', () => undefined)).toThrow(/not an event type/);
    // @ts-expect-error a task event has no `delay`
    instance.on('task', (e) => e.delay);
    // @ts-expect-error a family filter does not select other families' events
    instance.on('retry', (e: TaskEvent) => e.id);

    // @ts-expect-error an agent class needs an execute method
    const noExecute = defineHarness({ agents: { reviewer: NoExecute }, run: async () => 1 });
    await expect(noExecute.create().run()).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/reviewer.*no execute method/),
    });
    // @ts-expect-error wrapAgent needs an execute method too
    expect(() => wrapAgent(NoExecute)).not.toThrow();
    // @ts-expect-error a wrapped agent's run takes execute's parameters
    await wrapAgent(Coder).run(42);
  });
});
