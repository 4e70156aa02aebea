/**
 * Writing a long output (a translate view of a big recording) to a stream without holding it: text is encoded
 * straight into batches of {@link BATCH_BYTES} bytes, each written as soon as the next text would not fit, and
 * {@link BatchedWriter.drain} waits for the stream to take what it was given (its `drain` event) whenever a write
 * said it is full, so the producer can be held back between input chunks. A text is never split across batches.
 */

/** Bytes gathered before one `write` to the stream. */
export const BATCH_BYTES = 256 * 1024;

/** A batching writer over one stream. */
export interface BatchedWriter {
  /** Adds `text`; writes the batch first when `text` might not fit in it. */
  write(text: string): void;
  /** Writes the batch; resolves once the stream can take more (at once when it was not full), rejects on its error. */
  drain(): Promise<void> | undefined;
}

/** Creates a {@link BatchedWriter} over `stream` (stdout of the CLI). */
export function createBatchedWriter(stream: NodeJS.WritableStream): BatchedWriter {
  let batch = Buffer.allocUnsafe(BATCH_BYTES);
  let used = 0;
  let full = false;

  const send = (data: Buffer | string): void => {
    if (!stream.write(data)) full = true;
  };
  const writeBatch = (): void => {
    if (used === 0) return;
    // The stream keeps the buffer it was given: the next batch goes into a new one.
    send(batch.subarray(0, used));
    batch = Buffer.allocUnsafe(BATCH_BYTES);
    used = 0;
  };

  return {
    write(text) {
      // A UTF-16 unit takes at most 3 bytes in UTF-8.
      if (text.length * 3 > BATCH_BYTES - used) writeBatch();
      if (text.length * 3 > BATCH_BYTES) send(text);
      else used += batch.write(text, used, 'utf8');
    },
    drain() {
      writeBatch();
      if (!full) return undefined;
      full = false;
      return new Promise<void>((resolve, reject) => {
        const done = (error?: unknown): void => {
          stream.off('drain', onDrain);
          stream.off('error', onError);
          stream.off('close', onDrain);
          if (error) reject(error);
          else resolve();
        };
        const onDrain = (): void => done();
        const onError = (error: unknown): void => done(error ?? new Error('output stream error'));
        stream.on('drain', onDrain);
        stream.on('error', onError);
        stream.on('close', onDrain);
      });
    },
  };
}
