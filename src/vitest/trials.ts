/**
 * `agent.trials(engine, options)` and `agent.triggers(engine, options)` (issue 45 items 1 and 3): a case run N times per
 * arm as ordinary audited attempts (each its own run directory, its own lane of the test's model server with a seeded
 * copy of the script, and in a cassette mode its own cassette), checked by the test's `check`, classified, retried on
 * infrastructure failures, and recorded in `task.meta.agentHarnessTrials` for the reporter's statistics.
 */
import path from 'node:path';
import { isCassetteMode } from '../cassette/mode.js';
import type { GradedTrial } from '../evals/grade.js';
import { runTrials, type TrialAttempt, type TrialContext } from '../evals/run-trials.js';
import { seedScript, trialSeed } from '../evals/seed-script.js';
import { skillsLoaded } from '../evals/skill-load.js';
import { summarizeTrials, type TrialStatistics } from '../evals/summarize.js';
import { resolveTrialOptions, type TrialOptions } from '../evals/trial-options.js';
import { type Arm, appendTrialRecords, type TrialRecord } from '../evals/trial-record.js';
import { summarizeTriggers, type TriggerRecord, type TriggerSummary } from '../evals/trigger.js';
import { AgentHarnessError } from '../errors/index.js';
import { type ModelScript, type ModelTurn, parseModelScript } from '../model/index.js';
import type { EngineId } from '../protocol/index.js';
import { mapAtMost } from '../runtime/map-at-most.js';
import type { AgentStartOptions } from './agent.js';
import type { HarnessRun } from './run.js';

/** A case's script: a script, its turns, or a function of the trial (to vary it per trial yourself). */
export type TrialScript =
  | ModelScript
  | readonly ModelTurn[]
  | ((trial: TrialContext) => ModelScript | readonly ModelTurn[]);

/** Options of `agent.trials()`: those of `agent.start()`, the trial options, the check and the graders. */
export interface AgentTrialsOptions extends Omit<AgentStartOptions, 'script'>, Partial<TrialOptions> {
  /** The case's name in the statistics (default: the test's full name). */
  case?: string;
  /** The skill under test: the `with-skill` arm injects it alone (default: `onlySkills`, else every skill). */
  skill?: string;
  /** The case's model script (default: the test's, `model.script(...)`); each trial runs a seeded copy. */
  script?: TrialScript;
  /** The trial's checks: throw (a failed `expect`) to fail the trial. Default: the attempt completed. */
  check?: (run: HarnessRun, trial: TrialContext) => void | Promise<void>;
  /** Graders combined into a verdict (issue 45 item 4); a trial passes when its checks and its grade pass. */
  grade?: (run: HarnessRun, trial: TrialContext) => GradedTrial | Promise<GradedTrial>;
}

/** What `agent.trials()` returns: every trial's record and run, and their statistics per arm. */
export class TrialSet {
  /** Creates the set (the fixture does). */
  constructor(
    /** The case's name. */
    readonly caseName: string,
    /** The engine. */
    readonly engine: EngineId,
    /** Every trial's record, by arm then trial. */
    readonly records: readonly TrialRecord[],
    /** The run of each trial's last attempt, by `${arm}/${trial}`. */
    readonly runs: ReadonlyMap<string, HarnessRun>,
    private readonly k: readonly number[],
  ) {}

  /** Statistics per arm (sorted by arm), the `with-skill` rows carrying their lift over `baseline` when it ran. */
  get statistics(): TrialStatistics[] {
    return summarizeTrials(this.records, { k: this.k });
  }

  /** The statistics of one arm (undefined when it did not run). */
  arm(arm: Arm): TrialStatistics | undefined {
    return this.statistics.find((row) => row.arm === arm);
  }
}

/** Options of `agent.triggers()`. */
export interface AgentTriggersOptions extends Omit<AgentStartOptions, 'script' | 'prompt'> {
  /** The trigger set's name in the report (default: the test's full name). */
  case?: string;
  /** Labelled prompts: the skills each should load (none: `[]`), and optionally its own script. */
  prompts: ReadonlyArray<{ prompt: string; expect: readonly string[]; script?: ModelScript | readonly ModelTurn[] }>;
  /** Prompts running at once (default 4). */
  concurrency?: number;
}

/** The fixture's parts the trials use. */
export interface TrialsHost {
  start(engine: EngineId, options: AgentStartOptions): Promise<HarnessRun>;
  /** The test's current script (null: default replies). */
  testScript(): ModelScript | null;
  /** The test's task meta, the trials' records are appended to. */
  meta: object;
  testName: string;
  /** The default cassette path of this test (without `.json`), for each trial's own cassette. */
  cassetteBase: string;
  /** The project root relative paths resolve against. */
  projectRoot: string;
  /** The plugin's model mode and default trial count. */
  mode: AgentStartOptions['model'];
  defaultTrials: number | null;
}

function asScript(value: ModelScript | readonly ModelTurn[], where: string): ModelScript {
  return parseModelScript(Array.isArray(value) ? { version: 1, turns: value } : value, where);
}

function onlySkillsOf(arm: Arm, options: AgentTrialsOptions): readonly string[] | undefined {
  if (arm === 'baseline') return [];
  if (arm === 'all-skills') return undefined;
  return options.skill ? [options.skill] : options.onlySkills;
}

/** Runs `agent.trials()`. */
export async function runAgentTrials(
  host: TrialsHost,
  engine: EngineId,
  options: AgentTrialsOptions,
): Promise<TrialSet> {
  const where = `agent.trials(${JSON.stringify(engine)}) `;
  const {
    check,
    grade,
    script,
    skill,
    case: name,
    trials,
    concurrency,
    arms,
    k,
    maxInfraRetries,
    firstTrial,
    judge,
    ...start
  } = options;
  const resolved = resolveTrialOptions(
    {
      trials: trials ?? host.defaultTrials ?? (undefined as unknown as number),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(arms ? { arms } : {}),
      ...(k ? { k } : {}),
      ...(maxInfraRetries !== undefined ? { maxInfraRetries } : {}),
      ...(firstTrial !== undefined ? { firstTrial } : {}),
      ...(judge !== undefined ? { judge } : {}),
    },
    where,
  );
  if (skill !== undefined && (typeof skill !== 'string' || skill === ''))
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `${where}skill = ${JSON.stringify(skill)} is invalid: name one skill.`,
      {
        details: { field: 'skill' },
      },
    );
  const caseName = name ?? host.testName;
  const taped = isCassetteMode(start.model ?? host.mode);
  const runs = new Map<string, HarnessRun>();
  const runTrial = async (context: TrialContext): Promise<TrialAttempt> => {
    const given = typeof script === 'function' ? script(context) : script;
    const base = given === undefined ? host.testScript() : asScript(given, `${where}script`);
    const seed = trialSeed(base, context.seedOffset);
    const only = onlySkillsOf(context.arm, options);
    const cassette = taped
      ? `${start.cassette ? path.resolve(host.projectRoot, start.cassette).replace(/\.json$/, '') : host.cassetteBase}.${context.arm}.trial-${context.trial}${context.retry > 0 ? `.retry-${context.retry}` : ''}.json`
      : undefined;
    let run: HarnessRun;
    try {
      run = await host.start(engine, {
        ...start,
        ...(base ? { script: seedScript(base, context.seedOffset) } : {}),
        ...(only !== undefined ? { onlySkills: only } : {}),
        ...(cassette ? { cassette } : {}),
      });
    } catch (thrown) {
      return { result: null, seed, checkError: null, thrown };
    }
    runs.set(`${context.arm}/${context.trial}`, run);
    let checkError: unknown = null;
    try {
      if (check) await check(run, context);
      else if (run.completion.state !== 'completed')
        throw new Error(`the attempt ended ${run.completion.state} (${run.completion.reason}), not completed`);
    } catch (error) {
      checkError = error;
    }
    let graded: GradedTrial | undefined;
    if (grade && checkError === null) graded = await grade(run, context);
    return {
      result: run.last,
      seed,
      checkError,
      ...(graded ? { graded } : {}),
      ...(cassette ? { cassette } : {}),
      skillsLoaded: skillsLoaded(run.toolCalls, run.skillsInjected),
    };
  };
  const records = await runTrials({ ...resolved, case: caseName, engine, runTrial });
  appendTrialRecords(host.meta, records);
  return new TrialSet(caseName, engine, records, runs, resolved.k);
}

/** The key of the test meta the trigger records are written under. */
export const TRIGGERS_META_KEY = 'agentHarnessTriggers';

/** Reads the trigger records of a task meta object; [] when none. */
export function readTriggerRecords(meta: unknown): TriggerRecord[] {
  const value = meta && typeof meta === 'object' ? (meta as Record<string, unknown>)[TRIGGERS_META_KEY] : undefined;
  return Array.isArray(value) ? (value as TriggerRecord[]) : [];
}

/** Runs `agent.triggers()`: each labelled prompt once, its loaded skills against its labels. */
export async function runAgentTriggers(
  host: TrialsHost,
  engine: EngineId,
  options: AgentTriggersOptions,
): Promise<TriggerSummary & { records: TriggerRecord[] }> {
  const where = `agent.triggers(${JSON.stringify(engine)}) `;
  const { prompts, concurrency, case: name, ...start } = options;
  if (!Array.isArray(prompts) || prompts.length === 0)
    throw new AgentHarnessError('CONFIG_INVALID', `${where}prompts must be a non-empty list of { prompt, expect }.`, {
      details: { field: 'prompts' },
    });
  prompts.forEach((p, i) => {
    if (!p || typeof p.prompt !== 'string' || !Array.isArray(p.expect))
      throw new AgentHarnessError(
        'CONFIG_INVALID',
        `${where}prompts[${i}] = ${JSON.stringify(p)} is invalid: each is { prompt: string, expect: string[] } (expect [] when no skill should load).`,
        { details: { field: `prompts[${i}]` } },
      );
  });
  const resolved = resolveTrialOptions(
    { trials: prompts.length, ...(concurrency !== undefined ? { concurrency } : {}) },
    where,
  );
  const caseName = name ?? host.testName;
  const records = await mapAtMost(prompts, resolved.concurrency, async (labelled, index): Promise<TriggerRecord> => {
    const run = await host.start(engine, {
      ...start,
      prompt: labelled.prompt,
      ...(labelled.script ? { script: asScript(labelled.script, `${where}prompts[${index}].script`) } : {}),
    });
    const candidates = [...new Set([...run.skillsInjected, ...labelled.expect])];
    return {
      case: caseName,
      engine,
      prompt: labelled.prompt,
      expected: [...labelled.expect],
      loaded: skillsLoaded(run.toolCalls, candidates),
      auditDir: run.auditDir,
    };
  });
  const meta = host.meta as Record<string, unknown>;
  meta[TRIGGERS_META_KEY] = [...readTriggerRecords(meta), ...records];
  return { ...summarizeTriggers(records), records };
}
