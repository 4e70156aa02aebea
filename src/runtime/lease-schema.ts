/**
 * The schema of a lease file (`lease.ts`). A module of its own, imported only when a lease file is there to read: a
 * run's home is the agent's to write, so a lease found there is checked, but the start of an attempt (which finds
 * none, normally) does not load zod for it (issue 44).
 */
import * as z from 'zod';
import type { Lease } from './lease.js';

/** A lease file as `takeLease` writes it; unknown keys are dropped. */
export const LeaseSchema = z.object({
  id: z.string(),
  owner: z.object({ pid: z.number().int(), start_time: z.string().nullable() }),
  file: z.string(),
  format: z.enum(['JSON', 'TOML']),
  key_path: z.array(z.string()).min(1),
  created_at: z.string(),
}) satisfies z.ZodType<Lease>;
