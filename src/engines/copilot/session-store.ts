/**
 * Recovers an interactive copilot attempt from copilot's own session store. The TUI (a live terminal attempt) prints
 * no JSON events; GitHub Copilot CLI 1.0.102 appends every non-ephemeral session event to
 * `$COPILOT_HOME/session-state/<session id>/events.jsonl` in the same shape as `--output-format json` prints them,
 * opened by `session.start` (`data.sessionId`, `data.context.cwd`) and closed, per process, by `session.shutdown`
 * (a resumed session appends `session.resume` and its turn). Observed on scripted runs of the pinned binary.
 *
 * The newest session whose `cwd` is this run dir and that was written since the attempt started gives the session id
 * (so the run can be resumed by handle) and the attempt's events, read by the stdout parser; a `session.shutdown`
 * stands for the `result` line prompt mode prints. Never throws.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readInputBytesSync, readLinesSync } from '../../runtime/bounded-input.js';
import type { ParserOutput, SessionRecoveryContext } from '../engine.js';
import { newestFile, recoveredFrom } from '../session-recovery.js';
import { copilotHome } from './config.js';
import { createCopilotParser } from './parse.js';

/** The session's events file and its first line's facts, or null when it is not a session of `runDir`. */
function sessionOf(file: string, runDir: string): { file: string; sessionId: string } | null {
  try {
    for (const line of readLinesSync(file, { what: 'copilot session events' })) {
      const event = JSON.parse(line) as { type?: unknown; data?: { sessionId?: unknown; context?: { cwd?: unknown } } };
      if (event.type !== 'session.start') return null;
      const id = event.data?.sessionId;
      return typeof id === 'string' && event.data?.context?.cwd === runDir ? { file, sessionId: id } : null;
    }
  } catch {
    // An unreadable or malformed file is no session of this run.
  }
  return null;
}

/** The events of the attempt in `file` (lines stamped since `since`, and the session's start). */
function* eventsOf(file: string, sessionId: string, since: number): Generator<ParserOutput> {
  const parser = createCopilotParser();
  try {
    for (const line of readLinesSync(file, { what: 'copilot session events' })) {
      let event: { type?: unknown; timestamp?: unknown };
      try {
        event = JSON.parse(line) as typeof event;
      } catch {
        continue;
      }
      const at = typeof event.timestamp === 'string' ? Date.parse(event.timestamp) : Number.NaN;
      if (event.type !== 'session.start' && !(at >= since)) continue;
      if (event.type === 'session.shutdown')
        yield* parser.line('stdout', JSON.stringify({ type: 'result', sessionId, exitCode: 0 }));
      else yield* parser.line('stdout', line);
    }
  } catch {
    // What was read stands.
  }
  yield* parser.end();
}

/** The events of the copilot session an interactive attempt in `ctx.runDir` recorded since `ctx.since`. */
export async function recoverCopilotSession(ctx: SessionRecoveryContext): Promise<Iterable<ParserOutput>> {
  const root = path.join(copilotHome(ctx.agentHome), 'session-state');
  const since = ctx.since.getTime();
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const candidates = names
    .map((name) => path.join(root, name, 'events.jsonl'))
    .filter((file) => (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) >= since)
    .map((file) => sessionOf(file, ctx.runDir))
    .filter((found): found is { file: string; sessionId: string } => found !== null);
  const found = newestFile(candidates);
  return found ? recoveredFrom(found.file, eventsOf(found.file, found.sessionId, since)) : [];
}

/** The `key: value` lines of copilot's flat `workspace.yaml` (`id`, `cwd`, `created_at`), unquoted. */
function workspaceFields(file: string): Record<string, string> {
  const fields: Record<string, string> = {};
  let text: string;
  try {
    // The store is in the agent's HOME: a FIFO, a link or a huge file planted there is refused, never waited on.
    text = readInputBytesSync(file, { what: 'copilot workspace.yaml', maxBytes: 64 * 1024, noFollow: true }).toString(
      'utf8',
    );
  } catch {
    return fields;
  }
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+):\s*(.*)$/.exec(line);
    if (match) fields[match[1]!] = match[2]!.trim().replace(/^"(.*)"$/, '$1');
  }
  return fields;
}

/**
 * The session a copilot start attempt in `ctx.runDir` is running, from its store while it runs: copilot 1.0.102
 * writes `$COPILOT_HOME/session-state/<id>/workspace.yaml` (`id`, `cwd`, `created_at`) before it prints its first
 * event (observed on the pinned binary: present when the first stdout line is read), and names the session on
 * stdout only in its closing `result` line. The newest session of `ctx.runDir` created since `ctx.since`, else null.
 * Never throws.
 */
export function copilotSessionFromStore(ctx: SessionRecoveryContext): string | null {
  const root = path.join(copilotHome(ctx.agentHome), 'session-state');
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return null;
  }
  let best: { id: string; at: number } | null = null;
  for (const name of names) {
    const fields = workspaceFields(path.join(root, name, 'workspace.yaml'));
    const at = Date.parse(fields.created_at ?? '');
    // The directory is named for the session; a half-written file (no id yet, another id) is no answer.
    if (fields.id !== name || fields.cwd !== ctx.runDir || !(at >= ctx.since.getTime())) continue;
    if (!best || at > best.at) best = { id: name, at };
  }
  return best?.id ?? null;
}
