/**
 * What an attempt starts before its run directory exists (issue 13): its model server and its namespaces, whose
 * init then boots while the run directory is made. run-attempt.ts takes them over, or closes them when the run
 * store fails first.
 */
import { startModelServer, type ModelScript, type ModelServer } from '../model/index.js';
import type { IsolationMode } from '../protocol/index.js';
import { openIsolation, type AttemptIsolation } from '../runtime/isolation/attempt-isolation.js';
import type { NamespaceSupport } from '../runtime/isolation/probe.js';
import { claimWaiting, closeHolding } from '../runtime/isolation/spare.js';
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

/** What an attempt starts early with. */
export interface EarlyStartOptions {
  script: ModelScript | undefined;
  requestsLog: () => string | null;
  isolationMode: IsolationMode | null;
  namespaceSupport: Promise<NamespaceSupport> | undefined;
  io: IoMode;
  initStdin: 'ignore' | { text: string };
}

/**
 * The early start prepared for the next attempt of a process that runs one after another (the attempt daemon), with
 * the attempt whose requests its model server logs; `keepPreparing` turns it on. Only for the default scripted model
 * (no script of the attempt's own).
 */
let prepared: { key: string; early: EarlyStart; log: { to: () => string | null } } | null = null;
let preparing = false;

/** The options an early start can be prepared for, as a key; null when it cannot (a script, an invalid mode). */
function preparedKey(options: EarlyStartOptions): string | null {
  if (options.script !== undefined || options.isolationMode === null) return null;
  return `${options.isolationMode}|${options.io}|${JSON.stringify(options.initStdin)}`;
}

/**
 * Whether each attempt, once done, prepares the next one's model server and namespaces' init (so that the next
 * attempt's engine starts without waiting for them): on in the attempt daemon. Off closes what was prepared.
 */
export async function keepPreparing(on: boolean): Promise<void> {
  preparing = on;
  if (on || !prepared) return;
  const old = prepared;
  prepared = null;
  // What was prepared holds nothing (it must not keep a process alive).
  await closeHolding(() => old.early.close());
}

/** After an attempt started with `options`: prepares the next one's early start, when on and possible. */
export function prepareNext(options: EarlyStartOptions): void {
  const key = preparedKey(options);
  if (!preparing || key === null || prepared?.key === key) return;
  const log = { to: (): string | null => null };
  // On a timer: after the attempt that asked for it has returned its result.
  setTimeout(() => {
    if (!preparing || prepared?.key === key) return;
    const early = launchEarly({ ...options, requestsLog: () => log.to() });
    void early.isolation?.then((isolation) => isolation.hold(false), () => undefined);
    void prepared?.early.close();
    prepared = { key, early, log };
  }, 0);
}

/**
 * Starts an attempt's own model server and, once it listens, the attempt's isolation (its init prestarted for split
 * streams), before the run store's work: the init is a Node process whose start-up a command's first attempt
 * otherwise waits for before its engine runs. Takes the prepared one instead when it was made for these options.
 */
export function startEarly(options: EarlyStartOptions): EarlyStart {
  const key = preparedKey(options);
  if (key !== null && prepared?.key === key) {
    const taken = prepared;
    prepared = null;
    taken.log.to = options.requestsLog;
    // An init that no longer waits (it was killed meanwhile) is replaced by a new one on the same server.
    const isolation = Promise.all([taken.early.server, taken.early.isolation!]).then(async ([server, ready]) => (
      await claimWaiting(ready) ?? openEarlyIsolation(options, options.isolationMode!, server.url)
    ));
    return ownedEarly(taken.early.server, isolation);
  }
  return launchEarly(options);
}

/** The isolation of an early start, its init prestarted for split streams, forwarding to the server at `modelUrl`. */
function openEarlyIsolation(options: EarlyStartOptions, mode: IsolationMode, modelUrl: string): Promise<AttemptIsolation> {
  return openIsolation({
    mode,
    modelUrl,
    ...(options.namespaceSupport ? { support: options.namespaceSupport } : {}),
    ...(options.io === 'split' ? { prestart: options.initStdin } : {}),
  });
}

/** Starts the model server and the isolation of an early start. */
function launchEarly(options: EarlyStartOptions): EarlyStart {
  const server = startModelServer({ ...(options.script ? { script: options.script } : {}), logFile: options.requestsLog });
  const mode = options.isolationMode;
  // The init starts as soon as the server listens (its port is forwarded into the namespace), while the probe's
  // trial may still run: openIsolation kills it if the verdict is that namespaces are unavailable.
  const isolation = mode === null ? null : server.then((started) => openEarlyIsolation(options, mode, started.url));
  return ownedEarly(server, isolation);
}

/** The EarlyStart of a server and an isolation (either may fail; each is reported where the attempt uses it). */
function ownedEarly(server: Promise<ModelServer>, isolation: Promise<AttemptIsolation> | null): EarlyStart {
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
