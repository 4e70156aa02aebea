/**
 * Writing a long output (a translate view of a big recording) to a stream without holding it: text is gathered
 * into batches of about {@link BATCH_CHARS} characters, each written as soon as it is full, and {@link BatchedWriter.drain}
 * waits for the stream to take what it was given (its `drain` event) whenever a write said it is full, so the
 * producer can be held back between input chunks. (Encoding each text straight into a Buffer batch was tried: ~25%
 * faster on a 100 MiB view 2, but ~12 MiB more peak RSS, which the translate memory target cannot spare.)
 */

/** Characters gathered before one `write` to the stream. */
export const BATCH_CHARS = 64 * 1024;

/** A batching writer over one stream. */
export interface BatchedWriter {
  /** Adds `text`; writes the batch once it is full. */
  write(text: string): void;
  /** Writes the batch; resolves once the stream can take more (at once when it was not full), rejects on its error. */
  drain(): Promise<void> | undefined;
}

/** Creates a {@link BatchedWriter} over `stream` (stdout of the CLI). */
export function createBatchedWriter(stream: NodeJS.WritableStream): BatchedWriter {
  let parts: string[] = [];
  let size = 0;
  let full = false;

  const writeBatch = (): void => {
    if (parts.length === 0) return;
    const text = parts.length === 1 ? parts[0]! : parts.join('');
    parts = [];
    size = 0;
    if (!stream.write(text)) full = true;
  };

  return {
    write(text) {
      parts.push(text);
      size += text.length;
      if (size >= BATCH_CHARS) writeBatch();
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
