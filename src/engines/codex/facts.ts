/**
 * What codex (`@openai/codex`, pinned 0.171.0) is, as data: each fact declared once here, and the adapter (`index.ts`)
 * spreads them. Light (no config writer, no TOML, no agent options), so the registry loads it alone for `translate`
 * (parser, error patterns) and for the scripted model server (tool table).
 */
import type { EngineToolTable } from '../../model/tool-table.js';
import type { EngineFacts, ErrorPattern } from '../engine.js';
import { CODEX_MODEL_FLAG, CODEX_NATIVE_RESUME_COMMAND, CODEX_RESUME_FLAGS } from './command.js';
import { CODEX_TURN_SCOPED_IDS, createCodexParser } from './parse.js';

/** Where codex finds project skills: `<cwd>/.codex/skills` (also `$CODEX_HOME/skills`, `.agents/skills`). */
const CODEX_SKILL_ROOT = '.codex/skills';

/**
 * codex 0.169.0's tools as the scripted model server calls them (OpenAI Responses): the shell is `exec_command
 * {cmd}`; older releases offer `shell {command: argv}` or `shell_command {command}`. codex has no file-writing or
 * skill tool of its own: `write_file` and `use_skill` run as shell commands. `exec_command` yields after 10 s
 * (`yield_time_ms`) with `Process running with session ID N` in its output; a poll is then `write_stdin {session_id: N,
 * chars: ""}` (its tool description: "empty polls wait 5000-300000 ms"), observed in a scripted `sleep 12` run.
 */
const codexTools: EngineToolTable = {
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

/**
 * Error messages codex 0.169.0 prints (in `turn.failed.error.message`, top-level `error` events, `error` items
 * and stderr) and what they mean. Sources: shared/research/codex-claude.md §4 and the upstream client
 * (`codex-rs/core`), whose messages embed the HTTP status (`unexpected status 401 Unauthorized`,
 * `exceeded retry limit, last status: 429 Too Many Requests`, `stream disconnected before completion`).
 * Rows are tried in order: the first match wins, so more specific rows come first.
 */
const codexErrorPatterns: readonly ErrorPattern[] = [
  // `resume` of a session another codex process is writing (two resumes of one run at once): codex exits at once,
  // `Error: thread/resume: thread/resume failed: thread <id> already has an active writer (code -32600)`.
  {
    pattern: /thread [0-9a-f-]+ already has an active writer/i,
    category: 'engine_crash',
    code: 'ENGINE_SESSION_BUSY',
    onExit: true,
  },
  {
    pattern: /\b401\b|unauthori[sz]ed|invalid[ _-]?api[ _-]?key|incorrect api key|missing bearer/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  {
    pattern: /\b429\b|rate[ _-]?limit|too many requests|quota exceeded/i,
    category: 'rate_limit',
    code: 'ENGINE_RATE_LIMITED',
  },
  {
    pattern: /model metadata|model[^\n]{0,80}(?:not found|does not exist)|unknown model|unsupported model/i,
    category: 'model',
    code: 'ENGINE_MODEL_UNAVAILABLE',
  },
  {
    pattern: /context[ _-]?window|context[ _-]?length|maximum context|too many tokens/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  // Checked before `network`: a stream closed early is a wire-protocol break, not an unreachable host.
  { pattern: /stream closed before response\.completed/i, category: 'protocol', code: 'ENGINE_PROTOCOL_ERROR' },
  {
    pattern:
      /stream disconnected|connection refused|error sending request|connection reset|timed out connecting|dns error/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
];

/** The codex facts. */
export const codexFacts: EngineFacts = {
  id: 'codex',
  executableName: 'codex',
  packageName: '@openai/codex',
  liveEnvKeys: ['OPENAI_API_KEY', 'CODEX_API_KEY', 'OPENAI_BASE_URL'],
  stdin: 'ignore',
  skillRoot: CODEX_SKILL_ROOT,
  tools: codexTools,
  errorPatterns: codexErrorPatterns,
  modelFlag: CODEX_MODEL_FLAG,
  resumeFlags: CODEX_RESUME_FLAGS,
  nativeResumeCommand: CODEX_NATIVE_RESUME_COMMAND,
  turnScopedIds: CODEX_TURN_SCOPED_IDS,
  createParser: createCodexParser,
};
