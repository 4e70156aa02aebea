/**
 * The secrets an attempt's audit must not keep (issue 42). When the harness hands a real vendor key to the upstream
 * (`record`, a replay forked onto the live model) or to the engine (`live`), an upstream that echoes the key back, or
 * an engine that prints it, would put it in the raw stdout log, RASP, FCMP and the model request log, though the
 * cassette has it redacted. Those attempts redact the same values as the cassette (the vendor keys and the values of
 * the user's secret-named variables, redact.ts) with the same placeholders, before anything reaches disk; the other
 * attempts hold no real key and pay nothing.
 *
 * Raw output is redacted as it streams: a secret cut between two chunks is still found, because the end of a chunk
 * that could begin a secret is held back until the next chunk (or the end) says whether it does. Byte offsets
 * (RASP `raw_ref`) are those of the redacted log, which is the one on disk.
 */
import type { StreamName } from '../protocol/index.js';
import type { ModelMode } from '../protocol/index.js';

/** One secret value, as bytes, and its placeholder. */
interface SecretBytes {
  value: Buffer;
  placeholder: Buffer;
}

/** Redacts the known secret values of one attempt out of what its audit writes. */
export interface AuditRedaction {
  /** `text` with every secret replaced by its placeholder (a whole record: a model request log line). */
  text(text: string): string;
  /** A redactor of raw chunks, one carry per stream (see the module comment). */
  chunks(): ChunkRedactor;
}

/** Redacts raw chunks as they stream. */
export interface ChunkRedactor {
  /** The part of `chunk` (after what was held back of the stream) that can be written now, redacted. */
  push(stream: StreamName, chunk: Uint8Array): Uint8Array;
  /** What is still held back of `stream` (at its end: it was no secret after all). */
  flush(stream: StreamName): Uint8Array;
}

/** Whether an attempt in `modelMode` hands a real key to the upstream or the engine (a live fork included). */
export function handsOutRealKey(modelMode: ModelMode, forkTo: string | undefined): boolean {
  return modelMode === 'record' || modelMode === 'live' || forkTo === 'live';
}

/**
 * The audit redaction of an attempt that hands out a real key (see {@link handsOutRealKey}), with the secrets found
 * in `hostEnv`; null when there is nothing to redact. The cassette's redactor is loaded only then.
 */
export async function auditRedactionOf(hostEnv: NodeJS.ProcessEnv): Promise<AuditRedaction | null> {
  const [{ Redactor }, { KEY_VARIABLES, vendorKey }] = await Promise.all([
    import('../cassette/redact.js'),
    import('../cassette/record.js'),
  ]);
  const keys = (Object.keys(KEY_VARIABLES) as Array<keyof typeof KEY_VARIABLES>).flatMap((wire) => {
    const key = vendorKey(wire, hostEnv);
    return key ? [{ value: key.value, rule: `vendor-key:${key.name}` }] : [];
  });
  const redactor = new Redactor(hostEnv, keys);
  if (redactor.secretValues.length === 0) return null;
  const secrets: SecretBytes[] = redactor.secretValues.map(({ value, rule }) => ({
    value: Buffer.from(value),
    placeholder: Buffer.from(redactor.placeholder(rule, value)),
  }));
  return { text: (text) => redactor.text(text), chunks: () => chunkRedactor(secrets) };
}

/** The earliest secret in `data` from `from` on (the longest one at a tie), or null. */
function nextSecret(
  data: Buffer,
  from: number,
  secrets: readonly SecretBytes[],
): { at: number; secret: SecretBytes } | null {
  let found: { at: number; secret: SecretBytes } | null = null;
  for (const secret of secrets) {
    const at = data.indexOf(secret.value, from);
    if (at >= 0 && (found === null || at < found.at)) found = { at, secret };
  }
  return found;
}

/** The length of the longest end of `data` after `from` that is a proper beginning of a secret (0: none). */
function heldLength(data: Buffer, from: number, secrets: readonly SecretBytes[]): number {
  const longest = Math.max(...secrets.map((secret) => secret.value.length)) - 1;
  for (let length = Math.min(longest, data.length - from); length > 0; length -= 1) {
    const end = data.subarray(data.length - length);
    if (secrets.some((secret) => secret.value.length > length && secret.value.subarray(0, length).equals(end)))
      return length;
  }
  return 0;
}

function chunkRedactor(secrets: readonly SecretBytes[]): ChunkRedactor {
  const carries = new Map<StreamName, Buffer>();
  return {
    push(stream, chunk) {
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const carry = carries.get(stream);
      const data = carry ? Buffer.concat([carry, bytes]) : bytes;
      const pieces: Buffer[] = [];
      let position = 0;
      for (let found = nextSecret(data, 0, secrets); found; found = nextSecret(data, position, secrets)) {
        pieces.push(data.subarray(position, found.at), found.secret.placeholder);
        position = found.at + found.secret.value.length;
      }
      const held = heldLength(data, position, secrets);
      // Copied: the chunk's buffer may be reused by its reader once this returns.
      if (held > 0) carries.set(stream, Buffer.from(data.subarray(data.length - held)));
      else carries.delete(stream);
      pieces.push(data.subarray(position, data.length - held));
      return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
    },
    flush(stream) {
      const carry = carries.get(stream) ?? Buffer.alloc(0);
      carries.delete(stream);
      return carry;
    },
  };
}
