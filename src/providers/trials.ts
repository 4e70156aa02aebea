/**
 * Trials through the provider API (issue 45 item 1): `runProviderTrials(config, { trials, check })` runs
 * `getProvider(engine).query(config)` N times, each an ordinary audited attempt in its own run directory with a seeded
 * copy of `extra.script`, classifies failures from the run's audit (`.audit/fcmp.1.jsonl`), reruns infrastructure
 * failures, and returns the records and their statistics.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runTrials, type TrialAttempt, type TrialContext } from '../evals/run-trials.js';
import { seedScript, trialSeed } from '../evals/seed-script.js';
import { summarizeTrials, type TrialStatistics } from '../evals/summarize.js';
import { resolveTrialOptions, type TrialOptions } from '../evals/trial-options.js';
import type { TrialRecord } from '../evals/trial-record.js';
import { AgentHarnessError } from '../errors/index.js';
import { type ModelScript, parseModelScript } from '../model/index.js';
import type { AgentEvent } from '../protocol/index.js';
import type { AgentProviderConfig } from './config.js';
import { getProvider } from './registry.js';

/** Options of {@link runProviderTrials}. */
export interface ProviderTrialsOptions extends TrialOptions {
  /** The case's name (default: the prompt). */
  case?: string;
  /** A script per trial (to vary it yourself), instead of `config.extra.script`; each is seeded like it. */
  script?: (trial: TrialContext) => ModelScript;
  /** The trial's checks over its events and run directory: throw to fail the trial. Default: the query succeeded. */
  check?: (events: readonly AgentEvent[], trial: TrialContext & { runDir: string | null }) => void | Promise<void>;
}

/** What {@link runProviderTrials} returns. */
export interface ProviderTrialsResult {
  records: TrialRecord[];
  statistics: TrialStatistics[];
}

interface Diagnostics {
  runId?: string;
  handle?: string;
  runDir?: string;
  completion?: { state: string; reason?: string; code?: string };
}

function readFcmp(runDir: string): Array<{ type: string; data?: unknown }> {
  try {
    return fs
      .readFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { type: string; data?: unknown });
  } catch {
    return [];
  }
}

/** Runs a provider query as trials (arms other than `with-skill` need the Vitest fixture's skill selection). */
export async function runProviderTrials(
  config: AgentProviderConfig,
  options: ProviderTrialsOptions,
): Promise<ProviderTrialsResult> {
  const resolved = resolveTrialOptions(options, 'runProviderTrials() ');
  if (resolved.arms.some((arm) => arm !== 'with-skill'))
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `runProviderTrials() arms = ${JSON.stringify(resolved.arms)} is invalid: a provider injects the skills of its roots, so only the with-skill arm runs here; run baseline arms with agent.trials() in Vitest.`,
      { details: { field: 'arms' } },
    );
  const provider = getProvider(config.provider);
  const given = config.extra?.script;
  const base: ModelScript | null =
    given === undefined ? null : parseModelScript(given, 'runProviderTrials() extra.script');
  const runTrial = async (context: TrialContext): Promise<TrialAttempt> => {
    const events: AgentEvent[] = [];
    const own = options.script ? parseModelScript(options.script(context), 'runProviderTrials() script') : base;
    const extra = { ...(config.extra ?? {}), ...(own ? { script: seedScript(own, context.seedOffset) } : {}) };
    try {
      for await (const event of provider.query({ ...config, extra })) events.push(event);
    } catch (thrown) {
      return { result: null, seed: own ? trialSeed(own, context.seedOffset) : null, checkError: null, thrown };
    }
    const ended = [...events].reverse().find((e) => e.type === 'complete' || e.type === 'error');
    const diagnostics = (ended?.diagnostics ?? {}) as Diagnostics;
    const runDir = diagnostics.runDir ?? null;
    let checkError: unknown = null;
    try {
      if (options.check) await options.check(events, { ...context, runDir });
      else if (!events.some((e) => e.type === 'complete' && e.result?.success))
        throw new Error(
          `the query did not succeed: ${ended?.error ?? ended?.result?.errors?.join('; ') ?? 'no result'}`,
        );
    } catch (error) {
      checkError = error;
    }
    const usage = events.find((e) => e.type === 'complete')?.result?.usage;
    return {
      result: {
        runId: diagnostics.runId ?? '',
        handle: diagnostics.handle ?? '',
        durationMs: 0,
        audit: { dir: runDir ? path.join(runDir, '.audit') : '' },
        completion: diagnostics.completion ?? { state: 'unknown' },
        fcmp: runDir ? readFcmp(runDir) : [],
        assistantMessages: events.filter((e) => e.content?.kind === 'text').map((e) => String(e.content?.raw ?? '')),
        toolCalls: events.filter((e) => e.content?.kind === 'tool_use'),
        usage: usage ? { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens } : null,
      },
      seed: own ? trialSeed(own, context.seedOffset) : null,
      checkError,
    };
  };
  const records = await runTrials({
    ...resolved,
    case: options.case ?? config.prompt,
    engine: config.provider,
    runTrial,
  });
  return { records, statistics: summarizeTrials(records, { k: resolved.k }) };
}
