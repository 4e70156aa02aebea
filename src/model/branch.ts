/**
 * Seeded probabilistic script turns (issue 45): `branch` (taken with probability p) and `if_skill_offered` (taken
 * when the engine offered the skill in this request), resolved into the plain turns the server answers with.
 *
 * Turn selection stays stateless (see `selectTurn`): every request expands the script again, and each branch's draw
 * comes from a small PRNG seeded by the script's `seed` and the branch's place in the script (`2.turns.0`), never from
 * a counter. So every request of an attempt, a retry, a resume or a fresh server takes the same branches for the same
 * seed, and a trial runner that sets `seed = base + trialIndex` gets independent, reproducible choices per trial.
 */
import type { ModelScript, ModelTurn, PlayedTurn } from './script.js';
import { expandFollowSkill, type FollowSkillContext } from './follow-skill.js';

/** Where a seed is absent: the same choices on every run, as any script without `seed`. */
export const DEFAULT_SEED = 0;

/** FNV-1a over the seed and a branch's place: a 32-bit state for {@link mulberry32}. */
function hashState(seed: number, place: string): number {
  let h = 0x811c9dc5;
  for (const ch of `${seed}:${place}`) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Mulberry32's first output for `state`, in [0, 1): small, fast, and the same in every JavaScript runtime. */
function mulberry32(state: number): number {
  let t = (state + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/** The draw in [0, 1) of the branch at `place` for `seed` (exported for tests and docs). */
export function drawFor(seed: number, place: string): number {
  return mulberry32(hashState(seed, place));
}

/** What resolving a script's turns for one request needs. */
export interface ExpandContext extends FollowSkillContext {
  /** The script's seed ({@link DEFAULT_SEED} when absent). */
  seed: number;
  /** Model outputs already in the request's history (the index of the turn to answer). */
  modelTurns: number;
}

/**
 * The plain turns `list` stands for in this request: branches resolved by their draw, `if_skill_offered` by the
 * request, `follow_skill` by what the engine has shown the model (see `follow-skill.ts`). `base` is the index of the
 * list's first turn in the whole expansion; `place` prefixes each branch's place.
 */
function expandList(list: readonly ModelTurn[], context: ExpandContext, base: number, place: string): PlayedTurn[] {
  const out: PlayedTurn[] = [];
  list.forEach((turn, i) => {
    const at = `${place}${i}`;
    const start = base + out.length;
    if (turn.type === 'branch') {
      const taken = drawFor(context.seed, at) < turn.p;
      out.push(...expandList(taken ? turn.turns : turn.else, context, start, `${at}.${taken ? 'turns' : 'else'}.`));
    } else if (turn.type === 'if_skill_offered') {
      const taken = context.offered(turn.name);
      out.push(...expandList(taken ? turn.turns : turn.else, context, start, `${at}.${taken ? 'turns' : 'else'}.`));
    } else if (turn.type === 'follow_skill') {
      out.push(...expandFollowSkill(turn, context, context.modelTurns - start));
    } else out.push(turn);
  });
  return out;
}

/** True when some turn of `list` (at any depth) needs expanding. */
function hasDynamicTurns(list: readonly ModelTurn[]): boolean {
  return list.some(
    (turn) => turn.type === 'branch' || turn.type === 'if_skill_offered' || turn.type === 'follow_skill',
  );
}

/** The plain turns of `list` for one request; a list of plain turns is returned as it is. */
export function expandTurns(
  list: readonly ModelTurn[],
  script: Pick<ModelScript, 'seed'>,
  context: () => Omit<ExpandContext, 'seed'>,
): readonly PlayedTurn[] {
  // Read the request only for a script that needs it: most scripts are plain lists.
  if (!hasDynamicTurns(list)) return list as readonly PlayedTurn[];
  return expandList(list, { ...context(), seed: script.seed ?? DEFAULT_SEED }, 0, '');
}
