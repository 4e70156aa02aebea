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
import { readLinesSync } from '../../runtime/bounded-input.js';
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
