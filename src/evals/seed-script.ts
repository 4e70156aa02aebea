/**
 * The seeded copy of a case's model script that trial i runs (issue 45): seed = (script.seed ?? 0) + offset, so the
 * trials of a seeded probabilistic script (`turns.branch`, `turns.ifSkillOffered`) differ from each other while a rerun
 * of the whole set is identical.
 */
import type { ModelScript } from '../model/script.js';

/** The seed trial `offset` runs with. */
export function trialSeed(script: ModelScript | null, offset: number): number {
  return (script?.seed ?? 0) + offset;
}

/** A copy of `script` with the trial's seed. */
export function seedScript(script: ModelScript, offset: number): ModelScript {
  return { ...script, seed: trialSeed(script, offset) };
}
