/**
 * Agents narrate their work as `narrative` events (seed 002's `@Monologue`): `narrate(this, text)` from inside a
 * method, or the `@Monologue()` method decorator, which narrates each call once it settles — in plain words by
 * default, or summarized by an injected summarizer (`summarizeWith(llmCaller)` for an LLM summary).
 * Outside a harness (an agent used on its own) narration is a no-op.
 */
import { AgentHarnessError } from '../errors/index.js';

/** One settled call of a `@Monologue` method, as handed to a summarizer. */
export interface MonologueCall {
  /** The agent's key in `agents` (wrapAgent: the class name). */
  agent: string;
  method: string;
  args: unknown[];
  /** What the method returned (absent when it threw). */
  result?: unknown;
  /** The error message when it threw. */
  error?: string;
}

/** Turns a call into narration text; may be async (an LLM call). */
export type MonologueSummarizer = (call: MonologueCall) => string | Promise<string>;

/** Options of `@Monologue()`. */
export interface MonologueOptions {
  /** Summarizer for this method; default: the harness's `monologue.summarize`, else {@link describeCall}. */
  summarize?: MonologueSummarizer;
}

/** Where a running agent's narration goes; attached by the harness to each live agent instance. */
export interface NarrationSink {
  /** The agent's key in `agents`. */
  readonly agent: string;
  /** The harness-wide summarizer, if one was injected. */
  readonly summarize?: MonologueSummarizer;
  /** Emits (and records) one narrative. */
  narrate(text: string, method?: string): void;
  /** Keeps an in-flight narration, so the run waits for it before it completes. */
  track(pending: Promise<void>): void;
}

const sinks = new WeakMap<object, NarrationSink>();

/** Connects an agent instance to a harness's events (done by defineHarness and wrapAgent). */
export function attachNarration(agent: object, sink: NarrationSink): void {
  sinks.set(agent, sink);
}

/** Emits a `narrative` event for `agent` (use `narrate(this, '…')` inside a method); a no-op outside a harness. */
export function narrate(agent: object, text: string): void {
  sinks.get(agent)?.narrate(text);
}

/** The default narration of a call: `execute("plan") returned "done"` or `execute("plan") failed: boom`. */
export function describeCall(call: MonologueCall): string {
  const preview = (value: unknown): string => {
    let text: string;
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
    return text.length > 120 ? `${text.slice(0, 117)}...` : text;
  };
  const head = `${call.method}(${call.args.map(preview).join(', ')})`;
  return call.error !== undefined ? `${head} failed: ${call.error}` : `${head} returned ${preview(call.result)}`;
}

/** What `summarizeWith` needs of an LLM caller; a `BoundLLMCaller` from `agent-harness/orchestrator` fits. */
export interface NarrationCaller {
  call(input: {
    messages: Array<{ role: 'system' | 'user'; content: string }>;
    temperature?: number;
  }): Promise<{ text: string }>;
}

/** A summarizer that asks `caller` for a one-sentence first-person summary of each call. */
export function summarizeWith(
  caller: NarrationCaller,
  instruction = 'Summarize, in one first-person sentence, what this agent just did.',
): MonologueSummarizer {
  return async (call) => {
    const response = await caller.call({
      messages: [
        { role: 'system', content: instruction },
        { role: 'user', content: `Agent ${call.agent}: ${describeCall(call)}` },
      ],
      temperature: 0,
    });
    return response.text.trim() || describeCall(call);
  };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** Narrates `call` through `sink`; returns a promise only when the summarizer is async. */
function narrateCall(
  sink: NarrationSink,
  summarize: MonologueSummarizer,
  call: MonologueCall,
): Promise<void> | undefined {
  let text: string | Promise<string>;
  try {
    text = summarize(call);
  } catch {
    text = describeCall(call);
  }
  if (!isThenable(text)) {
    sink.narrate(text, call.method);
    return undefined;
  }
  // A failing summarizer must not fail the agent: fall back to the plain description.
  return Promise.resolve(text).then(
    (t) => sink.narrate(t, call.method),
    () => sink.narrate(describeCall(call), call.method),
  );
}

/**
 * Method decorator: each call of the method is narrated once it settles (returned, resolved, threw or rejected).
 * An async method's narrative comes before its `agent:complete`; a sync method stays sync (an async summary is
 * emitted when ready, and the run waits for it).
 *
 * ```ts
 * class Planner {
 *   @Monologue()
 *   async execute(goal: string) { … }
 * }
 * ```
 */
export function Monologue(options: MonologueOptions = {}) {
  return function monologue<This extends object, Args extends unknown[], Return>(
    method: (this: This, ...args: Args) => Return,
    context: ClassMethodDecoratorContext<This, (this: This, ...args: Args) => Return>,
  ): (this: This, ...args: Args) => Return {
    const methodName = String(context.name);
    return function narrated(this: This, ...args: Args): Return {
      const sink = sinks.get(this);
      if (!sink) return method.apply(this, args);
      const summarize = options.summarize ?? sink.summarize ?? describeCall;
      const base = { agent: sink.agent, method: methodName, args };
      let out: Return;
      try {
        out = method.apply(this, args);
      } catch (error) {
        const pending = narrateCall(sink, summarize, {
          ...base,
          error: error instanceof Error ? error.message : String(error),
        });
        if (pending) sink.track(pending);
        throw error;
      }
      if (isThenable(out)) {
        return Promise.resolve(out).then(
          async (result) => {
            await narrateCall(sink, summarize, { ...base, result });
            return result;
          },
          async (error: unknown) => {
            await narrateCall(sink, summarize, {
              ...base,
              error: error instanceof Error ? error.message : String(error),
            });
            throw error;
          },
        ) as Return;
      }
      const pending = narrateCall(sink, summarize, { ...base, result: out });
      if (pending) sink.track(pending);
      return out;
    };
  };
}

/**
 * `@Monologue` without decorator syntax (for toolchains that do not compile decorators, such as Vite's default
 * transform): wraps the named prototype methods of `AgentClass` in place and returns the class.
 *
 * ```ts
 * class Planner { async execute(goal: string) { … } }
 * narrateMethods(Planner, ['execute'], { summarize: summarizeWith(llm) });
 * ```
 */
export function narrateMethods<C extends abstract new (...args: never[]) => object>(
  AgentClass: C,
  methods: ReadonlyArray<keyof InstanceType<C> & string>,
  options: MonologueOptions = {},
): C {
  const prototype = AgentClass.prototype as Record<string, unknown>;
  for (const name of methods) {
    const method = prototype[name];
    if (typeof method !== 'function')
      throw new AgentHarnessError(
        'CONFIG_INVALID',
        `narrateMethods: class ${AgentClass.name || '(anonymous)'} has no method ${JSON.stringify(name)} on its prototype; name methods declared in the class body.`,
        { details: { method: name } },
      );
    const context = { kind: 'method', name, static: false, private: false } as unknown as ClassMethodDecoratorContext<
      object,
      (this: object, ...args: unknown[]) => unknown
    >;
    prototype[name] = Monologue(options)(method as (this: object, ...args: unknown[]) => unknown, context);
  }
  return AgentClass;
}
