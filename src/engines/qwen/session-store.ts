/**
 * Recovers an interactive qwen attempt from Qwen Code's own chat recording. The TUI prints no stream-json events,
 * but Qwen Code 0.24.4 records every session in `~/.qwen/projects/<cwd slug>/chats/<session id>.jsonl` (observed on
 * scripted runs of the pinned CLI), one JSON record per line, each with `uuid`, `sessionId`, `cwd`, `type`:
 *
 * - `user`: `message: {role: "user", parts: [{text}]}` (a typed prompt);
 * - `assistant`: `message: {role: "model", parts: [{text} | {functionCall: {id, name, args}}]}`;
 * - `tool_result`: `message: {role: "user", parts: [{functionResponse: {id, name, response: {output}}}]}`;
 * - `system` records (`attribution_snapshot`, `ui_telemetry`): bookkeeping.
 *
 * The records are fed to the stream-json parser (`parse.ts`) as the stream-json lines they mirror: a typed prompt
 * opens a turn as `system/init` would, an `assistant` record with text and no function call closes it as `result`
 * would. The file of this run dir (its records' `cwd`) written during the attempt gives the session id, so the run
 * can be resumed by handle. Never throws.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ParserOutput, SessionRecoveryContext } from '../engine.js';
import { isObject, str, type Json } from '../parse-helpers.js';
import { newestFile, readJsonRecordsSync, recoveredFrom } from '../session-recovery.js';
import { createQwenParser } from './parse.js';

/** The parts of a record's message. */
function partsOf(record: Json): Json[] {
  const message = isObject(record.message) ? record.message : null;
  return message && Array.isArray(message.parts) ? message.parts.filter(isObject) : [];
}

/** Parser outputs of one chat: its records as the stream-json lines they mirror, through the qwen parser. */
export function* qwenSessionEvents(records: Iterable<Json>, sessionId: string): Generator<ParserOutput> {
  const parser = createQwenParser();
  const feed = (event: unknown) => parser.line('stdout', JSON.stringify(event));
  let turnOpen = false;
  for (const record of records) {
    if (record.type === 'user' && !turnOpen) {
      turnOpen = true;
      yield* feed({ type: 'system', subtype: 'init', session_id: sessionId });
    } else if (record.type === 'assistant') {
      const content = partsOf(record).flatMap((part): Json[] => {
        if (typeof part.text === 'string' && part.thought !== true) return [{ type: 'text', text: part.text }];
        const call = isObject(part.functionCall) ? part.functionCall : null;
        return call ? [{ type: 'tool_use', id: str(call.id), name: str(call.name), input: call.args ?? null }] : [];
      });
      yield* feed({ type: 'assistant', message: { id: str(record.uuid), content } });
      if (turnOpen && content.length > 0 && content.every((block) => (block as Json).type === 'text')) {
        turnOpen = false;
        yield* feed({ type: 'result', subtype: 'success', is_error: false, session_id: sessionId, usage: {} });
      }
    } else if (record.type === 'tool_result') {
      const content = partsOf(record).flatMap((part) => {
        const response = isObject(part.functionResponse) ? part.functionResponse : null;
        if (!response) return [];
        const output = isObject(response.response) ? response.response.output : undefined;
        return [
          {
            type: 'tool_result',
            tool_use_id: str(response.id),
            content: typeof output === 'string' ? output : JSON.stringify(output ?? null),
          },
        ];
      });
      yield* feed({ type: 'user', message: { content } });
    }
  }
  yield* parser.end();
}

/** The chat files under `projectsDir` modified since `sinceMs`. */
function chatFiles(projectsDir: string, sinceMs: number): string[] {
  let projects: fs.Dirent[];
  try {
    projects = fs.readdirSync(projectsDir, { withFileTypes: true });
  } catch {
    return [];
  }
  return projects
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const chats = path.join(projectsDir, entry.name, 'chats');
      try {
        return fs
          .readdirSync(chats)
          .filter((name) => name.endsWith('.jsonl'))
          .map((name) => path.join(chats, name));
      } catch {
        return [];
      }
    })
    .filter((file) => (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) >= sinceMs);
}

/** The session id of `file` when its first record with a cwd names `runDir`; null otherwise. */
function sessionOf(file: string, runDir: string): string | null {
  for (const record of readJsonRecordsSync(file, 'qwen chat')) {
    if (typeof record.cwd !== 'string') continue;
    return record.cwd === runDir ? str(record.sessionId) : null;
  }
  return null;
}

/** The events of the session qwen recorded for `runDir` since the attempt started, or none. */
export async function recoverQwenSession(ctx: SessionRecoveryContext): Promise<Iterable<ParserOutput>> {
  const candidates = chatFiles(path.join(ctx.agentHome, '.qwen', 'projects'), ctx.since.getTime() - 1000)
    .map((file) => ({ file, session: sessionOf(file, ctx.runDir) }))
    .filter((c): c is { file: string; session: string } => c.session !== null);
  const newest = newestFile(candidates);
  if (!newest) return [];
  return recoveredFrom(newest.file, qwenSessionEvents(readJsonRecordsSync(newest.file, 'qwen chat'), newest.session));
}
