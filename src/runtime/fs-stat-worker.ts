/**
 * A worker thread that takes a share of a snapshot's lstats, so that its stat pass runs on two CPUs (issue 13).
 *
 * Why: a snapshot's cost is its lstats. On the 2-CPU VM of the bench an lstat is a ~2 µs system call (GNU find and
 * Perl take as long per file as Node's `lstatSync`), so the two passes of an attempt over 10,000 files took ~40 ms
 * of system calls on one thread, whatever made them. libuv's thread pool is no substitute: one hand-off per call made
 * 10,000 lstats take 35–250 ms.
 *
 * How the work is shared ({@link shareStats}): the listing offers its paths in batches as it finds them, and the
 * worker starts on them at once, while the listing goes on. Each batch has a claim in a SharedArrayBuffer: the worker
 * claims batches from the first on, the snapshot's thread (once its listing is done) from the last one back, each
 * with a compare-and-swap, so that every batch is stat'ed once, by whichever thread is free, and the two meet in the
 * middle whatever the load on either.
 *
 * One worker per process, started by the first snapshot big enough to gain from it ({@link statWorker}); that
 * snapshot does not wait for it (a worker takes ~25–35 ms to start), the next ones use it. It is unref'ed while no
 * batch is out, so it never keeps a process alive. A worker that fails or exits is not restarted: its batches and
 * every later stat are made on the snapshot's own thread, as before there was a worker.
 *
 * The worker's source is inline (evaluated as CommonJS): it runs the same from the sources under tsx or Vitest and
 * from `dist/`, with no file to resolve.
 */
import { Worker } from 'node:worker_threads';

/** Numbers per path in a batch's stats: kind, dev, ino, size, mtimeMs, ctimeMs. */
export const STAT_FIELDS = 6;
/** Kind of a path that is gone or could not be stat'ed. */
export const KIND_GONE = 0;
/** Kind of a regular file. */
export const KIND_FILE = 1;
/** Kind of a symbolic link. */
export const KIND_SYMLINK = 2;
/** Kind of anything else (a directory, a socket, a FIFO, a device). */
export const KIND_OTHER = 3;

/** A claim's values: free, taken by the worker, taken by the snapshot's thread. */
const FREE = 0;
const BY_WORKER = 1;
const BY_CALLER = 2;

/**
 * The worker: `{ share, batch, paths, claims }` → if it wins the batch's claim, `{ share, batch, stats }`, a
 * Float64Array of STAT_FIELDS numbers per path.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
parentPort.on('message', ({ share, batch, paths, claims }) => {
  if (Atomics.compareExchange(claims, batch, ${FREE}, ${BY_WORKER}) !== ${FREE}) return;
  const stats = new Float64Array(paths.length * ${STAT_FIELDS});
  for (let i = 0; i < paths.length; i += 1) {
    let stat;
    try { stat = fs.lstatSync(paths[i], { throwIfNoEntry: false }); } catch { stat = undefined; }
    const at = i * ${STAT_FIELDS};
    if (!stat) { stats[at] = ${KIND_GONE}; continue; }
    stats[at] = stat.isFile() ? ${KIND_FILE} : stat.isSymbolicLink() ? ${KIND_SYMLINK} : ${KIND_OTHER};
    stats[at + 1] = stat.dev; stats[at + 2] = stat.ino; stats[at + 3] = stat.size;
    stats[at + 4] = stat.mtimeMs; stats[at + 5] = stat.ctimeMs;
  }
  parentPort.postMessage({ share, batch, stats }, [stats.buffer]);
});
parentPort.postMessage({ ready: true });
`;

/** One snapshot's stat pass, shared with the worker (from {@link shareStats}). */
export interface SharedStats {
  /** Offers the next batch (absolute paths, at most `capacity` batches in all); the worker may start on it at once. */
  offer(paths: readonly string[]): void;
  /** Takes batch `batch` for the caller to stat itself: true unless the worker took it first. */
  claim(batch: number): boolean;
  /**
   * The stats of a batch the worker took: STAT_FIELDS numbers per path, kind first (KIND_*), then dev, ino, size,
   * mtimeMs and ctimeMs as `fs.lstatSync` gives them (zeros for KIND_GONE). Null when the worker failed or stopped
   * before it answered: the caller stats the batch itself.
   */
  stats(batch: number): Promise<Float64Array | null>;
  /** Ends the share: what the worker still sends for it is dropped. */
  close(): void;
}

interface Share {
  claims: Int32Array;
  /** The answer of each batch offered: the worker's stats, or null when the caller is to stat it. */
  answers: Array<Promise<Float64Array | null>>;
  /** How to settle the answers the worker may still send. */
  unanswered: Map<number, (stats: Float64Array | null) => void>;
}

let worker: Worker | null = null;
let ready = false;
let failed = false;
let nextShare = 0;
const shares = new Map<number, Share>();
/** What {@link statWorkerCounts} reports. */
const counts = { answered: 0, abandoned: 0 };

/** Refs the worker while any batch may still be answered, so that a process waiting on one does not exit. */
function holdWhileWaiting(): void {
  if (!worker) return;
  let waiting = false;
  for (const share of shares.values()) if (share.unanswered.size > 0) waiting = true;
  if (waiting) worker.ref();
  else worker.unref();
}

/** Settles what `share` may still get from the worker with null: the caller stats those batches itself. */
function abandon(share: Share): void {
  for (const settle of share.unanswered.values()) settle(null);
  counts.abandoned += share.unanswered.size;
  share.unanswered.clear();
}

/** Every unanswered batch of every share resolves null. */
function abandonAll(): void {
  for (const share of shares.values()) abandon(share);
}

/** The worker's end, for whatever reason: no worker is started again. */
function retire(): void {
  failed = true;
  ready = false;
  worker = null;
  abandonAll();
}

function start(): void {
  const started = new Worker(WORKER_SOURCE, { eval: true, name: 'agent-harness fs stat' });
  worker = started;
  started.on('message', (message: { ready?: true; share?: number; batch?: number; stats?: Float64Array }) => {
    if (message.ready) {
      ready = true;
      return;
    }
    counts.answered += 1;
    const share = shares.get(message.share!);
    const settle = share?.unanswered.get(message.batch!);
    if (!share || !settle) return;
    share.unanswered.delete(message.batch!);
    settle(message.stats!);
    holdWhileWaiting();
  });
  started.on('error', () => {
    if (worker === started) retire();
  });
  started.on('exit', () => {
    if (worker === started) retire();
  });
  // After the listeners: a 'message' listener added later refs the worker again, and a process that started it and
  // never used it would never exit.
  started.unref();
}

/**
 * The worker is ready: true once it runs; the first call starts it (in the background) and gives false, as does
 * every call once a worker failed (none is restarted).
 */
export function statWorkerReady(): boolean {
  if (failed) return false;
  if (!worker) {
    try {
      start();
    } catch {
      failed = true;
      return false;
    }
  }
  return ready;
}

/**
 * A stat pass of at most `capacity` batches shared with the worker, or null when the worker is not ready (see
 * {@link statWorkerReady}, which this calls).
 */
export function shareStats(capacity: number): SharedStats | null {
  if (!statWorkerReady()) return null;
  const running = worker!;
  const id = nextShare++;
  const share: Share = { claims: new Int32Array(new SharedArrayBuffer(4 * Math.max(1, capacity))), answers: [], unanswered: new Map() };
  shares.set(id, share);
  /** Batch `batch` will get no answer from the worker: the caller's claim won it, or the worker is gone. */
  const unanswerable = (batch: number): void => {
    share.unanswered.get(batch)?.(null);
    share.unanswered.delete(batch);
    holdWhileWaiting();
  };
  return {
    offer(paths) {
      if (share.answers.length >= capacity) throw new RangeError(`a shared stat pass holds at most ${capacity} batches`);
      const batch = share.answers.length;
      share.answers.push(new Promise((settle) => share.unanswered.set(batch, settle)));
      // A worker that failed since the share began never answers: the batch's claim stays free for the caller.
      if (worker !== running || !ready) {
        counts.abandoned += 1;
        return unanswerable(batch);
      }
      running.ref();
      running.postMessage({ share: id, batch, paths, claims: share.claims });
    },
    claim(batch) {
      if (Atomics.compareExchange(share.claims, batch, FREE, BY_CALLER) !== FREE) return false;
      unanswerable(batch);
      return true;
    },
    stats(batch) {
      return share.answers[batch] ?? Promise.resolve(null);
    },
    close() {
      abandon(share);
      shares.delete(id);
      holdWhileWaiting();
    },
  };
}

/**
 * How many batches the worker has stat'ed in this process (each is answered; a batch it should have left to its
 * caller would count too), and how many it took or was offered and never answered (it failed or stopped, or the share
 * ended first): what a test or a benchmark reads to see who made the stats.
 */
export function statWorkerCounts(): { answered: number; abandoned: number } {
  return { ...counts };
}

/**
 * Stops the worker, if any, and lets a later call start a new one (tests, benchmarks); a batch still out resolves
 * null, so its snapshot stats it itself.
 */
export async function stopStatWorker(): Promise<void> {
  const running = worker;
  worker = null;
  ready = false;
  failed = false;
  abandonAll();
  await running?.terminate();
}
