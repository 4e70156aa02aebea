/**
 * Where gemini-cli 0.61.0 finds workspace skills: `<cwd>/.gemini/skills/<name>/SKILL.md` (also the
 * `.agents/skills` alias and `~/.gemini/skills`; docs `cli/skills.md`). Workspace skills load only in a trusted
 * folder; the CLI lists every enabled skill's name and description in its request (`activate_skill`).
 */
export const GEMINI_SKILL_ROOT = '.gemini/skills';
