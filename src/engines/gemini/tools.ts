/**
 * gemini-cli 0.61.0's tools as the scripted model server calls them (Gemini API): the shell is `run_shell_command
 * {command}` (another declared shell-like tool when that one is not); `write_file {file_path, content}` (a path
 * relative to the workspace works) and `activate_skill {name}` take the script's `write_file` and `use_skill`.
 */
import type { EngineToolTable } from '../../model/tool-table.js';

/** The gemini tool table. */
export const geminiTools: EngineToolTable = {
  engine: 'gemini',
  wire: 'gemini',
  shell: [{ tool: 'run_shell_command', commandKey: 'command' }],
  shellPattern: /shell|bash|command/i,
  write: { tool: 'write_file', pathKey: 'file_path', contentKey: 'content', absolute: false },
  skill: { tool: 'activate_skill', nameKey: 'name' },
};
