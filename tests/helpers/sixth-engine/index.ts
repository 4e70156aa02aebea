/**
 * A throwaway sixth engine, registered at run time by tests/contract/engine-registry.contract.test.ts to show that
 * one registry entry is all the harness needs: its CLI is `sixth-agent.mjs` (a real process speaking OpenAI Chat
 * Completions to the scripted model and printing JSON lines), its facts (parser, tool table) and adapter are below. Nothing
 * outside this folder names it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { EngineAdapter, EngineFacts, EngineParser, ParserOutput } from '../../../src/engines/engine.js';
import { diag, isObject, str, int } from '../../../src/engines/parse-helpers.js';
import type { EngineEntry } from '../../../src/engines/registry.js';
import type { EngineToolTable } from '../../../src/model/tool-table.js';

/** The sixth engine's id. */
export const SIXTH_ID = 'sixth';

/** Its CLI, to be installed as `sixth-agent` where the harness looks for executables. */
export const SIXTH_CLI = path.join(import.meta.dirname, 'sixth-agent.mjs');

/** How the scripted model calls its tools: `run {cmd}`, and `put {path, text}` for `write_file`. */
export const sixthTools: EngineToolTable = {
  engine: SIXTH_ID,
  wire: 'openai-chat',
  shell: [{ tool: 'run', commandKey: 'cmd' }],
  write: { tool: 'put', pathKey: 'path', contentKey: 'text', absolute: false },
};

/** Parses the CLI's JSON lines; never throws. */
export function createSixthParser(): EngineParser {
  return {
    line(stream, text): ParserOutput[] {
      if (stream !== 'stdout' || text.trim() === '') return [];
      let event: unknown;
      try {
        event = JSON.parse(text);
      } catch {
        return [diag('STREAM_PARSE_ERROR', `not a JSON line: ${text.slice(0, 80)}`)];
      }
      if (!isObject(event)) return [diag('STREAM_PARSE_ERROR', 'a JSON line that is not an object')];
      const id = str(event.id);
      switch (event.type) {
        case 'session':
          return id ? [{ type: 'engine.session', session_id: id }, { type: 'engine.turn.started' }] : [];
        case 'tool':
          return [
            {
              type: 'engine.tool.call',
              call_id: id ?? '',
              kind: event.name === 'put' ? 'file_change' : 'shell',
              name: str(event.name) ?? '',
              input: event.input ?? null,
            },
          ];
        case 'result': {
          const exit = int(event.exit);
          return [
            {
              type: 'engine.tool.result',
              call_id: id ?? '',
              status: exit === 0 ? 'completed' : 'failed',
              output: str(event.output),
              exit_code: exit,
            },
          ];
        }
        case 'message':
          return [{ type: 'engine.assistant.message', message_id: 'm', text: str(event.text) ?? '', final: true }];
        case 'end':
          return [
            {
              type: 'engine.turn.end',
              status: event.status === 'failed' ? 'failed' : 'completed',
              error: str(event.error),
            },
          ];
        default:
          return [diag('STREAM_PARSE_ERROR', `unknown event type ${JSON.stringify(event.type)}`, 'info')];
      }
    },
    end: () => [],
  };
}

/** Its facts: what translating its output and the scripted model server need. */
export const sixthFacts: EngineFacts = {
  id: SIXTH_ID,
  executableName: 'sixth-agent',
  packageName: null,
  liveEnvKeys: [],
  stdin: 'ignore',
  skillRoot: '.sixth/skills',
  tools: sixthTools,
  errorPatterns: [{ pattern: /HTTP 429|rate limit/i, category: 'rate_limit', code: 'ENGINE_RATE_LIMITED' }],
  modelFlag: '--model',
  resumeFlags: [{ names: ['--model'], value: true }],
  createParser: createSixthParser,
};

/** The full adapter. */
export const sixthEngine: EngineAdapter = {
  ...sixthFacts,
  async prepare(ctx) {
    const home = path.join(ctx.agentHome, '.sixth');
    fs.mkdirSync(home, { recursive: true });
    return {
      env: {
        SIXTH_HOME: home,
        ...(ctx.modelBaseUrl && ctx.modelMode !== 'live' ? { SIXTH_BASE_URL: ctx.modelBaseUrl } : {}),
      },
      configRoots: [home],
      leadingArgs: [],
      configInjection: { engine: SIXTH_ID, config_path: home, profile: null },
      trust: null,
      cleanup: async () => undefined,
    };
  },
  buildStartArgs: (request) =>
    request.passthrough.length > 0 ? [...request.passthrough] : ['run', '--json', request.prompt ?? ''],
  buildResumeArgs: (request) => ['run', '--json', '--session', request.sessionId, request.message],
};

/** Its registry entry: the one line a built-in engine has in `src/engines/registry.ts`. */
export const sixthEntry: EngineEntry = {
  id: SIXTH_ID,
  facts: async () => sixthFacts,
  adapter: async () => sixthEngine,
};
