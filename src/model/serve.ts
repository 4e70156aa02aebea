/**
 * The standalone server behind `agent-harness model serve`: prints where it listens, stops on SIGINT/SIGTERM.
 * The listening line is the one machine-readable output (scripts grep the URL from it), so it is printed once,
 * after the port is bound.
 */
import { loadModelScript } from './script.js';
import { listenModelServer, WIRE_APIS, type ModelServer, type WireInterceptor } from './server.js';
import type { EngineToolTable } from './tool-table.js';

/** Options of {@link serveModel}. */
export interface ServeModelOptions {
  /** JSON model script; absent = the default script. */
  scriptPath?: string;
  /** Port on 127.0.0.1; absent or 0 = ephemeral. */
  port?: number;
  /** JSONL log of recorded requests. */
  logFile?: string;
  /** Where the listening line goes (default stdout). */
  out?: NodeJS.WritableStream;
  /** Answers wire requests in place of the script (a cassette replayed: `model serve --cassette`). */
  intercept?: WireInterceptor | null;
  /** The tool tables of the engines served (the command gives every registered engine's). */
  tools: readonly EngineToolTable[];
}

/** A served model: the server and a promise settled when it stopped. */
export interface ServedModel {
  server: ModelServer;
  /** Settles once the server stopped (close() or a signal). */
  closed: Promise<void>;
  /** Stops the server and removes the signal handlers; safe to call twice. */
  close(): Promise<void>;
}

/** Starts the standalone server; MODEL_SCRIPT_INVALID / MODEL_SERVER_FAILED before anything is printed. */
export async function serveModel(options: ServeModelOptions): Promise<ServedModel> {
  const script = options.scriptPath ? await loadModelScript(options.scriptPath) : null;
  const server = await listenModelServer({
    script,
    tools: options.tools,
    ...(options.port ? { port: options.port } : {}),
    ...(options.logFile ? { logFile: options.logFile } : {}),
    ...(options.intercept ? { intercept: options.intercept } : {}),
    onLogError: (error) =>
      process.stderr.write(`agent-harness: the request log is no longer written: ${error.message}\n`),
  });
  (options.out ?? process.stdout).write(
    `model server listening on ${server.url} (wire APIs: ${WIRE_APIS.map((w) => w.id).join(', ')})\n`,
  );
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  const close = async (): Promise<void> => {
    process.off('SIGINT', close);
    process.off('SIGTERM', close);
    await server.close();
    resolveClosed();
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  return { server, closed, close };
}
