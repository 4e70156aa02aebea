/**
 * Trigger evals (issue 45 item 3): labelled prompts (the skills that should load for each, possibly none) run on an
 * engine, and the skills it actually loaded (its tool calls read or were given the skill's body: {@link skillsLoaded})
 * give each skill's trigger precision and recall on that engine, with Wilson intervals, and the routing collisions:
 * prompts where another skill loaded instead of, or beside, the expected one.
 */
import { wilsonInterval } from './stats.js';

/** One labelled prompt's run. */
export interface TriggerRecord {
  /** The trigger set's name (by default the test's full name). */
  case: string;
  engine: string;
  prompt: string;
  /** The skills that should load for this prompt (empty: none should). */
  expected: string[];
  /** The skills the engine loaded. */
  loaded: string[];
  /** The run, for the report's link. */
  auditDir: string | null;
}

/** One skill's trigger statistics on one engine. */
export interface TriggerStatistics {
  case: string;
  skill: string;
  engine: string;
  /** Loaded when it should have. */
  true_positive: number;
  /** Loaded when it should not have. */
  false_positive: number;
  /** Not loaded when it should have. */
  false_negative: number;
  /** Not loaded, rightly. */
  true_negative: number;
  /** TP / (TP + FP), null when it never loaded. */
  precision: number | null;
  precision_ci95: [number, number];
  /** TP / (TP + FN), null when no prompt expected it. */
  recall: number | null;
  recall_ci95: [number, number];
}

/** A routing collision: `loaded` loaded on prompts meant for `expected` (or for no skill: `expected` null). */
export interface RoutingCollision {
  case: string;
  engine: string;
  expected: string | null;
  loaded: string;
  count: number;
  prompts: string[];
}

/** The trigger eval's result. */
export interface TriggerSummary {
  skills: TriggerStatistics[];
  collisions: RoutingCollision[];
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

function rate(hits: number, n: number): { value: number | null; ci95: [number, number] } {
  const w = wilsonInterval(hits, n);
  return { value: n === 0 ? null : round(hits / n), ci95: [round(w.low), round(w.high)] };
}

/** Trigger precision and recall per case × skill × engine, and the routing collisions, sorted. */
export function summarizeTriggers(records: readonly TriggerRecord[]): TriggerSummary {
  const skills: TriggerStatistics[] = [];
  const collisions = new Map<string, RoutingCollision>();
  const groups = new Map<string, TriggerRecord[]>();
  for (const r of records) {
    const key = `${r.case}\u0000${r.engine}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const key of [...groups.keys()].sort()) {
    const group = groups.get(key)!;
    const { case: name, engine } = group[0]!;
    const names = [...new Set(group.flatMap((r) => [...r.expected, ...r.loaded]))].sort();
    for (const skill of names) {
      let tp = 0;
      let fp = 0;
      let fn = 0;
      let tn = 0;
      for (const r of group) {
        const want = r.expected.includes(skill);
        const got = r.loaded.includes(skill);
        if (want && got) tp += 1;
        else if (got) fp += 1;
        else if (want) fn += 1;
        else tn += 1;
      }
      const precision = rate(tp, tp + fp);
      const recall = rate(tp, tp + fn);
      skills.push({
        case: name,
        skill,
        engine,
        true_positive: tp,
        false_positive: fp,
        false_negative: fn,
        true_negative: tn,
        precision: precision.value,
        precision_ci95: precision.ci95,
        recall: recall.value,
        recall_ci95: recall.ci95,
      });
    }
    for (const r of group)
      for (const loaded of r.loaded) {
        if (r.expected.includes(loaded)) continue;
        const expected = r.expected.length === 0 ? [null] : r.expected;
        for (const want of expected) {
          const k = `${name}\u0000${engine}\u0000${want ?? ''}\u0000${loaded}`;
          const c = collisions.get(k) ?? { case: name, engine, expected: want, loaded, count: 0, prompts: [] };
          c.count += 1;
          c.prompts.push(r.prompt);
          collisions.set(k, c);
        }
      }
  }
  return { skills, collisions: [...collisions.keys()].sort().map((k) => collisions.get(k)!) };
}
