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
import type { ParserOutput, SessionRecoveryContext } from '../engine.js';
import { exitCodeFromText } from '../../translate/tool-calls.js';

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
      else if (entry.isFile() && /^rollout-.*\.jsonl$/.test(entry.name) && fs.statSync(full).mtimeMs >= since) out.push(full);
    }
  };
  walk(dir, 0);
  return out;
}

function readLines(file: string): Line[] {
  const lines: Line[] = [];
  for (const text of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!text.trim()) continue;
    try {
      lines.push(JSON.parse(text) as Line);
    } catch {
      // A line cut by a killed process: the rest of the session is still evidence.
    }
  }
  return lines;
}

function text(content: unknown): string {
  return Array.isArray(content) ? content.map((part) => (typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('') : '';
}

/** Parser outputs for one rollout (session, turn, assistant messages, tool calls and results, turn end). */
export function rolloutEvents(lines: readonly Line[]): ParserOutput[] {
  const out: ParserOutput[] = [];
  for (const line of lines) {
    const p = line.payload ?? {};
    if (line.type === 'session_meta' && typeof p.id === 'string') out.push({ type: 'engine.session', session_id: p.id });
    else if (line.type === 'event_msg' && p.type === 'task_started') out.push({ type: 'engine.turn.started' });
    else if (line.type === 'event_msg' && p.type === 'task_complete') out.push({ type: 'engine.turn.end', status: 'completed', error: null });
    else if (line.type === 'event_msg' && p.type === 'turn_aborted') out.push({ type: 'engine.turn.end', status: 'failed', error: `turn aborted (${String(p.reason ?? 'interrupted')})` });
    else if (line.type === 'response_item' && p.type === 'message' && p.role === 'assistant') {
      out.push({ type: 'engine.assistant.message', message_id: String(p.id ?? `msg_${out.length}`), text: text(p.content), final: true });
    } else if (line.type === 'response_item' && p.type === 'function_call' && typeof p.call_id === 'string') {
      let input: unknown = p.arguments;
      try {
        const args = JSON.parse(String(p.arguments)) as { cmd?: unknown };
        input = typeof args.cmd === 'string' ? { command: args.cmd } : args;
      } catch {
        // keep the raw arguments
      }
      out.push({ type: 'engine.tool.call', call_id: p.call_id, kind: p.name === 'exec_command' || p.name === 'shell' ? 'shell' : 'other', name: String(p.name ?? 'function'), input });
    } else if (line.type === 'response_item' && p.type === 'function_call_output' && typeof p.call_id === 'string') {
      const output = typeof p.output === 'string' ? p.output : JSON.stringify(p.output ?? null);
      const exitCode = exitCodeFromText(output);
      out.push({ type: 'engine.tool.result', call_id: p.call_id, status: exitCode === null || exitCode === 0 ? 'completed' : 'failed', output, exit_code: exitCode });
    }
  }
  return out;
}

/** The events of the session codex recorded for `runDir` since the attempt started, or none. */
export async function recoverCodexSession(ctx: SessionRecoveryContext): Promise<ParserOutput[]> {
  const candidates = rolloutFiles(path.join(ctx.agentHome, '.codex', 'sessions'), ctx.since.getTime() - 1000)
    .map((file) => ({ file, lines: readLines(file) }))
    .filter(({ lines }) => lines.some((l) => l.type === 'session_meta' && l.payload?.cwd === ctx.runDir))
    .sort((a, b) => fs.statSync(b.file).mtimeMs - fs.statSync(a.file).mtimeMs);
  const newest = candidates[0];
  if (!newest) return [];
  return [{ type: 'diagnostic', diagnostic: { code: 'SESSION_RECOVERED_FROM_STORE', message: `the interactive attempt printed no events; its session was read from ${newest.file}`, level: 'info' } }, ...rolloutEvents(newest.lines)];
}
