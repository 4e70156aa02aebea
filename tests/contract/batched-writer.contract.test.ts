/**
 * The CLI's batched writer (src/cli/batched-writer.ts): the bytes written are exactly the UTF-8 of the texts in
 * order, whatever their sizes (multibyte, texts larger than a batch; never lone surrogates, which views do not hold), and `drain()` holds the
 * producer back until a full stream has drained.
 */
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BATCH_CHARS, createBatchedWriter } from '../../src/cli/batched-writer.js';

fc.configureGlobal(process.env.FC_SEED === 'random' ? {} : { seed: Number(process.env.FC_SEED ?? 20261123) });

/** A writable that keeps what it gets, taking it slowly when `slow`. */
function sink(slow = false): { stream: Writable; bytes: () => Buffer; writes: () => number } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      if (slow) setTimeout(callback, 1);
      else callback();
    },
  });
  return { stream, bytes: () => Buffer.concat(chunks), writes: () => chunks.length };
}

describe('createBatchedWriter', () => {
  it('writes exactly the UTF-8 of the texts, in order', async () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 50 }),
      fc.nat(3 * BATCH_CHARS).map((n) => 'é'.repeat(Math.floor(n / 2))),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(text, { maxLength: 30 }), async (texts) => {
        const { stream, bytes } = sink();
        const writer = createBatchedWriter(stream);
        for (const t of texts) writer.write(t);
        await writer.drain();
        expect(bytes().equals(Buffer.from(texts.join(''), 'utf8'))).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  it('batches small texts and waits for a full stream to drain', async () => {
    const { stream, bytes, writes } = sink(true);
    const writer = createBatchedWriter(stream);
    for (let i = 0; i < 10_000; i += 1) writer.write(`line ${i}\n`);
    expect(writes()).toBeLessThan(10);
    const waiting = writer.drain();
    expect(waiting).toBeInstanceOf(Promise);
    await waiting;
    expect(stream.writableLength).toBe(0);
    expect(bytes().toString()).toBe(Array.from({ length: 10_000 }, (_, i) => `line ${i}\n`).join(''));
  });
});
