/**
 * codex 0.169.0's tools as the scripted model server calls them (OpenAI Responses): the shell is `exec_command
 * {cmd}`; older releases offer `shell {command: argv}` or `shell_command {command}`. codex has no file-writing or
 * skill tool of its own: `write_file` and `use_skill` run as shell commands.
 */
import type { EngineToolTable } from '../../model/tool-table.js';

/** The codex tool table. */
export const codexTools: EngineToolTable = {
  engine: 'codex',
  wire: 'openai-responses',
  shell: [
    { tool: 'exec_command', commandKey: 'cmd' },
    { tool: 'shell', commandKey: 'command', argv: ['bash', '-lc'] },
    { tool: 'shell_command', commandKey: 'command' },
  ],
};
