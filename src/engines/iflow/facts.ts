/**
 * What iFlow CLI (no package served here: found on the managed prefix or PATH) is, as data: each fact declared once
 * here, and the adapter (`index.ts`) spreads them. Light (no config writer, no TOML, no agent options), so the registry
 * loads it alone for `translate` (parser, error patterns) and for the scripted model server (tool table).
 */
import type { EngineToolTable } from '../../model/tool-table.js';
import type { EngineFacts, ErrorPattern } from '../engine.js';
import { IFLOW_MODEL_FLAG, IFLOW_RESUME_FLAGS } from './command.js';
import { createIflowParser } from './parse.js';

/** Where iFlow finds project skills: `<cwd>/.iflow/skills` (seed 001, Decision 10). */
const IFLOW_SKILL_ROOT = '.iflow/skills';

/**
 * iFlow CLI's tools as the scripted model server calls them (OpenAI Chat Completions). iFlow CLI is a fork of
 * gemini-cli and names its shell tool as gemini does, `run_shell_command {command}` (from recordings of others: no
 * iFlow CLI is served here to capture one); another offered shell-like tool is used when that one is not. Its
 * file-writing and skill tools are not relied on: `write_file` and `use_skill` run as shell commands.
 */
const iflowTools: EngineToolTable = {
  engine: 'iflow',
  wire: 'openai-chat',
  shell: [{ tool: 'run_shell_command', commandKey: 'command' }],
  shellPattern: /shell|bash|exec|command/i,
};

/**
 * iFlow error messages and what they mean (from recorded stderr of 0.5.x and its OpenAI-compatible backend).
 */
const iflowErrorPatterns: readonly ErrorPattern[] = [
  {
    pattern: /\b401\b|unauthori[sz]ed|invalid api key|api key is invalid/i,
    category: 'auth',
    code: 'ENGINE_AUTH_FAILED',
  },
  { pattern: /\b429\b|rate limit|too many requests|quota/i, category: 'rate_limit', code: 'ENGINE_RATE_LIMITED' },
  { pattern: /model .*not (found|exist)|\b404\b/i, category: 'model', code: 'ENGINE_MODEL_UNAVAILABLE' },
  {
    pattern: /context (length|window)|too many tokens|maximum context/i,
    category: 'context_length',
    code: 'ENGINE_CONTEXT_LENGTH_EXCEEDED',
  },
  {
    pattern: /fetch failed|econnrefused|enotfound|error when talking to iflow api|retrying with backoff/i,
    category: 'network',
    code: 'ENGINE_NETWORK_ERROR',
  },
  { pattern: /generate data error/i, category: 'model', code: 'ENGINE_GENERATION_FAILED' },
];

/** The iflow facts. */
export const iflowFacts: EngineFacts = {
  id: 'iflow',
  executableName: 'iflow',
  packageName: null,
  liveEnvKeys: ['IFLOW_API_KEY', 'IFLOW_apiKey', 'IFLOW_baseUrl', 'IFLOW_modelName'],
  stdin: 'ignore',
  skillRoot: IFLOW_SKILL_ROOT,
  tools: iflowTools,
  errorPatterns: iflowErrorPatterns,
  modelFlag: IFLOW_MODEL_FLAG,
  resumeFlags: IFLOW_RESUME_FLAGS,
  createParser: createIflowParser,
};
