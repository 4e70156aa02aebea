/**
 * claude-code 2.1.197's tools as the scripted model server calls them (Anthropic Messages): the shell is `Bash
 * {command, description}` (always offered); `Write {file_path (absolute), content}` and `Skill {skill}` take the
 * script's `write_file` and `use_skill` intents.
 */
import type { EngineToolTable } from '../../model/tool-table.js';

/** Description sent with every scripted `Bash` call. */
export const CLAUDE_SHELL_DESCRIPTION = 'Run scripted command';

/** The claude tool table. */
export const claudeTools: EngineToolTable = {
  engine: 'claude',
  wire: 'anthropic-messages',
  shell: [{ tool: 'Bash', commandKey: 'command', extra: { description: CLAUDE_SHELL_DESCRIPTION } }],
  write: { tool: 'Write', pathKey: 'file_path', contentKey: 'content', absolute: true },
  skill: { tool: 'Skill', nameKey: 'skill' },
};
