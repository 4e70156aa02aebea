/**
 * What gemini (`@google/gemini-cli`, pinned 0.61.0) is, as data: each fact declared once here, and the adapter
 * (`index.ts`) spreads them. Light (no config writer, no TOML, no agent options), so the registry loads it alone for
 * `translate` (parser, error patterns) and for the scripted model server (tool table).
 */
import type { EngineToolTable } from '../../model/tool-table.js';
import type { EngineFacts, ErrorPattern } from '../engine.js';
import { GEMINI_MODEL_FLAG, GEMINI_RESUME_FLAGS } from './command.js';
import { GEMINI_INIT_MESSAGE, createGeminiParser } from './parse.js';

/**
 * Where gemini-cli 0.61.0 finds workspace skills: `<cwd>/.gemini/skills/<name>/SKILL.md` (also the
 * `.agents/skills` alias and `~/.gemini/skills`; docs `cli/skills.md`). Workspace skills load only in a trusted
 * folder; the CLI lists every enabled skill's name and description in its request (`activate_skill`).
 */
const GEMINI_SKILL_ROOT = '.gemini/skills';

/**
 * gemini-cli 0.61.0's tools as the scripted model server calls them (Gemini API): the shell is `run_shell_command
 * {command}` (another declared shell-like tool when that one is not); `write_file {file_path, content}` (a path
 * relative to the workspace works) and `activate_skill {name}` take the script's `write_file` and `use_skill`.
 */
const geminiTools: EngineToolTable = {
  engine: 'gemini',
  wire: 'gemini',
  shell: [{ tool: 'run_shell_command', commandKey: 'command' }],
  shellPattern: /shell|bash|command/i,
  write: { tool: 'write_file', pathKey: 'file_path', contentKey: 'content', absolute: false },
  skill: { tool: 'activate_skill', nameKey: 'name' },
};

/**
 * Error messages gemini-cli 0.61.0 reports (in the stream-json `result.error.message`, the `json` document's
 * `error.message` and stderr) and what they mean. The CLI embeds the Gemini API's error JSON
 * (`[API Error: {"error":{"code":401,"message":"API key not valid…","status":"UNAUTHENTICATED"}}]`) or its
 * message (`[API Error: Resource has been exhausted (e.g. check quota).]`), so both the HTTP code and the
 * Google status are matched. Rows are tried in order: the first match wins.
 */
const geminiErrorPatterns: readonly ErrorPattern[] = [
  {
    pattern: /api key not valid|invalid api key|"code":\s*40[13]\b|\b40[13]\b|UNAUTHENTICATED|PERMISSION_DENIED/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /"code":\s*429\b|\b429\b|RESOURCE_EXHAUSTED|resource has been exhausted|quota|rate[ _-]?limit/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /model[^\n]{0,80}not found|"code":\s*404\b|\b404\b|NOT_FOUND/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern:
      /input token count[^\n]{0,40}exceeds|token count exceeds|context (?:window|length)|maximum number of tokens/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // A malformed model response: `[API Error: Unexpected token 'm', …  is not valid JSON]` (0.61.0, scripted `malformed` turn).
  {
    pattern: /is not valid JSON|Unexpected token .{0,40} JSON|Unexpected end of JSON/i,
    category: 'protocol',
    code: 'ENGINE_PROTOCOL_ERROR',
  },
  // A stream cut mid-event: `[API Error: terminated]` (undici's abort of the body, scripted `drop` turn).
  {
    pattern:
      /ECONNREFUSED|fetch failed|ENOTFOUND|ECONNRESET|ETIMEDOUT|socket hang up|network error|API Error: terminated/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];

/** The gemini facts. */
export const geminiFacts: EngineFacts = {
  id: 'gemini',
  executableName: 'gemini',
  packageName: '@google/gemini-cli',
  liveEnvKeys: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GEMINI_BASE_URL'],
  stdin: 'ignore',
  skillRoot: GEMINI_SKILL_ROOT,
  tools: geminiTools,
  errorPatterns: geminiErrorPatterns,
  modelFlag: GEMINI_MODEL_FLAG,
  resumeFlags: GEMINI_RESUME_FLAGS,
  initMessage: GEMINI_INIT_MESSAGE,
  createParser: createGeminiParser,
};
