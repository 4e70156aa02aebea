/**
 * Long synchronous work cut into slices, so the event loop keeps its turns: file-system walks and reads of many
 * small files (a snapshot's stats and hashes, a run store's records) go faster as synchronous calls than through
 * libuv's thread pool, and a slicer gives the loop a turn every few milliseconds of them.
 */
import { performance } from 'node:perf_hooks';

/** Longest run (ms) of synchronous calls before the event loop gets a turn, by default. */
const SLICE_MS = 4;

/** Cuts synchronous work into slices: `due()` once `SLICE_MS` have run since the last `pause()`. */
export interface Slicer {
  due(): boolean;
  pause(): Promise<void>;
}

/**
 * Gives the event loop a turn once `sliceMs` (default `SLICE_MS`) of synchronous calls have run: work that runs beside
 * other I/O of the process (an engine's output, its model requests) takes shorter slices. On a small file each synchronous call
 * costs less than the trip through libuv's thread pool: on a 2-CPU Linux VM 10,000 lstats took ~20 ms synchronously
 * against 50–120 ms as 32 concurrent promises, and 10,000 reads + sha256 ~60 ms against ~450 ms with
 * `fs.promises.readFile`.
 */
export function createSlicer(sliceMs = SLICE_MS): Slicer {
  let sliceStart = performance.now();
  return {
    due: () => performance.now() - sliceStart >= sliceMs,
    pause: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    },
  };
}
