/**
 * The statistics section of `consistency.json` (issue 45 item 7), versioned `agent-harness.statistics/1`: per case ×
 * engine × arm the trials' counts, pass rate, 95% Wilson interval, pass@k, pass^k, flaky and lift, the trigger evals,
 * and the verdict of each gate the plugin holds. Built from the tests' trial records alone (identical after
 * `--merge-reports`), and rendered as a Markdown table for CI step summaries.
 */
import * as z from 'zod';
import { checkLift, checkPassRate, type LiftGate, type PassRateGate } from '../evals/gates.js';
import { summarizeTrials } from '../evals/summarize.js';
import type { TrialRecord } from '../evals/trial-record.js';
import { summarizeTriggers, type TriggerRecord } from '../evals/trigger.js';

/** Version tag of the statistics section. */
export const STATISTICS_VERSION = 'agent-harness.statistics/1';

const Interval = z.tuple([z.number(), z.number()]);

/** One case × engine × arm. Field names are snake_case: they are a documented, versioned format (docs/evals.md). */
export const TrialStatisticsSchema = z.object({
  case: z.string(),
  engine: z.string(),
  arm: z.enum(['with-skill', 'baseline', 'all-skills']),
  n: z.number().int().nonnegative(),
  passed: z.number().int().nonnegative(),
  infra_failed: z.number().int().nonnegative(),
  engine_failed: z.number().int().nonnegative(),
  judge_errors: z.number().int().nonnegative(),
  infra_retries: z.number().int().nonnegative(),
  pass_rate: z.number().nullable(),
  ci95: Interval,
  pass_at_k: z.record(z.string(), z.number()),
  pass_hat_k: z.record(z.string(), z.number()),
  flaky: z.boolean(),
  duration_ms: z.object({ mean: z.number(), total: z.number() }),
  tokens: z.number().nullable(),
  cost_usd: z.number().nullable(),
  mean_score: z.number().optional(),
  lift: z
    .object({
      vs: z.string(),
      diff: z.number(),
      ci95: Interval,
      mcnemar: z.object({ onlyA: z.number(), onlyB: z.number(), p: z.number() }).optional(),
    })
    .optional(),
  strip: z.string(),
  failures: z.array(
    z.object({
      trial: z.number().int(),
      failureClass: z.string(),
      code: z.string().optional(),
      reason: z.string().optional(),
      auditDir: z.string().nullable(),
      handle: z.string().nullable(),
    }),
  ),
});

/** A gate's verdict on one row. */
export const GateResultSchema = z.object({
  gate: z.enum(['passRate', 'lift']),
  case: z.string(),
  engine: z.string(),
  arm: z.string(),
  pass: z.boolean(),
  message: z.string(),
});
/** A gate's verdict. */
export type GateResult = z.infer<typeof GateResultSchema>;

/** The statistics section. */
export const StatisticsSectionSchema = z.object({
  version: z.literal(STATISTICS_VERSION),
  /** The interval of `ci95`: the Wilson score interval; lifts use Newcombe's hybrid score interval. */
  interval: z.literal('wilson'),
  confidence: z.literal(0.95),
  rows: z.array(TrialStatisticsSchema),
  triggers: z
    .object({
      skills: z.array(z.record(z.string(), z.unknown())),
      collisions: z.array(z.record(z.string(), z.unknown())),
    })
    .optional(),
  gates: z.array(GateResultSchema).optional(),
});
/** The statistics section. */
export type StatisticsSection = z.infer<typeof StatisticsSectionSchema>;

/** The gates the reporter holds (the plugin's `gates` option). */
export interface StatisticsGates {
  passRate?: PassRateGate;
  lift?: LiftGate;
  k?: readonly number[];
}

/** Builds the section from every test's trial and trigger records; null when the run had neither. */
export function buildStatisticsSection(
  trials: readonly TrialRecord[],
  triggers: readonly TriggerRecord[],
  gates: StatisticsGates = {},
): StatisticsSection | null {
  if (trials.length === 0 && triggers.length === 0) return null;
  const rows = summarizeTrials(trials, gates.k ? { k: gates.k } : {});
  const verdicts: GateResult[] = [];
  for (const row of rows) {
    if (gates.passRate && row.arm !== 'baseline') {
      const v = checkPassRate(row, gates.passRate);
      verdicts.push({ gate: 'passRate', case: row.case, engine: row.engine, arm: row.arm, ...v });
    }
    if (gates.lift && row.arm !== 'baseline') {
      const base = rows.find((r) => r.case === row.case && r.engine === row.engine && r.arm === 'baseline');
      const v = checkLift(row, base, gates.lift);
      verdicts.push({ gate: 'lift', case: row.case, engine: row.engine, arm: row.arm, ...v });
    }
  }
  return StatisticsSectionSchema.parse({
    version: STATISTICS_VERSION,
    interval: 'wilson',
    confidence: 0.95,
    rows,
    ...(triggers.length > 0 ? { triggers: summarizeTriggers(triggers) } : {}),
    ...(verdicts.length > 0 ? { gates: verdicts } : {}),
  });
}

const pct = (x: number | null): string => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The section as Markdown tables (trials, triggers, failed gates), for consistency.md and a CI step summary. */
export function renderStatisticsMarkdown(section: StatisticsSection | null | undefined): string {
  if (!section) return '';
  const out: string[] = [];
  if (section.rows.length > 0) {
    const ks = [...new Set(section.rows.flatMap((r) => Object.keys(r.pass_at_k)))].sort(
      (a, b) => Number(a) - Number(b),
    );
    out.push(
      '',
      '## Trials',
      '',
      "Pass rate with its 95% Wilson interval; lift over the baseline arm with Newcombe's interval.",
      '',
    );
    out.push(
      `| case | engine | arm | n | passed | pass rate | 95% CI | ${ks.map((k) => `pass@${k} | pass^${k}`).join(' | ')}${ks.length ? ' | ' : ''}flaky | infra | lift | trials |`,
    );
    out.push(`|${' --- |'.repeat(11 + ks.length * 2)}`);
    for (const r of section.rows) {
      const lift = r.lift
        ? `${r.lift.diff >= 0 ? '+' : ''}${pct(r.lift.diff)} [${pct(r.lift.ci95[0])}, ${pct(r.lift.ci95[1])}]`
        : '';
      const kCells = ks.map((k) => `${pct(r.pass_at_k[k] ?? null)} | ${pct(r.pass_hat_k[k] ?? null)}`).join(' | ');
      out.push(
        `| ${cell(r.case)} | ${r.engine} | ${r.arm} | ${r.n} | ${r.passed} | ${pct(r.pass_rate)} | ${pct(r.ci95[0])}–${pct(r.ci95[1])} | ${kCells}${ks.length ? ' | ' : ''}${r.flaky ? 'yes' : ''} | ${r.infra_failed || ''} | ${lift} | \`${r.strip}\` |`,
      );
    }
  }
  if (section.triggers && section.triggers.skills.length > 0) {
    out.push(
      '',
      '## Trigger evals',
      '',
      '| set | skill | engine | precision | 95% CI | recall | 95% CI |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const s of section.triggers.skills as Array<Record<string, never>>) {
      const p = s.precision_ci95 as unknown as [number, number];
      const r = s.recall_ci95 as unknown as [number, number];
      out.push(
        `| ${cell(String(s.case))} | ${s.skill} | ${s.engine} | ${pct(s.precision)} | ${pct(p[0])}–${pct(p[1])} | ${pct(s.recall)} | ${pct(r[0])}–${pct(r[1])} |`,
      );
    }
    for (const c of section.triggers.collisions as Array<Record<string, never>>)
      out.push(
        '',
        `Routing collision on ${c.engine}: ${c.loaded} loaded ${c.count}× where ${c.expected ?? 'no skill'} was expected.`,
      );
  }
  const failed = (section.gates ?? []).filter((g) => !g.pass);
  if (failed.length > 0) out.push('', '## Failed gates', '', ...failed.map((g) => `- ${g.gate}: ${cell(g.message)}`));
  return `${out.join('\n')}\n`;
}
