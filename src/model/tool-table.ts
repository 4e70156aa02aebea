/**
 * How an engine's own tools take the script's intents (`shell`, `write_file`, `use_skill`): the tool names and
 * argument shapes a wire renders for that engine. The tables themselves live with their engines
 * (`src/engines/<id>/tools.ts`); the model server knows none of them by name. It is handed the tables of the engines
 * it serves (`listenModelServer({ tools })`; `startModelServer` gives every registered engine's). A wire
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
  /**
   * How the engine waits for a shell command still running when its shell tool returned (codex's `exec_command`
   * yields after 10 s with a session id): the tool that polls it and the output that says it still runs. A `shell`
   * turn is followed by polls until the output no longer says so ({@link MAX_SHELL_POLLS} at most), unless the turn
   * says `wait: false`. Absent: the engine's shell tool returns only when the command has ended.
   */
  readonly poll?: ShellPoll;
}

/** The poll of a running shell command (see {@link EngineToolTable.poll}). */
export interface ShellPoll {
  /** The tool that polls (`write_stdin`). */
  readonly tool: string;
  /** The argument that names the running process (`session_id`), given the number read by `running`. */
  readonly sessionKey: string;
  /** Constant arguments of every poll (`{chars: '', yield_time_ms: 30000}`: write nothing, wait up to 30 s). */
  readonly args: Readonly<Record<string, unknown>>;
  /** Matches a tool output whose process still runs; group 1 is its session number. */
  readonly running: RegExp;
}

/**
 * Most polls of one shell turn before the script moves on (the call then ends up `abandoned`): with codex's 30 s
 * poll, 20 polls wait ten minutes, the default attempt timeout.
 */
export const MAX_SHELL_POLLS = 20;

/** Prefix of the call id of every poll the server makes: polls are not script turns, so turn counting skips them. */
export const POLL_CALL_PREFIX = 'call_poll_';

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
 * `tables` ordered by how well each fits the tools a request offers, best first (stable): a table gains one for each
 * of its own tools the request offers (its first shell tool, its write and skill tools) and loses one for each it does
 * not. Engines of one wire share tool names (opencode and copilot both offer `bash` and `skill`, with different
 * arguments), so the table of the engine that sent the request must come first, not the first registered.
 */
export function tablesByFit<
  T extends Partial<Pick<EngineToolTable, 'shell'>> & Pick<EngineToolTable, 'write' | 'skill'>,
>(tables: readonly T[], offered: readonly string[]): T[] {
  if (tables.length < 2) return [...tables];
  const score = (table: T): number => {
    const own = [table.shell?.[0]?.tool, table.write?.tool, table.skill?.tool];
    return own.reduce((sum, tool) => (tool === undefined ? sum : sum + (offered.includes(tool) ? 1 : -1)), 0);
  };
  return tables
    .map((table, index) => ({ table, index, fit: score(table) }))
    .sort((a, b) => b.fit - a.fit || a.index - b.index)
    .map((entry) => entry.table);
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
  tables = tablesByFit(tables, offered);
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
