/**
 * How an engine's own tools take the script's intents (`shell`, `write_file`, `use_skill`): the tool names and
 * argument shapes a wire renders for that engine. The tables themselves live with their engines
 * (`src/engines/<id>/tools.ts`); the model server knows none of them by name. It is handed the tables of the engines
 * it serves (`startModelServer({ tools })`), or, when none are given, the tables of every registered engine. A wire
 * spoken by several engines (OpenAI Chat: opencode and iflow) picks, per request, the table whose tools the request
 * offers.
 */
import type { WireApiId } from './wire-api.js';

/** One shell tool: its name and how it takes the command. */
export interface ShellTool {
  /** The tool's name (`exec_command`, `Bash`, `run_shell_command`). */
  readonly tool: string;
  /** The argument that holds the command (`cmd`, `command`). */
  readonly commandKey: string;
  /** The command is given as an argv: these words, then the command (`['bash', '-lc']`). Absent: a string. */
  readonly argv?: readonly string[];
  /** Constant arguments sent with every call (claude's and opencode's `description`). */
  readonly extra?: Readonly<Record<string, string>>;
}

/** The tools of one engine for the script's intents, as its wire renders them. */
export interface EngineToolTable {
  /** The engine these are the tools of (for messages and tests). */
  readonly engine: string;
  /** The wire API the engine speaks. */
  readonly wire: WireApiId;
  /**
   * Shell tools in order of preference (at least one): the first the request offers is called; when none is
   * offered, the first is (the one the pinned CLI has).
   */
  readonly shell: readonly ShellTool[];
  /** An offered tool whose name matches is called like `shell[0]` when none of `shell` is offered. */
  readonly shellPattern?: RegExp;
  /** The engine's own file-writing tool for `write_file`; absent: a shell command writes the file. */
  readonly write?: {
    readonly tool: string;
    readonly pathKey: string;
    readonly contentKey: string;
    readonly absolute: boolean;
  };
  /** The engine's own skill tool for `use_skill`; absent: a shell command reads the SKILL.md. */
  readonly skill?: { readonly tool: string; readonly nameKey: string };
}

/** A tool call as a wire renders it. */
export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
}

/** The call of `shell` with `command`. */
function callOf(shell: ShellTool, name: string, command: string): ToolCall {
  return { name, args: { [shell.commandKey]: shell.argv ? [...shell.argv, command] : command, ...shell.extra } };
}

/**
 * The shell call for `command` among `tables` (the engines of one wire) and the tools a request offers: an offered
 * shell tool of any table, else an offered tool matching a table's pattern, else the first table's first shell tool.
 * No table at all (no engine speaks the wire): a `shell {command}` call.
 */
export function shellToolCall(
  tables: readonly EngineToolTable[],
  offered: readonly string[],
  command: string,
): ToolCall {
  for (const table of tables) {
    const shell = table.shell.find((candidate) => offered.includes(candidate.tool));
    if (shell) return callOf(shell, shell.tool, command);
  }
  for (const table of tables) {
    const other = table.shellPattern ? offered.find((name) => table.shellPattern!.test(name)) : undefined;
    if (other && table.shell[0]) return callOf(table.shell[0], other, command);
  }
  const first = tables[0]?.shell[0];
  return first ? callOf(first, first.tool, command) : { name: 'shell', args: { command } };
}

/** The tables of the engines that speak `wire`, in registry order. */
export function tablesOfWire(tables: readonly EngineToolTable[], wire: WireApiId): EngineToolTable[] {
  return tables.filter((table) => table.wire === wire);
}
