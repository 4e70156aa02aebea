/**
 * Where opencode 1.18.33 finds project skills: `<cwd>/.opencode/skills/<name>/SKILL.md` (also
 * `$XDG_CONFIG_HOME/opencode/skills`). It lists every skill's name, description and location in the
 * `skill` tool's description (`<available_skills>`), sent with each model request.
 */
export const OPENCODE_SKILL_ROOT = '.opencode/skills';
