/**
 * One isolation kept ready for the next attempt of this process. Starting the namespaces' init takes ~6 ms with the
 * Perl init and ~40 ms with the Node one (a Node start, where there is no Perl); an attempt in a Vitest worker has
 * only ~15 ms of its own setup to hide it behind, so after an attempt
 * (with a shared model server: the fixtures') the next attempt's init is started at once, set up, and kept
 * waiting for its engine command. It is not held: a process with nothing else to do exits, and its init with it
 * (the lifeline closes). A spare whose key no longer matches (another model server, mode or stdin) is closed.
 */
import type { AttemptIsolation } from './attempt-isolation.js';

let spare: { key: string; isolation: Promise<AttemptIsolation | null> } | null = null;

/**
 * The spare for `key` when it is ready and its init still waits (then it is held again and belongs to the caller),
 * else null: the caller opens its own.
 */
export async function takeSpare(key: string): Promise<AttemptIsolation | null> {
  if (!spare || spare.key !== key) return null;
  const taken = spare;
  spare = null;
  const isolation = await taken.isolation;
  return isolation ? claimWaiting(isolation) : null;
}

/**
 * An isolation kept in reserve, claimed by an attempt: held again (it keeps the process alive) when its init still
 * waits for an engine command, else closed (it was killed meanwhile) and null. Also the daemon's prepared start's.
 */
export async function claimWaiting(isolation: AttemptIsolation): Promise<AttemptIsolation | null> {
  if (!isolation.waiting()) {
    await isolation.close().catch(() => undefined);
    return null;
  }
  isolation.hold(true);
  return isolation;
}

/**
 * Runs `close`, holding the process until it is done: what is kept in reserve holds nothing, so awaiting its close
 * where nothing else runs would otherwise end the process mid-await (Node exits with 13, "unsettled top-level await").
 */
export async function closeHolding(close: () => Promise<unknown>): Promise<void> {
  const holding = setInterval(() => undefined, 60_000);
  try {
    await close();
  } catch {
    // closing what never started, or is gone already
  } finally {
    clearInterval(holding);
  }
}

/**
 * Starts a spare for `key` with `open` (which prestarts it), replacing any other; never throws. It starts on a
 * timer that does not hold the process: after the attempt that asked for it has returned, and not at all when the
 * process has nothing left to do (a command's only attempt).
 */
export function keepSpare(key: string, open: () => Promise<AttemptIsolation>): void {
  if (spare?.key === key) return;
  void discardSpare();
  let start: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    start = resolve;
  });
  setTimeout(start, 0).unref();
  const isolation = started.then(open).then(
    (opened) => {
      opened.hold(false);
      return opened;
    },
    () => null,
  );
  spare = { key, isolation };
}

/** Closes the spare, if any (a key change, a suite's or a bench's teardown), holding the process until it is closed. */
export async function discardSpare(): Promise<void> {
  const old = spare;
  spare = null;
  if (!old) return;
  await closeHolding(async () => (await old.isolation)?.close());
}
