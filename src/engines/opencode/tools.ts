/**
 * opencode 1.18.33's tools as the scripted model server calls them (OpenAI Chat Completions): the shell is `bash
 * {command, description}` (else `shell {command}`, else another shell-like tool); `write {filePath (absolute),
 * content}` takes the `write_file` intent. Its `skill` tool is not used: it shells out to a ripgrep binary opencode
 * downloads on first use, which fails offline ("ripgrep execution failed"), so `use_skill` stays a shell read of
 * the SKILL.md.
 */
import type { EngineToolTable } from '../../model/tool-table.js';

/** Description sent with every scripted `bash` call. */
export const OPENCODE_SHELL_DESCRIPTION = 'Run a scripted shell command';

/** The opencode tool table. */
export const opencodeTools: EngineToolTable = {
  engine: 'opencode',
  wire: 'openai-chat',
  shell: [
    { tool: 'bash', commandKey: 'command', extra: { description: OPENCODE_SHELL_DESCRIPTION } },
    { tool: 'shell', commandKey: 'command' },
  ],
  shellPattern: /shell|bash|exec|command/i,
  write: { tool: 'write', pathKey: 'filePath', contentKey: 'content', absolute: true },
};
