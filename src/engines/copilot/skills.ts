/**
 * Where GitHub Copilot CLI 1.0.102 finds project skills: `<cwd>/.github/skills/<name>/SKILL.md` (`copilot skill
 * --help`: also `.agents/skills` and `.claude/skills`, and personal ones in `$COPILOT_HOME/skills`). It loads them in
 * prompt mode without trust and lists them in `session.skills_loaded` (`source: "project"`), next to the built-in
 * skills shipped in its package (`source: "builtin"`: `customize-cloud-agent`, `github-pr-media`).
 */
export const COPILOT_SKILL_ROOT = '.github/skills';
