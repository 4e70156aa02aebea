/**
 * Recovers an interactive claude attempt from claude's own session store. The TUI (a live terminal attempt) prints no
 * stream-json events, but claude 2.1.197 writes every session to `$CLAUDE_CONFIG_DIR/projects/<cwd slug>/<session
 * id>.jsonl` (the slug is the cwd with `/`, `_` and `.` made `-`), one JSON line per record, observed on scripted
 * interactive runs of the pinned binary (`claude "<prompt>"` on a PTY): `mode` / `permission-mode` /
 * `file-history-snapshot` / `last-prompt` bookkeeping, then `user` and `assistant` records shaped as stream-json's
 * (`{type, message: {role, content}}`) plus `cwd`, `sessionId`, `isSidechain`, and a `system` record of subtype
 * `turn_duration` once a turn is over. Subagents write under `<session id>/subagents/`, one level deeper: not read.
 *
 * The records are fed to the stream-json parser (`parse.ts`) as the stream-json lines they mirror: the session opens
 * a turn as `system/init` would, a typed prompt opens the next one, `turn_duration` closes it as `result` would. The
 * file of this run dir (its records' `cwd`) written during the attempt gives the session id, so the run can be
 * resumed by handle, and the turn's events, so its completion is judged from what the session recorded. Never throws.
 */
import fs from 'node:fs';
import path from 'node:path';
import { newestFile, recoveredFrom } from '../session-recovery.js';
import type { ParserOutput, SessionRecoveryContext } from '../engine.js';
import { readLinesSync } from '../../runtime/bounded-input.js';
import { createClaudeParser } from './parse.js';

type SessionRecord = {
  type?: unknown;
  subtype?: unknown;
  sessionId?: unknown;
  cwd?: unknown;
  isSidechain?: unknown;
} & {
  message?: { content?: unknown };
};

/** The JSON records of a session file, read in chunks as they are asked for; a cut or foreign line is skipped. */
function* readRecords(file: string): Generator<SessionRecord> {
  try {
    for (const text of readLinesSync(file, { what: 'claude session' }, true)) {
      if (!text.trim()) continue;
      try {
        const value: unknown = JSON.parse(text);
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) yield value as SessionRecord;
      } catch {
        // A line cut by a killed process: the rest of the session is still evidence.
      }
    }
  } catch {
    // Unreadable (gone, not a regular file): no more evidence in it.
  }
}

/** Session files (`projects/*\/*.jsonl`) modified since `since` (ms). */
function sessionFiles(projectsDir: string, since: number): string[] {
  const out: string[] = [];
  let projects: fs.Dirent[];
  try {
    projects = fs.readdirSync(projectsDir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const project of projects) {
    if (!project.isDirectory()) continue;
    const dir = path.join(projectsDir, project.name);
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (
        entry.isFile() &&
        entry.name.endsWith('.jsonl') &&
        (fs.statSync(full, { throwIfNoEntry: false })?.mtimeMs ?? 0) >= since
      )
        out.push(full);
    }
  }
  return out;
}

/** The session id of the file when its first record that names a cwd names `cwd`, else null. */
function sessionOf(file: string, cwd: string): string | null {
  for (const record of readRecords(file)) {
    if (typeof record.cwd !== 'string') continue;
    return record.cwd === cwd && typeof record.sessionId === 'string' ? record.sessionId : null;
  }
  return null;
}

/** True for a prompt the user typed (a `user` record whose content is text, not tool results). */
function isPrompt(record: SessionRecord): boolean {
  const content = record.message?.content;
  return (
    typeof content === 'string' ||
    (Array.isArray(content) && content.length > 0 && content.every((block) => block?.type === 'text'))
  );
}

/** The token counts of a turn: each assistant message's usage (its content blocks repeat it) counted once. */
function turnUsage(messages: Map<string, unknown>): Record<string, number> {
  const total = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0 };
  for (const usage of messages.values()) {
    if (typeof usage !== 'object' || usage === null) continue;
    for (const key of Object.keys(total) as (keyof typeof total)[]) {
      const value = (usage as Record<string, unknown>)[key];
      if (typeof value === 'number') total[key] += value;
    }
  }
  return total;
}

/** Parser outputs of one session file: its records as the stream-json lines they mirror, through the claude parser. */
export function* claudeSessionEvents(records: Iterable<SessionRecord>, sessionId: string): Generator<ParserOutput> {
  const parser = createClaudeParser();
  const feed = (event: unknown) => parser.line('stdout', JSON.stringify(event));
  let turnOpen = false;
  let usages = new Map<string, unknown>();
  const open = () => {
    turnOpen = true;
    usages = new Map();
    return feed({ type: 'system', subtype: 'init', session_id: sessionId });
  };
  yield* open();
  for (const record of records) {
    if (record.isSidechain === true) continue;
    if (record.type === 'user') {
      // The first prompt is in the turn the session opened with; each later one opens a new turn.
      if (isPrompt(record) && !turnOpen) yield* open();
      yield* feed(record);
    } else if (record.type === 'assistant') {
      const message = record.message as { id?: unknown; usage?: unknown } | undefined;
      if (typeof message?.id === 'string') usages.set(message.id, message.usage);
      yield* feed(record);
    } else if (record.type === 'system' && record.subtype === 'turn_duration' && turnOpen) {
      turnOpen = false;
      yield* feed({
        type: 'result',
        subtype: 'success',
        is_error: false,
        session_id: sessionId,
        usage: turnUsage(usages),
      });
    }
  }
  yield* parser.end();
}

/**
 * The events of the session claude recorded for `runDir` since the attempt started, or none: read from the newest
 * matching session file as they are consumed (the candidates are read only up to their first record with a cwd).
 */
export async function recoverClaudeSession(ctx: SessionRecoveryContext): Promise<Iterable<ParserOutput>> {
  const candidates = sessionFiles(path.join(ctx.agentHome, '.claude', 'projects'), ctx.since.getTime() - 1000)
    .map((file) => ({ file, session: sessionOf(file, ctx.runDir) }))
    .filter((c): c is { file: string; session: string } => c.session !== null);
  const newest = newestFile(candidates);
  if (!newest) return [];
  return recoveredFrom(newest.file, claudeSessionEvents(readRecords(newest.file), newest.session));
}
