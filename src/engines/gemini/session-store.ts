/**
 * Recovers an interactive gemini attempt from gemini-cli's own chat recording. The TUI (a live terminal attempt)
 * prints no stream-json events, but gemini-cli 0.61.0 records every chat in the managed home, observed on scripted
 * interactive runs of the pinned CLI (`gemini -i "<prompt>"` on a PTY):
 *
 * - `~/.gemini/tmp/<project id>/.project_root` holds the project's directory (the cwd), and
 *   `~/.gemini/projects.json` maps that directory to the id (a slug of the run dir's name);
 * - `~/.gemini/tmp/<project id>/chats/session-<YYYY-MM-DDTHH-mm>-<8 hex>.jsonl` is one chat: a first line
 *   `{sessionId, projectHash, startTime, lastUpdated, kind: "main"}`, then message records `{id, timestamp, type:
 *   user|gemini|info|error|warning, content, toolCalls?, tokens?}` appended as they happen (a message appended again
 *   under the same id replaces the earlier copy; a tool call is `{id, name, args, status: success|error|cancelled,
 *   result: [{functionResponse: {response: {output}}}]}`), and `{"$set": {…}}` lines that update the metadata (the session
 *   context sent to the model is one, not a typed message).
 *
 * The chat of this run dir written during the attempt gives the session id (so the run can be resumed by handle) and
 * the turn's events: a typed message opens a turn, a `gemini` message with text and no tool calls ends it. Never
 * throws.
 */
import { assertAgentPathSafe } from '../../runtime/agent-writable.js';
import fs from 'node:fs';
import path from 'node:path';
import type { ParsedEvent } from '../../protocol/index.js';
import { newestFile, readJsonRecordsSync, recoveredFrom } from '../session-recovery.js';
import type { AcpLoadContext, ParserOutput, SessionRecoveryContext } from '../engine.js';
import { readInputBytesSync } from '../../runtime/bounded-input.js';
import { geminiToolKind } from './parse.js';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The project dirs under `tmp/` whose `.project_root` is `cwd`. */
function projectDirsOf(tmpDir: string, cwd: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(tmpDir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(tmpDir, entry.name))
    .filter((dir) => {
      try {
        // In the engine's home, which the agent can write: a FIFO there is skipped, never waited on.
        const file = path.join(dir, '.project_root');
        return (
          readInputBytesSync(file, { what: 'gemini project root', maxBytes: 64 * 1024 })
            .toString('utf8')
            .trim() === cwd
        );
      } catch {
        return false;
      }
    });
}

/** Chat files (`chats/session-*.jsonl`) of `projectDir` modified since `since` (ms). */
function chatFiles(projectDir: string, since: number): string[] {
  const chats = path.join(projectDir, 'chats');
  let names: string[];
  try {
    names = fs.readdirSync(chats);
  } catch {
    return [];
  }
  return names
    .filter((name) => /^session-.*\.jsonl$/.test(name))
    .map((name) => path.join(chats, name))
    .filter((file) => (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) >= since);
}

/** The session id a chat file opens with (its first line), when it is a main chat. */
function sessionOf(file: string): string | null {
  for (const record of readJsonRecordsSync(file, 'gemini chat')) {
    const main = record.kind === undefined || record.kind === 'main';
    return main && typeof record.sessionId === 'string' ? record.sessionId : null;
  }
  return null;
}

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content)
    ? content.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('')
    : '';
}

/**
 * The output of a tool call record: the `output` (or `error`) of the function response sent back to the model, else
 * the whole result. (`resultDisplay` is what the TUI drew, terminal cells for a shell call: not the output.)
 */
function toolOutput(call: Json): string | null {
  const parts = Array.isArray(call.result) ? call.result.filter(isObject) : [];
  const texts: string[] = [];
  for (const part of parts) {
    const response = isObject(part.functionResponse) ? part.functionResponse.response : undefined;
    if (!isObject(response)) continue;
    if (typeof response.output === 'string') texts.push(response.output);
    else if (typeof response.error === 'string') texts.push(response.error);
  }
  if (texts.length > 0) return texts.join('\n');
  if (typeof call.resultDisplay === 'string') return call.resultDisplay;
  return call.result === undefined || call.result === null ? null : JSON.stringify(call.result);
}

/** Events of one tool call record: the call, and its result once it has one. */
function toolEvents(call: Json, index: number): ParsedEvent[] {
  const callId = typeof call.id === 'string' ? call.id : `tool_${index}`;
  const name = typeof call.name === 'string' ? call.name : 'tool';
  const out: ParsedEvent[] = [
    { type: 'engine.tool.call', call_id: callId, kind: geminiToolKind(name), name, input: call.args ?? null },
  ];
  const status = call.status;
  if (status === 'success' || status === 'error' || status === 'cancelled') {
    out.push({
      type: 'engine.tool.result',
      call_id: callId,
      status: status === 'success' ? 'completed' : status === 'cancelled' ? 'declined' : 'failed',
      output: toolOutput(call),
      exit_code: null,
    });
  }
  return out;
}

/** Parser outputs of one chat's records (the first line, then messages), the last copy of each message counting. */
export function* geminiChatEvents(records: Iterable<Json>, sessionId: string): Generator<ParserOutput> {
  const messages = new Map<string, Json>();
  for (const record of records) {
    if (typeof record.id === 'string' && typeof record.type === 'string') messages.set(record.id, record);
  }
  yield { type: 'engine.session', session_id: sessionId };
  let turnOpen = false;
  let tools = 0;
  for (const [id, message] of messages) {
    if (message.type === 'user') {
      if (!turnOpen) yield { type: 'engine.turn.started' };
      turnOpen = true;
    } else if (message.type === 'gemini') {
      const said = text(message.content);
      if (said) yield { type: 'engine.assistant.message', message_id: id, text: said, final: true };
      const calls = Array.isArray(message.toolCalls) ? message.toolCalls.filter(isObject) : [];
      for (const call of calls) yield* toolEvents(call, tools++);
      if (said && calls.length === 0 && turnOpen) {
        turnOpen = false;
        yield { type: 'engine.turn.end', status: 'completed', error: null };
      }
    } else if (message.type === 'error') {
      yield { type: 'engine.error', message: text(message.content) || 'gemini recorded an error', fatal: false };
    }
  }
}

/**
 * The events of the chat gemini recorded for `runDir` since the attempt started, or none: the newest main chat of
 * the project whose `.project_root` is the run dir.
 */
export async function recoverGeminiSession(ctx: SessionRecoveryContext): Promise<Iterable<ParserOutput>> {
  const since = ctx.since.getTime() - 1000;
  const newest = newestFile(
    projectDirsOf(path.join(ctx.agentHome, '.gemini', 'tmp'), ctx.runDir)
      .flatMap((dir) => chatFiles(dir, since))
      .map((file) => ({ file, session: sessionOf(file) }))
      .filter((c): c is { file: string; session: string } => c.session !== null),
  );
  if (!newest) return [];
  return recoveredFrom(newest.file, geminiChatEvents(readJsonRecordsSync(newest.file, 'gemini chat'), newest.session));
}

/** A chat file named as gemini names a new one: its minute and the first 8 characters of its session id. */
const CHAT_NAME = /^session-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2})-([0-9A-Za-z_-]{8})\.jsonl$/;

/**
 * Moves the chat files of `sessionId` off the names gemini gives new chats, before its `session/load` (ACP). gemini
 * 0.61 starts a new chat record for the loaded session under `session-<current minute>-<8 chars of its id>.jsonl`: in
 * the minute the session was recorded in, that is the session's own file, which it appends a fresh record to, and
 * the load then answers "No previous sessions found for this project." Renamed to `session-<minute>-h<n>-<id>.jsonl`,
 * the file is still found (gemini reads every `session-*.jsonl` of the project and matches the id inside, and its
 * own check wants the name to end in `-<8 chars>.jsonl`) and the load goes on recording into it. Never throws: a
 * file it cannot move leaves gemini's own behaviour.
 */
export function setAsideChatNames(ctx: AcpLoadContext): void {
  const short = ctx.sessionId.slice(0, 8);
  for (const project of projectDirsOf(path.join(ctx.agentHome, '.gemini', 'tmp'), ctx.runDir)) {
    const chats = path.join(project, 'chats');
    let names: string[];
    try {
      // The run's home is the agent's: never rename through a link it planted (agent-writable.ts).
      assertAgentPathSafe(chats);
      names = fs.readdirSync(chats);
    } catch {
      continue;
    }
    for (const name of names) {
      const match = CHAT_NAME.exec(name);
      if (!match || match[2] !== short || sessionOf(path.join(chats, name)) !== ctx.sessionId) continue;
      for (let n = 1; n < 100; n += 1) {
        const target = path.join(chats, `session-${match[1]}-h${n}-${short}.jsonl`);
        if (fs.existsSync(target)) continue;
        try {
          fs.renameSync(path.join(chats, name), target);
        } catch {
          // Left as gemini named it.
        }
        break;
      }
    }
  }
}
