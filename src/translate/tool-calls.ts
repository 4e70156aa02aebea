/**
 * Tool calls normalized across engines, so one assertion means the same on every engine. These are the FCMP
 * translator's helpers (`fcmp.ts` is the one place they are applied; every view reads the result from FCMP through
 * `fcmp-tool-calls.ts`):
 * `command` is the shell command the agent asked for, with the engine's own wrapper removed (codex reports
 * `/bin/bash -lc '…'`); a shell call's `exitCode` is a number whenever any evidence has it, and its status
 * is derived from it (0 → completed, otherwise failed).
 *
 * Where the exit code comes from, by engine (0.169 / 2.1.197 / 0.61 / 1.18.33, scripted runs on this machine):
 * codex and opencode put it in the result event; claude in the result event and as `Exit code N` in the output;
 * gemini's stream-json `tool_result` has none — only the function response it sends back to the model
 * (`Exit Code: N` in `functionResponse.response.output`) has it, so the model request log is consulted.
 */
import { exitCodeFromText } from '../engines/parse-helpers.js';

/** A tool call joined with its result, normalized (as `fcmp-tool-calls.ts` reads it from FCMP). */
export interface NormalizedToolCall {
  callId: string;
  kind: string;
  name: string;
  input: unknown;
  /** The shell command without the engine's wrapper; null for a non-shell call. */
  command: string | null;
  /**
   * `completed`, `failed`, `declined`, `in_progress`; with no result seen, `running` while the attempt runs and
   * `abandoned` once it ended (the call's process outlived the turn), or null when the caller did not say.
   */
  status: string | null;
  output: string | null;
  exitCode: number | null;
}

/** `bash -lc '…'`, `/bin/sh -c "…"`, `zsh -lc …`: the wrapper codex (and some shells) put around a command. */
const SHELL_WRAPPER = /^(?:\/(?:usr\/)?bin\/)?(?:ba|z|da)?sh\s+-l?c\s+([\s\S]+)$/;

/** Undoes one level of POSIX shell quoting (`'a'\''b'` → `a'b`, `"x \"y\""` → `x "y"`); null when not quoted. */
function unquote(word: string): string | null {
  if (/^'(?:[^']|'\\'')*'$/.test(word)) return word.slice(1, -1).replace(/'\\''/g, "'");
  if (/^"(?:[^"\\]|\\.)*"$/.test(word)) return word.slice(1, -1).replace(/\\(["\\$`])/g, '$1');
  return null;
}

/** The shell command of a tool input (`{command}` as a string or an argv array), wrapper removed. */
export function shellCommandOf(input: unknown): string | null {
  const raw =
    (input as { command?: unknown; cmd?: unknown } | null)?.command ?? (input as { cmd?: unknown } | null)?.cmd;
  let command: string | null = null;
  if (typeof raw === 'string') command = raw;
  else if (Array.isArray(raw) && raw.every((part) => typeof part === 'string')) {
    const parts = raw as string[];
    const wrapped = parts.length === 3 && /(?:^|\/)(?:ba|z|da)?sh$/.test(parts[0]!) && /^-l?c$/.test(parts[1]!);
    return wrapped ? parts[2]! : parts.join(' ');
  }
  if (command === null) return null;
  const match = SHELL_WRAPPER.exec(command.trim());
  return match ? (unquote(match[1]!.trim()) ?? command) : command;
}

/**
 * Exit codes stated in the tool results an engine sent back to the model (function responses, tool_result
 * blocks, function_call_output items, tool messages), by the call id the engine gave them.
 */
export function exitCodesFromModelRequests(requests: readonly { body: unknown }[]): Map<string, number> {
  const codes = new Map<string, number>();
  const visit = (value: unknown, depth: number): void => {
    if (depth > 12 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    const node = value as Record<string, unknown>;
    const response = node.functionResponse as { id?: unknown; response?: { output?: unknown } } | undefined;
    if (response && typeof response.id === 'string') record(response.id, response.response?.output, geminiSuccess);
    if (node.type === 'tool_result' && typeof node.tool_use_id === 'string') record(node.tool_use_id, node.content);
    if (node.type === 'function_call_output' && typeof node.call_id === 'string') record(node.call_id, node.output);
    if (node.role === 'tool' && typeof node.tool_call_id === 'string') record(node.tool_call_id, node.content);
    for (const child of Object.values(node)) visit(child, depth + 1);
  };
  const record = (id: string, output: unknown, onNoCode?: (text: string) => number | null): void => {
    const text = typeof output === 'string' ? output : JSON.stringify(output ?? '');
    const code = exitCodeFromText(text) ?? onNoCode?.(text) ?? null;
    if (code !== null) codes.set(id, code);
  };
  for (const request of requests) visit(request.body, 0);
  return codes;
}

/**
 * gemini 0.61's shell result states `Exit Code: N` only when N is not 0; a finished command's result always ends
 * with `Process Group PGID: <pid>`, and a killed or failed one says `Signal:` or `Error:`. So a PGID line with none
 * of those is exit 0.
 */
function geminiSuccess(text: string): number | null {
  return /(?:^|\n)Process Group PGID: \d+/.test(text) && !/(?:^|\n)(?:Error|Signal):/.test(text) ? 0 : null;
}

/** The exit code recorded for `callId` in `codes`, matching ids an engine prefixes (`run_shell_command__<id>`). */
function lookup(codes: ReadonlyMap<string, number>, callId: string): number | null {
  const exact = codes.get(callId);
  if (exact !== undefined) return exact;
  for (const [id, code] of codes) if (callId.endsWith(`__${id}`) || callId.endsWith(`#${id}`)) return code;
  return null;
}

/** A result's status and exit code, made consistent for shell calls. */
export function normalizeResult(
  call: Pick<NormalizedToolCall, 'kind' | 'callId'>,
  result: { status: string; output: string | null; exit_code: number | null },
  modelExitCodes: ReadonlyMap<string, number> = new Map(),
): Pick<NormalizedToolCall, 'status' | 'output' | 'exitCode'> {
  if (call.kind !== 'shell') return { status: result.status, output: result.output, exitCode: result.exit_code };
  const exitCode = result.exit_code ?? exitCodeFromText(result.output) ?? lookup(modelExitCodes, call.callId);
  const status =
    exitCode === null || result.status === 'declined' || result.status === 'in_progress'
      ? result.status
      : exitCode === 0
        ? 'completed'
        : 'failed';
  return { status, output: result.output, exitCode };
}
