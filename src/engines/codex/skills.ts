/** Where codex finds project skills: `<cwd>/.codex/skills` (also `$CODEX_HOME/skills`, `.agents/skills`). */
export const CODEX_SKILL_ROOT = '.codex/skills';
