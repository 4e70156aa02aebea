/**
 * The diagnostic an attempt carries when the engine reports that a declared MCP server was not ready (it failed to
 * start, or was still connecting when the turn began): `MCP_SERVER_NOT_READY`, its message naming the server in a
 * fixed form so the completion judge can tell which server it was (an attempt whose script called a tool of that
 * server is not a success).
 */
import type { Diagnostic } from '../protocol/index.js';
import type { EngineParser, ParserOutput } from './engine.js';

/** The diagnostic code. */
export const MCP_SERVER_NOT_READY = 'MCP_SERVER_NOT_READY';

const NAMED = /^MCP server "([^"]+)" was not ready/;

/** The diagnostic for `server`, with what the engine said of it (`status`: `failed`, `pending`, a message). */
export function mcpNotReadyDiagnostic(server: string, status: string): Diagnostic {
  return {
    code: MCP_SERVER_NOT_READY,
    message: `MCP server "${server}" was not ready when the turn began (the engine reported: ${status}); its tools were not offered to the model. A slow server needs a longer startupTimeoutMs; a failing one, its command checked.`,
    level: 'error',
  };
}

/** The server an MCP_SERVER_NOT_READY diagnostic names, else null. */
export function mcpNotReadyServer(diagnostic: Diagnostic): string | null {
  if (diagnostic.code !== MCP_SERVER_NOT_READY) return null;
  return NAMED.exec(diagnostic.message)?.[1] ?? null;
}

/**
 * The scripted model's stand-in for an MCP tool the engine did not offer (`missingMcpToolCommand` in
 * src/model/script.ts): `agent-harness: the engine offered no MCP tool <tool> of server <server>`.
 */
const MISSING_TOOL = /agent-harness: the engine offered no MCP tool ([A-Za-z0-9_-]+) of server ([A-Za-z0-9_-]+)/;
/** The fixed part of {@link MISSING_TOOL}, looked for before the expression runs. */
const MISSING_TOOL_TEXT = 'the engine offered no MCP tool ';

/**
 * The first string in `value` (itself, or in its arrays and objects, a few levels down) that contains `text`, else
 * null: a shell call's command, searched without stringifying the call's input, once per call of a long stream.
 */
function stringHolding(value: unknown, text: string, depth = 0): string | null {
  if (typeof value === 'string') return value.includes(text) ? value : null;
  if (depth > 4 || typeof value !== 'object' || value === null) return null;
  // Walked in place (every shell call of every attempt passes here): no array of the values is made.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = stringHolding(value[i], text, depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const found = stringHolding((value as Record<string, unknown>)[key], text, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/**
 * `parser`, plus an MCP_SERVER_NOT_READY diagnostic (once per server) after a tool call that is the scripted model's
 * stand-in for a tool of a server the engine did not offer: the engine started the turn without that server's tools
 * (it was not ready, or failed), which gemini and opencode report nowhere in their streams.
 */
export function withMcpReadiness(parser: EngineParser): EngineParser {
  const reported = new Set<string>();
  const watch = (outputs: ParserOutput[]): ParserOutput[] => {
    // Without a diagnostic to add (nearly always), the parser's own array is returned: nothing is copied.
    let out: ParserOutput[] | undefined;
    for (let i = 0; i < outputs.length; i += 1) {
      const output = outputs[i]!;
      out?.push(output);
      if (output.type === 'diagnostic') {
        const server = mcpNotReadyServer(output.diagnostic);
        if (server) reported.add(server);
        continue;
      }
      // The scripted stand-in for a tool not offered is a shell command: no other call is searched for it.
      if (output.type !== 'engine.tool.call' || output.kind !== 'shell') continue;
      const missing = MISSING_TOOL.exec(stringHolding(output.input, MISSING_TOOL_TEXT) ?? '');
      if (!missing || reported.has(missing[2]!)) continue;
      reported.add(missing[2]!);
      out ??= outputs.slice(0, i + 1);
      out.push({
        type: 'diagnostic',
        diagnostic: mcpNotReadyDiagnostic(missing[2]!, `its tool ${missing[1]} was not offered to the model`),
      });
    }
    return out ?? outputs;
  };
  return { line: (stream, text) => watch(parser.line(stream, text)), end: () => watch(parser.end()) };
}
