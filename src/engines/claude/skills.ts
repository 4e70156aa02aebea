/**
 * Where claude 2.1.197 finds project skills: `<cwd>/.claude/skills/<name>/SKILL.md` (also
 * `$CLAUDE_CONFIG_DIR/skills`). It lists them in the `system/init` event (`skills`, `slash_commands`) and in
 * the `role:"system"` message of each request ("The following skills are available for use with the Skill
 * tool"), and offers the `Skill` tool to load one.
 */
export const CLAUDE_SKILL_ROOT = '.claude/skills';
