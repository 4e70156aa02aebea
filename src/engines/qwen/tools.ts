/**
 * Qwen Code 0.24.4's tools as the scripted model server calls them (OpenAI Chat Completions, as offered in its
 * requests): the shell is `run_shell_command {command}` (also `is_background`, `timeout`, `description`, all
 * optional; the same shape as iFlow's, so the two tables never disagree on a shared name); `write_file {file_path
 * (absolute), content}` and `skill {skill}` take the script's `write_file` and `use_skill` intents.
 */
import type { EngineToolTable } from '../../model/tool-table.js';

/** The qwen tool table. */
export const qwenTools: EngineToolTable = {
  engine: 'qwen',
  wire: 'openai-chat',
  shell: [{ tool: 'run_shell_command', commandKey: 'command' }],
  shellPattern: /shell|bash|command/i,
  write: { tool: 'write_file', pathKey: 'file_path', contentKey: 'content', absolute: true },
  skill: { tool: 'skill', nameKey: 'skill' },
};
