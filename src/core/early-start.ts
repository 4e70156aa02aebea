/**
 * What an attempt starts before its run directory exists (issue 13): its model server and its namespaces, whose
 * init then boots while the run directory is made. run-attempt.ts takes them over, or closes them when the run
 * store fails first.
 */
import { startModelServer, type ModelScript, type ModelServer } from '../model/index.js';
import type { IsolationMode } from '../protocol/index.js';
import { openIsolation, type AttemptIsolation } from '../runtime/isolation/attempt-isolation.js';
import type { NamespaceSupport } from '../runtime/isolation/probe.js';
import type { IoMode } from './attempt-request.js';

/** What an attempt starts before its run directory exists: its own model server and, with a known isolation mode, its isolation. */
export interface EarlyStart {
  server: Promise<ModelServer>;
  /** Null when the isolation mode is not valid: the attempt opens it later, and fails there. */
  isolation: Promise<AttemptIsolation> | null;
  /** The attempt owns both from now on: its cleanup closes them. */
  taken(): void;
  /** Closes the server and, unless taken, the isolation (its init, if prestarted); once, never rejects. */
  close(): Promise<void>;
}

/**
 * Starts an attempt's own model server and, once it listens, the attempt's isolation (its init prestarted for split
 * streams), before the run store's work: the init is a Node process whose start-up a command's first attempt
 * otherwise waits for before its engine runs.
 */
export function startEarly(options: {
  script: ModelScript | undefined;
  requestsLog: () => string | null;
  isolationMode: IsolationMode | null;
  namespaceSupport: Promise<NamespaceSupport> | undefined;
  io: IoMode;
  initStdin: 'ignore' | { text: string };
}): EarlyStart {
  const server = startModelServer({ ...(options.script ? { script: options.script } : {}), logFile: options.requestsLog });
  const mode = options.isolationMode;
  // The init starts as soon as the server listens (its port is forwarded into the namespace), while the probe's
  // trial may still run: openIsolation kills it if the verdict is that namespaces are unavailable.
  const isolation = mode === null ? null : server.then((started) => openIsolation({
    mode,
    modelUrl: started.url,
    ...(options.namespaceSupport ? { support: options.namespaceSupport } : {}),
    ...(options.io === 'split' ? { prestart: options.initStdin } : {}),
  }));
  // Each is awaited where the attempt uses it, and a failure is reported there, as a failed attempt.
  server.catch(() => undefined);
  isolation?.catch(() => undefined);
  let owned = false;
  let closing: Promise<void> | null = null;
  return {
    server,
    isolation,
    taken: () => {
      owned = true;
    },
    close: () => (closing ??= Promise.all([
      server.then((started) => started.close()).catch(() => undefined),
      owned ? undefined : isolation?.then((opened) => opened.close()).catch(() => undefined),
    ]).then(() => undefined)),
  };
}
