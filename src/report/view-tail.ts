/**
 * The live tail of `agent-harness view`: a running attempt's `rasp.N.jsonl` and `fcmp.N.jsonl` read as they grow
 * (both are written as the engine's output is parsed and translated), each new or completed timeline item sent as a
 * server-sent event, until the attempt's meta says it has finished and the files have been read to their end.
 */
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { fcmpEventOf, isRawLineEvent, raspEventOf } from '../core/recorded-events.js';
import type { FcmpEvent, RaspEvent, RunIndexEntry } from '../protocol/index.js';
import { MAX_AUDIT_FILE_BYTES, readInputBytesSync } from '../runtime/bounded-input.js';
import { AUDIT_DIR } from '../runtime/run-store.js';
import { interleaveEvents } from '../translate/attempt-events.js';
import { TimelineBuilder } from './rasp-timeline.js';

/** How often a tail looks at a running attempt's event file. */
const TAIL_POLL_MS = 200;

/** Streams attempt `n`'s timeline items as SSE `item` events until the attempt is finished, then `end`; returns a stop. */
export function tailAttempt(
  run: RunIndexEntry,
  n: number,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): () => void {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  response.write(': agent-harness tail\n\n');
  const file = (name: string): string => path.join(run.run_dir, AUDIT_DIR, `${name}.${n}.jsonl`);
  const rasp = jsonlTail(file('rasp'), raspEventOf, isRawLineEvent);
  const fcmp = jsonlTail(file('fcmp'), fcmpEventOf);
  const builder = new TimelineBuilder();
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const finished = (): boolean => {
    try {
      const meta = JSON.parse(
        readInputBytesSync(path.join(run.run_dir, AUDIT_DIR, `meta.${n}.json`), {
          what: 'attempt meta',
          maxBytes: MAX_AUDIT_FILE_BYTES,
          noFollow: true,
        }).toString('utf8'),
      );
      return meta.status === 'finished';
    } catch {
      return false;
    }
  };
  const readNew = (): void => {
    // RASP first: the FCMP of each event is written after it, so what FCMP read now derives from RASP read by now.
    const raspBatch: RaspEvent[] = rasp();
    const fcmpBatch: FcmpEvent[] = fcmp();
    for (const event of interleaveEvents(raspBatch, fcmpBatch)) {
      const item = builder.push(event);
      if (item) response.write(`event: item\ndata: ${JSON.stringify(item)}\n\n`);
    }
  };
  const stop = (): void => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
  const tick = (): void => {
    if (stopped) return;
    // Read what is there, then check the meta: an attempt finished after the read is read once more.
    const done = finished();
    readNew();
    if (done) {
      response.write(`event: end\ndata: ${JSON.stringify({ attempt: n })}\n\n`);
      response.end();
      stop();
      return;
    }
    timer = setTimeout(tick, TAIL_POLL_MS);
  };
  request.on('close', stop);
  tick();
  return stop;
}

/**
 * Reads a growing JSONL audit file: each call returns the records added since the last (complete lines that `parse`
 * accepts and `skip` does not leave out).
 */
function jsonlTail<T>(file: string, parse: (value: unknown) => T | null, skip?: (line: string) => boolean): () => T[] {
  let offset = 0;
  let carry = '';
  return () => {
    const out: T[] = [];
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
    } catch {
      return out;
    }
    try {
      if (!fs.fstatSync(fd).isFile()) return out;
      const buffer = Buffer.alloc(256 * 1024);
      for (let read = fs.readSync(fd, buffer, 0, buffer.length, offset); read > 0; ) {
        offset += read;
        const lines = (carry + buffer.toString('utf8', 0, read)).split('\n');
        carry = lines.pop() ?? '';
        for (const line of lines) {
          if (line.trim() === '' || skip?.(line)) continue;
          try {
            const record = parse(JSON.parse(line));
            if (record !== null) out.push(record);
          } catch {
            // A damaged line: skipped.
          }
        }
        read = fs.readSync(fd, buffer, 0, buffer.length, offset);
      }
    } finally {
      fs.closeSync(fd);
    }
    return out;
  };
}
