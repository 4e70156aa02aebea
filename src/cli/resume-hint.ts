/**
 * The line the CLI ends an attempt with when its session can be continued: `agent-harness resume <handle>`. When the
 * engine's own terminal UI named its native resume command (`EngineAdapter.nativeResumeCommand`: codex's TUI ends
 * with "To continue this session, run: codex resume <id>"), the line says not to use that one: run by hand it works
 * outside the harness, in the host's home and without an audit.
 */
import fs from 'node:fs';
import type { AttemptResult } from '../core/attempt-result.js';
import { openInputFile } from '../runtime/bounded-input.js';

/** How much of the end of the terminal log is searched for the engine's own hint (it prints it last). */
const TAIL_BYTES = 16 * 1024;

/** The last `TAIL_BYTES` of `file` as text without terminal escapes; empty when it cannot be read. */
function terminalTail(file: string): string {
  try {
    // The terminal log is in the agent's working directory: a FIFO there is refused, never waited on.
    const { fd, size } = openInputFile(file, { what: 'terminal log', noFollow: true });
    try {
      const length = Math.min(size, TAIL_BYTES);
      const buffer = Buffer.alloc(length);
      fs.readSync(fd, buffer, 0, length, size - length);
      // CSI and OSC sequences; the TUI also places words with cursor moves, so spaces are compared away below.
      return buffer
        .toString('utf8')
        .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g, '');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

/** The resume line for `result`, or null when its session cannot be continued (no session id). */
export async function resumeHint(
  result: Pick<AttemptResult, 'engine' | 'handle' | 'sessionId'> & { audit: { ptyOutput: string } },
): Promise<string | null> {
  if (!result.sessionId) return null;
  const line = `To continue this session, run: agent-harness resume ${result.handle} <message>`;
  // Loaded here: the registry is not part of every CLI start.
  const { loadEngine } = await import('../engines/registry.js');
  const native = (await loadEngine(result.engine)).nativeResumeCommand;
  if (!native) return line;
  const shown = terminalTail(result.audit.ptyOutput).replace(/\s+/g, '').includes(native.replace(/\s+/g, ''));
  return shown
    ? `${line} (not \`${native}\` as ${result.engine} printed: that runs outside the harness, in your own home and without an audit)`
    : line;
}
