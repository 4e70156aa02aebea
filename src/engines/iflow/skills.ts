/** Where iFlow finds project skills: `<cwd>/.iflow/skills` (seed 001, Decision 10). */
export const IFLOW_SKILL_ROOT = '.iflow/skills';
