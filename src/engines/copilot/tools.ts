/**
 * GitHub Copilot CLI 1.0.102's tools as the scripted model server calls them (OpenAI Chat Completions, its BYOK
 * `openai` provider): the shell is `bash {command, description}` (the same name and shape as opencode's, so either
 * table renders it alike); `create {path (absolute), file_text}` takes the `write_file` intent and `skill {skill}`
 * the `use_skill` intent. Tool list seen in the first model request of a scripted run: bash, read_bash, stop_bash,
 * list_bash, view, create, edit, skill, grep, glob, task, … (`tests/engine/engine-matrix.engine.test.ts`).
 */
import type { EngineToolTable } from '../../model/tool-table.js';

/** Description sent with every scripted `bash` call (opencode's too: one shape for the shared tool name). */
export const COPILOT_SHELL_DESCRIPTION = 'Run a scripted shell command';

/** The copilot tool table. */
export const copilotTools: EngineToolTable = {
  engine: 'copilot',
  wire: 'openai-chat',
  shell: [{ tool: 'bash', commandKey: 'command', extra: { description: COPILOT_SHELL_DESCRIPTION } }],
  shellPattern: /shell|bash|exec|command/i,
  write: { tool: 'create', pathKey: 'path', contentKey: 'file_text', absolute: true },
  skill: { tool: 'skill', nameKey: 'skill' },
};
