/**
 * What Qwen Code is, as data (issue 44 item 5): each fact declared once, loadable without the adapter's code (config
 * writers, agent options), so `translate` and the model server load it alone.
 */
import type { EngineToolTable } from '../../model/tool-table.js';
import type { EngineFacts, ErrorPattern } from '../engine.js';
import { QWEN_MODEL_FLAG, QWEN_RESUME_FLAGS } from './command.js';
import { createQwenParser, QWEN_INIT_MESSAGE } from './parse.js';

/**
 * Where Qwen Code 0.24.4 finds project skills: `<cwd>/.qwen/skills/<name>/SKILL.md` (user skills live in
 * `~/.qwen/skills`, created on first run). It offers them to the model through its `skill {skill}` tool.
 */
const QWEN_SKILL_ROOT = '.qwen/skills';

/**
 * Qwen Code 0.24.4's tools as the scripted model server calls them (OpenAI Chat Completions, as offered in its
 * requests): the shell is `run_shell_command {command}` (also `is_background`, `timeout`, `description`, all
 * optional; the same shape as iFlow's, so the two tables never disagree on a shared name); `write_file {file_path
 * (absolute), content}` and `skill {skill}` take the script's `write_file` and `use_skill` intents.
 */

/** The qwen tool table. */
const qwenTools: EngineToolTable = {
  engine: 'qwen',
  wire: 'openai-chat',
  shell: [{ tool: 'run_shell_command', commandKey: 'command' }],
  shellPattern: /shell|bash|command/i,
  write: { tool: 'write_file', pathKey: 'file_path', contentKey: 'content', absolute: true },
  skill: { tool: 'skill', nameKey: 'skill' },
};

/**
 * Error messages Qwen Code 0.24.4 reports (the `result` event's `error.message` and the assistant text before it,
 * `[API Error: 401 bad key]`, and stderr) and what they mean. The OpenAI client's message leads with the HTTP status,
 * so the status is matched alongside the usual words. Rows are tried in order: the first match wins.
 */

/** The qwen error-pattern table, consulted by the completion judge to categorize a failed turn. */
const qwenErrorPatterns: readonly ErrorPattern[] = [
  {
    pattern: /API Error: 40[13]\b|invalid api key|incorrect api key|unauthori[sz]ed|authentication/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /API Error: 429\b|\b429\b|rate[ _-]?limit|too many requests|quota/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /model[^\n]{0,80}(?:not found|does not exist)|API Error: 404\b/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern: /context (?:window|length)|maximum context|too many tokens|token limit/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // A malformed model response: `[API Error: Unexpected token 'm', … is not valid JSON]` (0.24.4, scripted `malformed`).
  {
    pattern:
      /is not valid JSON|Unexpected token .{0,40} JSON|Unexpected end of JSON|Could not parse message into JSON/i,
    category: 'protocol',
    code: 'ENGINE_PROTOCOL_ERROR',
  },
  {
    pattern:
      /ECONNREFUSED|fetch failed|ENOTFOUND|ECONNRESET|ETIMEDOUT|socket hang up|network error|terminated|Connection error|premature close/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];

/** The qwen facts. */
export const qwenFacts: EngineFacts = {
  id: 'qwen',
  executableName: 'qwen',
  packageName: '@qwen-code/qwen-code',
  liveEnvKeys: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL', 'DASHSCOPE_API_KEY'],
  stdin: 'ignore',
  skillRoot: QWEN_SKILL_ROOT,
  tools: qwenTools,
  errorPatterns: qwenErrorPatterns,
  modelFlag: QWEN_MODEL_FLAG,
  resumeFlags: QWEN_RESUME_FLAGS,
  initMessage: QWEN_INIT_MESSAGE,
  createParser: createQwenParser,
};
