/**
 * The seeded copy of a case's model script that trial i runs (issue 45): seed = (script.seed ?? 0) + offset, so the
 * trials of a seeded probabilistic script (`turns.branch`, `turns.ifSkillOffered`) differ from each other while a rerun
 * of the whole set is identical.
 */
import { type ModelScript, ModelScriptSchema } from '../model/script.js';

/**
 * True when the script format has a `seed` (the seeded probabilistic turns). Until it does, a trial's copy carries no
 * seed (the strict schema would refuse it); its record still names the seed the trial stands for, so arms still pair.
 */
const SCRIPTS_TAKE_A_SEED = 'seed' in (ModelScriptSchema as unknown as { shape: Record<string, unknown> }).shape;

/** The seed trial `offset` runs with. */
export function trialSeed(script: ModelScript | null, offset: number): number {
  const base = (script as { seed?: unknown } | null)?.seed;
  return (typeof base === 'number' ? base : 0) + offset;
}

/** A copy of `script` with the trial's seed (the script itself when the format has no seed yet). */
export function seedScript(script: ModelScript, offset: number): ModelScript {
  return SCRIPTS_TAKE_A_SEED ? ({ ...script, seed: trialSeed(script, offset) } as ModelScript) : script;
}
