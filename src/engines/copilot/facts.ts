/**
 * What GitHub Copilot CLI is, as data (issue 44 item 5): each fact declared once, loadable without the adapter's code
 * (config writers, agent options), so `translate` and the model server load it alone.
 */
import type { EngineToolTable } from '../../model/tool-table.js';
import type { EngineFacts, ErrorPattern } from '../engine.js';
import { COPILOT_MODEL_FLAG, COPILOT_RESUME_FLAGS } from './command.js';
import { createCopilotParser } from './parse.js';

/**
 * Where GitHub Copilot CLI 1.0.102 finds project skills: `<cwd>/.github/skills/<name>/SKILL.md` (`copilot skill
 * --help`: also `.agents/skills` and `.claude/skills`, and personal ones in `$COPILOT_HOME/skills`). It loads them in
 * prompt mode without trust and lists them in `session.skills_loaded` (`source: "project"`), next to the built-in
 * skills shipped in its package (`source: "builtin"`: `customize-cloud-agent`, `github-pr-media`).
 */
const COPILOT_SKILL_ROOT = '.github/skills';

/**
 * GitHub Copilot CLI 1.0.102's tools as the scripted model server calls them (OpenAI Chat Completions, its BYOK
 * `openai` provider): the shell is `bash {command, description}` (the same name and shape as opencode's, so either
 * table renders it alike); `create {path (absolute), file_text}` takes the `write_file` intent and `skill {skill}`
 * the `use_skill` intent. Tool list seen in the first model request of a scripted run: bash, read_bash, stop_bash,
 * list_bash, view, create, edit, skill, grep, glob, task, … (`tests/engine/engine-matrix.engine.test.ts`).
 */

/** Description sent with every scripted `bash` call (opencode's too: one shape for the shared tool name). */
const COPILOT_SHELL_DESCRIPTION = 'Run a scripted shell command';

/** The copilot tool table. */
const copilotTools: EngineToolTable = {
  engine: 'copilot',
  wire: 'openai-chat',
  shell: [{ tool: 'bash', commandKey: 'command', extra: { description: COPILOT_SHELL_DESCRIPTION } }],
  shellPattern: /shell|bash|exec|command/i,
  write: { tool: 'create', pathKey: 'path', contentKey: 'file_text', absolute: true },
  skill: { tool: 'skill', nameKey: 'skill' },
};

/**
 * Error messages GitHub Copilot CLI 1.0.102 prints in its `session.error` event (`data.message`, with `statusCode`
 * for API errors; the parser folds them into `message (status N)`) and what they mean. Against the scripted model it
 * retries a 429, a 500, a malformed and a stalled response five times, then fails the turn with "Failed to get
 * response from the AI model; retried 5 times … Last error: …" (fixtures/streams/copilot/). Rows are tried in order:
 * the first match wins.
 */

/** The copilot error-pattern table, consulted by the completion judge to categorize a failed turn. */
const copilotErrorPatterns: readonly ErrorPattern[] = [
  {
    pattern:
      /\(status 40[13]\)|\b40[13] |unauthori[sz]ed|invalid[ _-]?api[ _-]?key|not authenticated|no authentication/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /\(status 429\)|Last error: 429|rate[ _-]?limit|too many requests|quota exceeded/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /model[^\n]{0,80}(?:not found|does not exist|not available)|unknown model|\(status 404\)/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern: /context[ _-]?window|context[ _-]?length|maximum context|too many tokens|prompt is too long/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // A malformed model response: "Failed to parse chat-completions stream chunk: expected value at line 1 column 19".
  { pattern: /Failed to parse chat-completions|stream chunk/i, category: 'protocol', code: 'ENGINE_PROTOCOL_ERROR' },
  {
    pattern:
      /\(status 5\d\d\)|Last error: 5\d\d|unexpected EOF|error decoding response body|ECONNREFUSED|connection refused|fetch failed|socket hang up|ECONNRESET|ETIMEDOUT/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];

/** The copilot facts. */
export const copilotFacts: EngineFacts = {
  id: 'copilot',
  executableName: 'copilot',
  packageName: '@github/copilot',
  liveEnvKeys: [
    'COPILOT_GITHUB_TOKEN',
    'GH_TOKEN',
    'GITHUB_TOKEN',
    'COPILOT_PROVIDER_BASE_URL',
    'COPILOT_PROVIDER_TYPE',
    'COPILOT_PROVIDER_API_KEY',
    'COPILOT_MODEL',
  ],
  stdin: 'ignore',
  skillRoot: COPILOT_SKILL_ROOT,
  tools: copilotTools,
  errorPatterns: copilotErrorPatterns,
  modelFlag: COPILOT_MODEL_FLAG,
  resumeFlags: COPILOT_RESUME_FLAGS,
  nativeResumeCommand: 'copilot --resume',
  // Over ACP copilot forwards its `session.info` / `session.warning` as a message chunk (`Info: <path>` as it creates
  // a file), where its JSONL has them apart.
  acpNotice: /^(?:Info|Warning): /,
  // No per-server MCP startup timeout: 1.0.102 waits for a slow stdio server however long it takes (docs/engines.md).
  mcpStartupUnbounded: true,
  createParser: createCopilotParser,
};
