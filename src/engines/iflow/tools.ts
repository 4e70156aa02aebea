/**
 * iFlow CLI's tools as the scripted model server calls them (OpenAI Chat Completions). iFlow CLI is a fork of
 * gemini-cli and names its shell tool as gemini does, `run_shell_command {command}` (from recordings of others: no
 * iFlow CLI is served here to capture one); another offered shell-like tool is used when that one is not. Its
 * file-writing and skill tools are not relied on: `write_file` and `use_skill` run as shell commands.
 */
import type { EngineToolTable } from '../../model/tool-table.js';

/** The iFlow tool table. */
export const iflowTools: EngineToolTable = {
  engine: 'iflow',
  wire: 'openai-chat',
  shell: [{ tool: 'run_shell_command', commandKey: 'command' }],
  shellPattern: /shell|bash|exec|command/i,
};
