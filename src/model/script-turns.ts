/**
 * What the scripted model server does with a script at run time: picks the turn for a request (routes included),
 * renders intents as shell commands or native tool calls, and words the answer past the last turn; plus the turn
 * builders. No zod: the server loads this, not the script schemas (`script.ts`), which only parsing a script needs.
 */
import { AgentHarnessError } from '../errors/index.js';
import { DONE_MARKER } from '../protocol/versions.js';
import { expandTurns } from './branch.js';
import { followSkillContext } from './follow-skill.js';
import type { ModelScript, ModelTurn, PlayedTurn, ScriptRoute, TurnIntent } from './script.js';
import { tablesByFit, type EngineToolTable } from './tool-table.js';

export { DONE_MARKER };

/** POSIX single quotes: the shell sees the value literally. */
function quote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A plain skill name (no path separators or shell metacharacters). */
export const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The shell command a `write_file` intent runs: writes `content` to `path` exactly. */
export function writeFileCommand(path: string, content: string): string {
  return `printf '%s' ${quote(content)} > ${quote(path)}`;
}

/**
 * The shell command a `use_skill` intent runs: reads the skill's SKILL.md from the engine's skill root in the
 * working directory (every engine's skill root is `.<something>/skills`), which is how a shell-driven agent loads a
 * skill.
 */
export function useSkillCommand(name: string): string {
  if (!SKILL_NAME.test(name))
    throw new AgentHarnessError(
      'MODEL_SCRIPT_INVALID',
      `use_skill needs a plain skill name, not ${JSON.stringify(name)}.`,
    );
  return `cat .*/skills/${name}/SKILL.md`;
}

/**
 * The shell command an `mcp_tool` intent falls back to when the engine offers no such tool (MCP not configured,
 * the server failed to start): it says so and fails, so the attempt shows why.
 */
export function missingMcpToolCommand(server: string, tool: string): string {
  return `echo ${quote(`agent-harness: the engine offered no MCP tool ${tool} of server ${server}`)} >&2; exit 3`;
}

/** What {@link nativeIntentCall} reads of an engine's tool table (see `tool-table.ts`). */
export type NativeIntentTools = Pick<EngineToolTable, 'write' | 'skill'>;

/**
 * The working directory an engine states in its request (claude and opencode: `Working directory: /…`; qwen: `working
 * in the directory: /…`; a `<cwd>…</cwd>` element), or null.
 */
export function requestWorkingDirectory(body: unknown): string | null {
  // Read in the request's own strings, to the end of the line: a directory may hold spaces, quotes, backslashes.
  for (const text of stringsOf(body)) {
    const match =
      /[Ww]orking (?:in the )?directory:[ \t]*(\/[^\n]*)/.exec(text) ?? /<cwd>(\/[^<\n]*)<\/cwd>/.exec(text);
    if (match) return match[1]!.trimEnd();
  }
  return null;
}

/** Every string in a JSON value, depth first. */
function* stringsOf(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const item of value) yield* stringsOf(item);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) yield* stringsOf(item);
}

/**
 * The name under which an engine offers MCP tool `tool` of `server`: claude and codex `mcp__<server>__<tool>`,
 * opencode `<server>_<tool>`, copilot `<server>-<tool>`, gemini the bare tool name (`<server>__<tool>` when two servers clash); null when the
 * request offers none of them.
 */
export function mcpToolName(offered: readonly string[], server: string, tool: string): string | null {
  const candidates = [
    `mcp__${server}__${tool}`,
    `${server}__${tool}`,
    `${server}_${tool}`,
    `mcp_${server}_${tool}`,
    // copilot 1.0.102: `<server>-<tool>`.
    `${server}-${tool}`,
    tool,
  ];
  const found = candidates.find((name) => offered.includes(name));
  if (found) return found;
  // codex 0.169 offers MCP servers as deferred namespaces (`mcp__<server>`) and takes `mcp__<server>__<tool>` calls.
  return offered.includes(`mcp__${server}`) ? `mcp__${server}__${tool}` : null;
}

/**
 * The native tool call for a shell turn's intent, when the request offers that tool (and, for an absolute path,
 * the working directory is known); null means: run the shell command instead.
 */
export function nativeIntentCall(
  turn: { intent?: TurnIntent | undefined },
  offered: readonly string[],
  tables: NativeIntentTools | readonly NativeIntentTools[],
  cwd: string | null,
): { name: string; args: Record<string, unknown> } | null {
  const intent = turn.intent;
  if (!intent) return null;
  if (intent.kind === 'mcp_tool') {
    const name = mcpToolName(offered, intent.server, intent.tool);
    return name ? { name, args: intent.arguments } : null;
  }
  const list = Array.isArray(tables) ? (tables as readonly NativeIntentTools[]) : [tables as NativeIntentTools];
  // Only the table of the engine that sent the request: another engine's tool of the same name takes other arguments.
  const table = tablesByFit(list, offered)[0];
  if (!table) return null;
  if (intent.kind === 'use_skill' && table.skill && offered.includes(table.skill.tool))
    return { name: table.skill.tool, args: { [table.skill.nameKey]: intent.name } };
  if (
    intent.kind === 'write_file' &&
    table.write &&
    offered.includes(table.write.tool) &&
    (cwd || !table.write.absolute)
  ) {
    const file =
      table.write.absolute && !intent.path.startsWith('/') ? `${cwd!.replace(/\/+$/, '')}/${intent.path}` : intent.path;
    return { name: table.write.tool, args: { [table.write.pathKey]: file, [table.write.contentKey]: intent.content } };
  }
  return null;
}

/** The first route of `script` matching the request `body`, or null. */
export function matchRoute(script: ModelScript | null, body: unknown): ScriptRoute | null {
  if (!script?.routes || body === null || typeof body !== 'object') return null;
  const model = (body as { model?: unknown }).model;
  let text: string | null = null;
  for (const route of script.routes) {
    if (route.match.model !== undefined && route.match.model !== model) continue;
    if (route.match.contains !== undefined && !(text ??= JSON.stringify(body)).includes(route.match.contains)) continue;
    return route;
  }
  return null;
}

/** The reply of the default script (no script given): every turn gets it. */
export const DEFAULT_REPLY = 'Hello from the agent-harness scripted model.';

/** Builders for script turns. */
export const turns = {
  /** An assistant text reply; the turn ends and the agent waits for the user. */
  text: (text: string, options: { reasoning?: string } = {}): ModelTurn => ({
    type: 'text',
    text,
    ...(options.reasoning !== undefined ? { reasoning: options.reasoning } : {}),
  }),
  /**
   * One shell tool call, run to its end: where the engine's tool returns while the command still runs (codex), the
   * model polls it until it exits. `wait: false` answers the next turn at once (the call may end up `abandoned`).
   */
  shell: (command: string, options: { wait?: boolean } = {}): ModelTurn => ({
    type: 'shell',
    command,
    ...(options.wait !== undefined ? { wait: options.wait } : {}),
  }),
  /** A final message; with `done` (default) the done marker line is appended. */
  final: (text: string, options: { done?: boolean; reasoning?: string } = {}): ModelTurn => ({
    type: 'final',
    text,
    done: options.done ?? true,
    ...(options.reasoning !== undefined ? { reasoning: options.reasoning } : {}),
  }),
  /** An HTTP error in the vendor's error shape. */
  error: (status: number, message: string): ModelTurn => ({ type: 'error', status, message }),
  /** A stream that starts and then stalls: headers, then silence; after `ms` (default: never) the connection is cut. */
  stall: (ms?: number): ModelTurn => ({ type: 'stall', ...(ms !== undefined ? { ms } : {}) }),
  /** A 200 answer whose body is not valid SSE/JSON. */
  malformed: (): ModelTurn => ({ type: 'malformed' }),
  /** A 200 stream cut in the middle of its first event. */
  drop: (): ModelTurn => ({ type: 'drop' }),
  /** A tool call that writes `content` to `path` (a shell call on every engine). */
  writeFile: (path: string, content: string): ModelTurn => ({
    type: 'shell',
    command: writeFileCommand(path, content),
    intent: { kind: 'write_file', path, content },
  }),
  /** A tool call that loads skill `name` by reading its SKILL.md from the engine's skill root. */
  useSkill: (name: string): ModelTurn => ({
    type: 'shell',
    command: useSkillCommand(name),
    intent: { kind: 'use_skill', name },
  }),
  /**
   * `then` with probability `p`, else `otherwise`: a seeded draw (the script's `seed`, see `branch.ts`), the same on
   * every request of an attempt and for every run with the same seed.
   */
  branch: (p: number, then: readonly ModelTurn[], otherwise: readonly ModelTurn[] = []): ModelTurn => ({
    type: 'branch',
    p,
    turns: [...then],
    else: [...otherwise],
  }),
  /** `then` when the engine offered skill `name` in the request (named it before any model output), else `otherwise`. */
  ifSkillOffered: (name: string, then: readonly ModelTurn[], otherwise: readonly ModelTurn[] = []): ModelTurn => ({
    type: 'if_skill_offered',
    name,
    turns: [...then],
    else: [...otherwise],
  }),
  /**
   * The skill-following stand-in (see `follow-skill.ts`): loads skill `name` the engine's way unless the engine already
   * showed its body, runs the body's fenced shell steps in order, then finishes with the done marker; when the engine
   * never shows the body, a final message saying so (`SKILL_NOT_LOADED`) without the done marker.
   */
  followSkill: (name: string): ModelTurn => {
    if (!SKILL_NAME.test(name))
      throw new AgentHarnessError(
        'MODEL_SCRIPT_INVALID',
        `followSkill needs a plain skill name, not ${JSON.stringify(name)}.`,
      );
    return { type: 'follow_skill', name };
  },
  /** A call of tool `tool` of MCP server `server` (as the engine names it); a failing shell call when not offered. */
  mcpTool: (server: string, tool: string, args: Record<string, unknown> = {}): ModelTurn => ({
    type: 'shell',
    command: missingMcpToolCommand(server, tool),
    intent: { kind: 'mcp_tool', server, tool, arguments: args },
  }),
};

/** What the server answers for a request: a scripted turn, or why there is none. */
export type TurnSelection =
  | { kind: 'turn'; index: number; turn: PlayedTurn }
  | { kind: 'exhausted'; index: number; total: number };

/**
 * Picks the turn for a request whose history holds `modelTurns` model outputs: turn index = that count.
 * Nothing is remembered between requests, so retries of the same request get the same turn, and a process
 * restart or a resumed session (whose request carries the full history) continues where the script was.
 * `null` is the default script: every request gets {@link DEFAULT_REPLY}, it never runs out. Dynamic turns
 * (`branch`, `if_skill_offered`, `follow_skill`) are resolved for this request first (see `branch.ts`), from the
 * script's seed, the request `body` and `tools` (the tool tables of the engines on the request's wire).
 */
export function selectTurn(
  script: ModelScript | null,
  modelTurns: number,
  body?: unknown,
  tools: readonly EngineToolTable[] = [],
): TurnSelection {
  if (!script) return { kind: 'turn', index: modelTurns, turn: { type: 'text', text: DEFAULT_REPLY } };
  const list = expandTurns(matchRoute(script, body)?.turns ?? script.turns, script, () => ({
    ...followSkillContext(body, tools),
    modelTurns,
  }));
  const turn = list[modelTurns];
  return turn
    ? { kind: 'turn', index: modelTurns, turn }
    : { kind: 'exhausted', index: modelTurns, total: list.length };
}

/** The request a script ran out for, as {@link exhaustedMessage} names it. */
export interface ExhaustedRequest {
  /** HTTP method and path (`POST /v1/responses`). */
  method: string;
  path: string;
  /** The wire API that took the request (`openai-responses`, `anthropic-messages`, …). */
  wire: string;
  /** The request body (its `model` and, for `contains` routes, its text are what routes match on). */
  body: unknown;
}

/** A route's match, as a script writes it: `{"model":"intent-small"}`. */
function describeMatch(route: ScriptRoute): string {
  return JSON.stringify(route.match);
}

/**
 * Message of the 400 answered past the last turn; `index` is 0-based, the message counts from 1. With `context`
 * (the server's request and script), it names the request (method, path, wire, model) and, when the script has
 * routes, the route it used — or that it matched none of them, listing each route's match.
 */
export function exhaustedMessage(
  index: number,
  total: number,
  context?: { script: ModelScript | null; request: ExhaustedRequest },
): string {
  const advice =
    'Turns are numbered across the whole session (a resumed attempt continues after the turns already used), so add the next turns rather than replacing the script: run.resume(message, { turns }) or model.append(...turns) in a test, more turns in the --script file on the CLI.';
  if (!context) return `script exhausted: request needs turn ${index + 1} but the script has ${total} turns. ${advice}`;
  const { script, request } = context;
  const model = (request.body as { model?: unknown } | null)?.model;
  const what = `${request.method} ${request.path} (${request.wire} wire${typeof model === 'string' ? `, model ${JSON.stringify(model)}` : ''})`;
  const routes = script?.routes ?? [];
  if (routes.length === 0)
    return `script exhausted: request needs turn ${index + 1} but the script has ${total} turns. ${advice} The request: ${what}.`;
  const route = matchRoute(script, request.body);
  if (route) {
    const n = routes.indexOf(route) + 1;
    return `script exhausted: request ${what} matched route ${n} of ${routes.length} (${describeMatch(route)}), which has ${total} turns; the request needs turn ${index + 1}. Add turns to that route. ${advice}`;
  }
  const listed = routes.map((r, i) => `route ${i + 1} ${describeMatch(r)}`).join(', ');
  return `no scripted route matched request ${what}: it matched none of the script's ${routes.length} routes (${listed}), so it fell back to the main \`turns\`, which has ${total} turns; the request needs turn ${index + 1}. Add a route whose match fits this request (its \`model\`, or a \`contains\` substring of its body), or turns to the main list.`;
}

/** The text a final turn sends: with the done marker line when `done`. */
export function finalText(turn: Extract<ModelTurn, { type: 'final' }>): string {
  if (!turn.done || turn.text.includes(DONE_MARKER)) return turn.text;
  return `${turn.text}\n${DONE_MARKER}`;
}
