/**
 * codex 0.169.0's tools as the scripted model server calls them (OpenAI Responses): the shell is `exec_command
 * {cmd}`; older releases offer `shell {command: argv}` or `shell_command {command}`. codex has no file-writing or
 * skill tool of its own: `write_file` and `use_skill` run as shell commands. `exec_command` yields after 10 s
 * (`yield_time_ms`) with `Process running with session ID N` in its output; a poll is then `write_stdin {session_id: N,
 * chars: ""}` (its tool description: "empty polls wait 5000-300000 ms"), observed in a scripted `sleep 12` run.
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
  poll: {
    tool: 'write_stdin',
    sessionKey: 'session_id',
    args: { chars: '', yield_time_ms: 30_000 },
    running: /(?:^|\n)Process running with session ID (\d+)/,
  },
};
