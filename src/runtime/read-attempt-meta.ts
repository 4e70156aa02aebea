/**
 * An attempt's `meta.N.json` read for a consumer that can do without it (`translate`, `export`): the meta, or null
 * when it is missing, truncated or invalid (an attempt whose harness died mid-write, a reserved attempt not started
 * yet). The schema is loaded when first needed, so a command that never reads a meta never loads zod.
 */
import type { AttemptMeta } from '../protocol/index.js';
import { MAX_CONFIG_BYTES, readInputBytesSync } from './bounded-input.js';

/** The attempt meta in `file`, or null when it cannot be read as one. */
export async function readAttemptMetaOrNull(file: string): Promise<AttemptMeta | null> {
  const { AttemptMetaSchema } = await import('../protocol/index.js');
  try {
    const parsed = AttemptMetaSchema.safeParse(
      JSON.parse(readInputBytesSync(file, { what: 'attempt meta', maxBytes: MAX_CONFIG_BYTES }).toString('utf8')),
    );
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
