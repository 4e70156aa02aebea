/**
 * Recovers an interactive codex attempt from codex's own session store. The TUI (a live terminal attempt) prints no
 * JSON events, but codex 0.169.0 writes every session to `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl`
 * (one JSON line per item: `session_meta` with `id` and `cwd`, `event_msg` `task_started`/`task_complete`/
 * `turn_aborted`, `response_item` `message`/`function_call`/`function_call_output`), measured on scripted runs.
 * The rollout of this run dir written during the attempt gives the session id (so the run can be resumed by
 * handle) and the turn's events (so its completion is judged from what the session recorded). Never throws.
 */
import fs from 'node:fs';
import path from 'node:path';
import { newestFile, recoveredFrom } from '../session-recovery.js';
import type { ParserOutput, SessionRecoveryContext } from '../engine.js';
import { exitCodeFromText } from '../parse-helpers.js';
import { readLinesSync } from '../../runtime/bounded-input.js';

type Line = { type?: unknown; payload?: Record<string, unknown> };

function rolloutFiles(dir: string, since: number): string[] {
  const out: string[] = [];
  const walk = (current: string, depth: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory() && depth < 4) walk(full, depth + 1);
      else if (entry.isFile() && /^rollout-.*\.jsonl$/.test(entry.name) && fs.statSync(full).mtimeMs >= since)
        out.push(full);
    }
  };
  walk(dir, 0);
  return out;
}

/** The JSON lines of a rollout, read in chunks as they are asked for (a long session is never held whole). */
function* readLines(file: string): Generator<Line> {
  try {
    for (const text of readLinesSync(file, { what: 'codex session' }, true)) {
      if (!text.trim()) continue;
      try {
        yield JSON.parse(text) as Line;
      } catch {
        // A line cut by a killed process: the rest of the session is still evidence.
      }
    }
  } catch {
    // Unreadable (gone, not a regular file): no more evidence in it.
  }
}

/** True when the rollout records a session in `cwd` (its `session_meta`, normally the first line: read up to it). */
function isSessionOf(file: string, cwd: string): boolean {
  for (const line of readLines(file)) if (line.type === 'session_meta' && line.payload?.cwd === cwd) return true;
  return false;
}

function text(content: unknown): string {
  return Array.isArray(content)
    ? content
        .map((part) => (typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : ''))
        .join('')
    : '';
}

/** The parser output of one rollout line, or null; `count` is the number of outputs before it (a message's fallback id). */
function rolloutEvent(line: Line, count: number): ParserOutput | null {
  const p = line.payload ?? {};
  if (line.type === 'session_meta' && typeof p.id === 'string') return { type: 'engine.session', session_id: p.id };
  if (line.type === 'event_msg' && p.type === 'task_started') return { type: 'engine.turn.started' };
  if (line.type === 'event_msg' && p.type === 'task_complete')
    return { type: 'engine.turn.end', status: 'completed', error: null };
  if (line.type === 'event_msg' && p.type === 'turn_aborted')
    return { type: 'engine.turn.end', status: 'failed', error: `turn aborted (${String(p.reason ?? 'interrupted')})` };
  if (line.type !== 'response_item') return null;
  if (p.type === 'message' && p.role === 'assistant') {
    return {
      type: 'engine.assistant.message',
      message_id: String(p.id ?? `msg_${count}`),
      text: text(p.content),
      final: true,
    };
  }
  if (p.type === 'function_call' && typeof p.call_id === 'string') {
    let input: unknown = p.arguments;
    try {
      const args = JSON.parse(String(p.arguments)) as { cmd?: unknown };
      input = typeof args.cmd === 'string' ? { command: args.cmd } : args;
    } catch {
      // keep the raw arguments
    }
    return {
      type: 'engine.tool.call',
      call_id: p.call_id,
      kind: p.name === 'exec_command' || p.name === 'shell' ? 'shell' : 'other',
      name: String(p.name ?? 'function'),
      input,
    };
  }
  if (p.type === 'function_call_output' && typeof p.call_id === 'string') {
    const output = typeof p.output === 'string' ? p.output : JSON.stringify(p.output ?? null);
    const exitCode = exitCodeFromText(output);
    return {
      type: 'engine.tool.result',
      call_id: p.call_id,
      status: exitCode === null || exitCode === 0 ? 'completed' : 'failed',
      output,
      exit_code: exitCode,
    };
  }
  return null;
}

/** Parser outputs for one rollout (session, turn, assistant messages, tool calls and results, turn end), as read. */
export function* rolloutEvents(lines: Iterable<Line>): Generator<ParserOutput> {
  let count = 0;
  for (const line of lines) {
    const output = rolloutEvent(line, count);
    if (output) {
      count += 1;
      yield output;
    }
  }
}

/**
 * The events of the session codex recorded for `runDir` since the attempt started, or none: read from the newest
 * matching rollout as they are consumed (the candidates are read only up to their `session_meta`).
 */
export async function recoverCodexSession(ctx: SessionRecoveryContext): Promise<Iterable<ParserOutput>> {
  const newest = newestFile(
    rolloutFiles(path.join(ctx.agentHome, '.codex', 'sessions'), ctx.since.getTime() - 1000)
      .filter((file) => isSessionOf(file, ctx.runDir))
      .map((file) => ({ file })),
  );
  if (!newest) return [];
  return recoveredFrom(newest.file, rolloutEvents(readLines(newest.file)));
}
