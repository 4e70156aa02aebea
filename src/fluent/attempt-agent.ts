/**
 * Agent adapters for the fluent harness. `attemptAgent` runs each call as a real audited attempt (`runAttempt`);
 * `providerAgent` adapts anything with `query(config): AsyncIterable<event>` (seed 003 providers).
 * Both return plain JSON with the run `handle`, so recordings keep the link to the audited attempt.
 */
import { isCassetteMode, type ModelModeOption } from '../cassette/mode.js';
import { runAttempt } from '../core/run-attempt.js';
import type { AttemptRequest } from '../core/attempt-request.js';
import { parseModelScript, type ModelServer } from '../model/index.js';
import type { HarnessPaths } from '../runtime/paths.js';
import { stripDoneMarker } from '../translate/done-marker.js';

/** What one attempt-backed call returns (JSON-safe, so it can be recorded and replayed). */
export interface AttemptCallResult {
  handle: string;
  runId: string;
  engine: string;
  /** The attempt's last final message, without the done marker (the audit keeps it). */
  finalMessage: string | null;
  completion: string;
  exitCode: number | null;
  error: string | null;
}

/** Fixed parts of every attempt an attempt-backed agent runs. */
export interface AttemptAgentDefaults {
  paths: HarnessPaths;
  /**
   * The scripted model server all calls use. Each call runs on its own lane of it (`openLane`), so calls run in
   * parallel never answer from each other's scripts; a server without `openLane` gets the script set on it instead.
   */
  modelServer: Pick<ModelServer, 'url' | 'setScript'> & Partial<Pick<ModelServer, 'openLane'>>;
  hostEnv?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Extra request fields (translateMode, passthrough…). */
  request?: Partial<AttemptRequest>;
  /**
   * Model mode of every call (default `scripted`, the server above); `record`, `replay` and `auto` use a cassette per
   * call (docs/cassettes.md), each on its own model server.
   */
  model?: ModelModeOption;
  /** The cassette of the Nth call (1, 2, 3… per agent class), relative to the project root; needed by cassette modes. */
  cassette?: (call: number, prompt: string) => string;
  /** Recording (or a fork onto the live model): the origin requests go to instead of the vendor. */
  upstream?: string;
  /**
   * `replay`: fork each call's cassette after its first `at` model turns onto the script or the live model; `cassette`
   * names the file a live fork of the Nth call records into (docs/cassettes.md).
   */
  fork?: { at: number; to?: 'scripted' | 'live'; cassette?: (call: number, prompt: string) => string };
}

/**
 * A model script as `execute` takes it: a `ModelScript`, or the same as plain JSON, where defaults are still to be
 * filled (a `final` turn without `done` gets `done: true`, as in a script file).
 */
export type AttemptScript = { version: 1; turns?: unknown[]; [key: string]: unknown };

/** Agent class whose `execute(prompt, script?)` starts one real attempt of `engine` and returns its summary. */
export function attemptAgent(
  engine: string,
  defaultsOrFactory: AttemptAgentDefaults | (() => AttemptAgentDefaults),
): new () => { execute: (prompt: string, script?: AttemptScript) => Promise<AttemptCallResult> } {
  let calls = 0;
  return class AttemptAgent {
    /**
     * Runs one attempt on its own lane of the model server; a script given here is validated with the script file's
     * defaults (MODEL_SCRIPT_INVALID when it is not a script) and is the lane's script (without one, the lane starts
     * from the server's script in force).
     */
    async execute(prompt: string, script?: AttemptScript): Promise<AttemptCallResult> {
      // Resolved per call so a replayed harness (which never calls) needs no model server or paths.
      const defaults = typeof defaultsOrFactory === 'function' ? defaultsOrFactory() : defaultsOrFactory;
      const parsed =
        script === undefined ? undefined : parseModelScript(script, `attemptAgent(${JSON.stringify(engine)}) script`);
      calls += 1;
      const taped = isCassetteMode(defaults.model);
      const server = defaults.modelServer;
      // A taped call runs on its own server (the cassette's); a scripted one on its own lane of the shared server.
      const lane = taped ? null : (server.openLane?.(parsed) ?? null);
      if (!lane && parsed !== undefined) server.setScript(parsed);
      const result = await runAttempt({
        ...defaults.request,
        paths: defaults.paths,
        engine,
        launch: 'start',
        prompt,
        modelServer: lane ?? server,
        ...(defaults.model ? { modelMode: defaults.model } : {}),
        // A taped call's own server answers a lenient miss, or a fork onto the script, from the call's script.
        ...(taped && parsed !== undefined ? { script: parsed } : {}),
        ...(taped
          ? {
              cassette: {
                path: defaults.cassette?.(calls, prompt) ?? '',
                ...(defaults.upstream ? { upstream: defaults.upstream } : {}),
                ...(defaults.fork
                  ? {
                      forkAt: defaults.fork.at,
                      ...(defaults.fork.to ? { forkTo: defaults.fork.to } : {}),
                      ...(defaults.fork.cassette ? { forkCassette: defaults.fork.cassette(calls, prompt) } : {}),
                    }
                  : {}),
              },
            }
          : {}),
        ...(defaults.hostEnv ? { hostEnv: defaults.hostEnv } : {}),
        ...(defaults.timeoutMs ? { timeoutMs: defaults.timeoutMs } : {}),
      }).finally(() => lane?.close());
      return {
        handle: result.handle,
        runId: result.runId,
        engine: result.engine,
        // The next agent is fed this answer (docs/fluent.md): without the done marker, which is the harness's.
        finalMessage: stripDoneMarker(result.finalMessage),
        completion: result.completion.state,
        exitCode: result.exitCode,
        error: result.error?.message ?? null,
      };
    }
  };
}

/** The part of a seed-003 provider the adapter needs. */
export interface QueryableProvider<TConfig, TEvent> {
  query: (config: TConfig) => AsyncIterable<TEvent>;
}

/** What a provider-backed call returns: its events and the run handle found among them. */
export interface ProviderCallResult<TEvent> {
  events: TEvent[];
  handle?: string;
}

/** Agent class whose `execute(config)` drains `provider.query({ ...defaults, ...config })`. */
export function providerAgent<TConfig extends object, TEvent>(
  provider: QueryableProvider<TConfig, TEvent>,
  defaults: Partial<TConfig> = {},
): new () => { execute: (config: Partial<TConfig>) => Promise<ProviderCallResult<TEvent>> } {
  return class ProviderAgent {
    /** Collects every event; the first `handle` seen links the call to its audited attempt. */
    async execute(config: Partial<TConfig>): Promise<ProviderCallResult<TEvent>> {
      const events: TEvent[] = [];
      let handle: string | undefined;
      for await (const event of provider.query({ ...defaults, ...config } as TConfig)) {
        events.push(event);
        // agent-harness providers put the run's handle in the `diagnostics` of their last event.
        const candidate =
          (event as { handle?: unknown } | null)?.handle ??
          (event as { diagnostics?: { handle?: unknown } } | null)?.diagnostics?.handle;
        if (handle === undefined && typeof candidate === 'string') handle = candidate;
      }
      return handle === undefined ? { events } : { events, handle };
    }
  };
}
