/**
 * Recovers an interactive opencode attempt from what opencode recorded of its sessions. The TUI (a live terminal
 * attempt) prints no JSON events. opencode 1.18.33 keeps its sessions in a SQLite database
 * (`$XDG_DATA_HOME/opencode/opencode.db`, table `session` with `id`, `directory`, `parent_id`, `time_created`), which
 * Node 20 cannot read without a native module; the same facts are in its log, which it appends to in
 * `$XDG_DATA_HOME/opencode/log/opencode.log` (one file shared by every opencode process of the managed home), one
 * `key=value` line per fact (a value with spaces in double quotes), observed on scripted interactive runs of the
 * pinned binary (`opencode --prompt "<prompt>"` on a PTY):
 *
 * - `timestamp=<ISO> level=INFO run=<process> message=created id=ses_… … directory=<cwd> … parentID=undefined …`
 *   when a session is created (a subagent's session names its parent);
 * - `message=loop session.id=ses_… step=<n>` at each step of a turn (step 0 opens it);
 * - `message="exiting loop" session.id=ses_…` when the turn is over; an error of the turn is a `level=ERROR` line
 *   naming the session.
 *
 * The session created in this run dir since the attempt started gives the session id (so the run can be resumed by
 * handle) and the turns. The assistant's text is only in the database: the recovered turn has no message. Never
 * throws.
 */
import fs from 'node:fs';
import path from 'node:path';
import { recoveredFrom } from '../session-recovery.js';
import type { ParserOutput, SessionRecoveryContext } from '../engine.js';
import { readLinesSync } from '../../runtime/bounded-input.js';

/** The `key=value` fields of one log line (quoted values unquoted). */
export function parseOpencodeLogLine(line: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of line.matchAll(/([\w.]+)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    const [, key, raw] = match;
    if (!key || raw === undefined) continue;
    let value = raw;
    if (raw.startsWith('"')) {
      try {
        value = JSON.parse(raw) as string;
      } catch {
        value = raw.slice(1, -1);
      }
    }
    if (!(key in fields)) fields[key] = value;
  }
  return fields;
}

/** The log files under `logDir` modified since `since` (ms). */
function logFiles(logDir: string, since: number): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(logDir);
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith('.log'))
    .map((name) => path.join(logDir, name))
    .filter((file) => (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) >= since);
}

/** The parsed log lines of a file written since `since` (ms) that speak of a session. */
function* sessionLines(file: string, since: number): Generator<Record<string, string>> {
  try {
    for (const line of readLinesSync(file, { what: 'opencode log' }, true)) {
      if (!line.includes('ses_')) continue;
      const fields = parseOpencodeLogLine(line);
      const at = Date.parse(fields.timestamp ?? '');
      if (Number.isFinite(at) && at >= since) yield fields;
    }
  } catch {
    // Unreadable (gone, not a regular file): no more evidence in it.
  }
}

/** Parser outputs of the session created in `cwd` in these log lines (the newest such session), or none. */
export function opencodeLogEvents(lines: Iterable<Record<string, string>>, cwd: string): ParserOutput[] {
  let session: string | null = null;
  let out: ParserOutput[] = [];
  let turnOpen = false;
  let error: string | null = null;
  for (const fields of lines) {
    if (fields.message === 'created' && fields.directory === cwd && fields.parentID === 'undefined' && fields.id) {
      // A later session of the same run dir (a second TUI session in one attempt) is the one to resume.
      session = fields.id;
      out = [{ type: 'engine.session', session_id: session }];
      turnOpen = false;
      continue;
    }
    if (session === null || fields['session.id'] !== session) continue;
    if (fields.message === 'loop' && !turnOpen) {
      turnOpen = true;
      error = null;
      out.push({ type: 'engine.turn.started' });
    } else if (fields.level === 'ERROR' && turnOpen) {
      error = fields.error ?? fields.message ?? 'opencode logged an error';
    } else if (fields.message === 'exiting loop' && turnOpen) {
      turnOpen = false;
      out.push(
        error === null
          ? { type: 'engine.turn.end', status: 'completed', error: null }
          : { type: 'engine.turn.end', status: 'failed', error },
      );
    }
  }
  return out;
}

/** The events of the session opencode created in `runDir` since the attempt started, read from its log, or none. */
export async function recoverOpencodeSession(ctx: SessionRecoveryContext): Promise<Iterable<ParserOutput>> {
  const since = ctx.since.getTime() - 1000;
  const files = logFiles(path.join(ctx.agentHome, '.local', 'share', 'opencode', 'log'), since);
  for (const file of files) {
    const events = opencodeLogEvents(sessionLines(file, since), ctx.runDir);
    if (events.length === 0) continue;
    return recoveredFrom(file, events);
  }
  return [];
}
