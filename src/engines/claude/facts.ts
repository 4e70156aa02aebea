/**
 * What claude (`@anthropic-ai/claude-code`, pinned 2.1.197) is, as data: each fact declared once here, and the adapter
 * (`index.ts`) spreads them. Light (no config writer, no TOML, no agent options), so the registry loads it alone for
 * `translate` (parser, error patterns) and for the scripted model server (tool table).
 */
import type { EngineToolTable } from '../../model/tool-table.js';
import type { EngineFacts, ErrorPattern } from '../engine.js';
import { CLAUDE_MODEL_FLAG, CLAUDE_RESUME_FLAGS } from './command.js';
import { CLAUDE_CACHE_REPORTED_APART, CLAUDE_INIT_MESSAGE, createClaudeParser } from './parse.js';

/**
 * Where claude 2.1.197 finds project skills: `<cwd>/.claude/skills/<name>/SKILL.md` (also
 * `$CLAUDE_CONFIG_DIR/skills`). It lists them in the `system/init` event (`skills`, `slash_commands`) and in
 * the `role:"system"` message of each request ("The following skills are available for use with the Skill
 * tool"), and offers the `Skill` tool to load one.
 */
const CLAUDE_SKILL_ROOT = '.claude/skills';

/** Description sent with every scripted `Bash` call. */
export const CLAUDE_SHELL_DESCRIPTION = 'Run scripted command';

/**
 * claude-code 2.1.197's tools as the scripted model server calls them (Anthropic Messages): the shell is `Bash
 * {command, description}` (always offered); `Write {file_path (absolute), content}` and `Skill {skill}` take the
 * script's `write_file` and `use_skill` intents.
 */
const claudeTools: EngineToolTable = {
  engine: 'claude',
  wire: 'anthropic-messages',
  shell: [{ tool: 'Bash', commandKey: 'command', extra: { description: CLAUDE_SHELL_DESCRIPTION } }],
  write: { tool: 'Write', pathKey: 'file_path', contentKey: 'content', absolute: true },
  skill: { tool: 'Skill', nameKey: 'skill' },
};

/**
 * Error messages claude 2.1.197 prints (the `result` event's `result` text when `is_error`, e.g.
 * `API Error: 401 {"type":"error","error":{"type":"authentication_error",…}}`, and stderr) and what they
 * mean. The Anthropic error `type` is embedded in the message, so it is matched alongside the status.
 * Rows are tried in order: the first match wins, so more specific rows come first.
 */
const claudeErrorPatterns: readonly ErrorPattern[] = [
  // The account cannot pay for the call ("Credit balance is too low", a 400 invalid_request_error from the API).
  {
    pattern: /credit balance is too low|billing_error|insufficient (?:credit|funds)/i,
    category: 'auth',
    code: 'ENGINE_BILLING_FAILED',
  },
  {
    pattern:
      /\b401\b|authentication_error|invalid x-api-key|invalid api key|unauthori[sz]ed|oauth token (?:has expired|has been revoked)|please run \/login/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /\b429\b|rate_limit_error|rate[ _-]?limit|too many requests/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /not_found_error|model[^\n]{0,80}(?:not found|does not exist|not available)|unknown model/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern: /prompt is too long|context[ _-]?window|context[ _-]?length|maximum context/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // 2.1.332 reports a malformed body as `API Error: API returned an empty or malformed response (HTTP 200) — … body is
  // not valid JSON …` (the `malformed-2.1.332` stream); 2.1.197 said the response could not be parsed.
  {
    pattern: /could not be parsed|failed to parse json|empty or malformed response|body is not valid JSON/i,
    category: 'protocol',
    code: 'ENGINE_PROTOCOL_ERROR',
  },
  {
    pattern: /ECONNREFUSED|ECONNRESET|fetch failed|connection refused|unable to connect|socket hang up|ETIMEDOUT/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];

/** The claude facts. */
export const claudeFacts: EngineFacts = {
  id: 'claude',
  executableName: 'claude',
  packageName: '@anthropic-ai/claude-code',
  liveEnvKeys: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'],
  stdin: 'ignore',
  skillRoot: CLAUDE_SKILL_ROOT,
  tools: claudeTools,
  errorPatterns: claudeErrorPatterns,
  modelFlag: CLAUDE_MODEL_FLAG,
  resumeFlags: CLAUDE_RESUME_FLAGS,
  cacheReportedApart: CLAUDE_CACHE_REPORTED_APART,
  initMessage: CLAUDE_INIT_MESSAGE,
  createParser: createClaudeParser,
};
