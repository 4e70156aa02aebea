/**
 * PTY mode with @lydell/node-pty (prebuilt node-pty): one merged CRLF stream, as a terminal shows it, plus
 * util-linux `script`-style timing lines ("<seconds since previous chunk> <bytes>"). node-pty makes the
 * child a session leader, so its pid is a process group and timeout/abort kill the whole group.
 */
import { constants as osConstants } from 'node:os';
import { armTermination, type BaseRunOptions, type ProcessResult } from './process-result.js';

/** Options of {@link runPty}. */
export interface RunPtyOptions extends BaseRunOptions {
  /** Text written to the terminal once, after start. */
  input?: string;
  cols?: number;
  rows?: number;
  /** Raw output chunks (stream is always `pty`). */
  onChunk?: (stream: 'pty', chunk: Buffer) => void;
  /** One timing line per chunk, util-linux `script` classic format. */
  onTiming?: (line: string) => void;
}

/** Runs a process in a pseudo-terminal; never throws. */
export async function runPty(options: RunPtyOptions): Promise<ProcessResult> {
  const started = performance.now();
  let pty: typeof import('@lydell/node-pty');
  try {
    pty = await import('@lydell/node-pty');
  } catch (error) {
    return { pid: null, exitCode: null, signal: null, timedOut: false, canceled: false, durationMs: 0, spawnError: error as Error };
  }
  let child: import('@lydell/node-pty').IPty;
  try {
    child = pty.spawn(options.file, [...options.args], {
      name: options.env.TERM ?? 'xterm-256color',
      cols: options.cols ?? 120,
      rows: options.rows ?? 40,
      cwd: options.cwd,
      env: options.env,
      encoding: null,
    });
  } catch (error) {
    return { pid: null, exitCode: null, signal: null, timedOut: false, canceled: false, durationMs: performance.now() - started, spawnError: error as Error };
  }
  const termination = armTermination(child.pid, options);
  let last = performance.now();
  child.onData((data: string | Buffer) => {
    const chunk = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data);
    const now = performance.now();
    options.onTiming?.(`${((now - last) / 1000).toFixed(6)} ${chunk.byteLength}`);
    last = now;
    options.onChunk?.('pty', chunk);
  });
  if (options.input !== undefined) child.write(options.input);
  const exit = await new Promise<{ exitCode: number; signal?: number }>((resolve) => child.onExit(resolve));
  termination.disarm();
  const signalName = exit.signal ? signalNameOf(exit.signal) : null;
  return {
    pid: child.pid,
    exitCode: signalName ? null : exit.exitCode,
    signal: signalName,
    timedOut: termination.state.timedOut,
    canceled: termination.state.canceled,
    durationMs: performance.now() - started,
    spawnError: null,
  };
}

/** `SIGTERM` for 15 and so on (node-pty reports signals as numbers). */
function signalNameOf(signal: number): string {
  const entry = Object.entries(osConstants.signals).find(([, value]) => value === signal);
  return entry ? entry[0] : `SIG${signal}`;
}
