/**
 * What opencode (`opencode-ai`, pinned 1.18.33) is, as data: each fact declared once here, and the adapter (`index.ts`)
 * spreads them. Light (no config writer, no TOML, no agent options), so the registry loads it alone for `translate`
 * (parser, error patterns) and for the scripted model server (tool table).
 */
import type { EngineToolTable } from '../../model/tool-table.js';
import type { EngineFacts, ErrorPattern } from '../engine.js';
import { OPENCODE_MODEL_FLAG, OPENCODE_RESUME_FLAGS } from './command.js';
import { OPENCODE_CACHE_REPORTED_APART, createOpencodeParser } from './parse.js';

/**
 * Where opencode 1.18.33 finds project skills: `<cwd>/.opencode/skills/<name>/SKILL.md` (also
 * `$XDG_CONFIG_HOME/opencode/skills`). It lists every skill's name, description and location in the
 * `skill` tool's description (`<available_skills>`), sent with each model request.
 */
const OPENCODE_SKILL_ROOT = '.opencode/skills';

/** Description sent with every scripted `bash` call. */
export const OPENCODE_SHELL_DESCRIPTION = 'Run a scripted shell command';

/**
 * opencode 1.18.33's tools as the scripted model server calls them (OpenAI Chat Completions): the shell is `bash
 * {command, description}` (else `shell {command}`, else another shell-like tool); `write {filePath (absolute),
 * content}` takes the `write_file` intent. Its `skill` tool is not used: it shells out to a ripgrep binary opencode
 * downloads on first use, which fails offline ("ripgrep execution failed"), so `use_skill` stays a shell read of
 * the SKILL.md.
 */
const opencodeTools: EngineToolTable = {
  engine: 'opencode',
  wire: 'openai-chat',
  shell: [
    { tool: 'bash', commandKey: 'command', extra: { description: OPENCODE_SHELL_DESCRIPTION } },
    { tool: 'shell', commandKey: 'command' },
  ],
  shellPattern: /shell|bash|exec|command/i,
  write: { tool: 'write', pathKey: 'filePath', contentKey: 'content', absolute: true },
};

/**
 * Error messages opencode 1.18.33 prints in its `error` event (`error.name` + `error.data.message`, with
 * `statusCode` for API errors; the parser folds them into `Name: message (status N)`) and what they mean.
 * Names seen upstream: APIError, ProviderAuthError, ProviderModelNotFoundError, ContextOverflowError,
 * MessageOutputLengthError, UnknownError. Rows are tried in order: the first match wins.
 */
const opencodeErrorPatterns: readonly ErrorPattern[] = [
  {
    pattern: /ProviderAuthError|\(status 40[13]\)|unauthori[sz]ed|invalid[ _-]?api[ _-]?key|incorrect api key/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /\(status 429\)|rate[ _-]?limit|too many requests|quota exceeded/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /ProviderModelNotFoundError|model[^\n]{0,80}(?:not found|does not exist)|unknown model|\(status 404\)/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern:
      /ContextOverflowError|MessageOutputLengthError|context[ _-]?window|context[ _-]?length|maximum context|too many tokens/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // A malformed model response: `UnknownError: JSON parsing failed: Text: …` (1.18.33, scripted `malformed` turn).
  { pattern: /JSON parsing failed|JSON Parse error/i, category: 'protocol', code: 'ENGINE_PROTOCOL_ERROR' },
  {
    pattern: /ECONNREFUSED|connection refused|unable to connect|fetch failed|socket hang up|ECONNRESET|ETIMEDOUT/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];

/** The opencode facts. */
export const opencodeFacts: EngineFacts = {
  id: 'opencode',
  executableName: 'opencode',
  packageName: 'opencode-ai',
  liveEnvKeys: ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'OPENCODE_API_KEY'],
  stdin: 'ignore',
  skillRoot: OPENCODE_SKILL_ROOT,
  tools: opencodeTools,
  errorPatterns: opencodeErrorPatterns,
  modelFlag: OPENCODE_MODEL_FLAG,
  resumeFlags: OPENCODE_RESUME_FLAGS,
  // opencode 1.18.33 writes a .gitignore into its project config dir on every run (measured, scripted runs).
  bookkeepingPaths: ['.opencode/.gitignore'],
  cacheReportedApart: OPENCODE_CACHE_REPORTED_APART,
  createParser: createOpencodeParser,
};
