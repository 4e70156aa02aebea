/**
 * Where Qwen Code 0.24.4 finds project skills: `<cwd>/.qwen/skills/<name>/SKILL.md` (user skills live in
 * `~/.qwen/skills`, created on first run). It offers them to the model through its `skill {skill}` tool.
 */
export const QWEN_SKILL_ROOT = '.qwen/skills';
