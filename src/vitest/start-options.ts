/**
 * The shape of `agent.start(engine, options)`'s options, checked before anything runs: a careless call (`skills:
 * 'skills'`, `prompt: 42`, `options` null, `translateMode: 9`) is CONFIG_INVALID naming the option and its value,
 * not a TypeError from deep inside or an attempt recorded as INTERNAL_ERROR. Values the attempt checks itself
 * (timeouts, expose paths, scripts, workspace paths) keep their own errors; only the types are checked here.
 */
import * as z from 'zod';
import { AgentHarnessError } from '../errors/index.js';
import { ModelModeSchema, TranslateModeSchema } from '../protocol/index.js';

const STRINGS = z.array(z.string());

/** The options' types (unknown keys are left alone). */
const AgentStartOptionsSchema = z.object({
  prompt: z.string().optional(),
  args: STRINGS.optional(),
  skills: STRINGS.optional(),
  onlySkills: STRINGS.optional(),
  translateMode: z.union(TranslateModeSchema.options, { error: 'a translate view is 0, 1, 2 or 3' }).optional(),
  template: z.string().optional(),
  files: z
    .record(z.string(), z.union([z.string(), z.instanceof(Uint8Array)], { error: 'a file is a string or bytes' }))
    .optional(),
  git: z.boolean().optional(),
  model: z.union([ModelModeSchema, z.literal('auto')]).optional(),
  cassette: z.string().optional(),
  fork: z
    .object({
      at: z.number().int().nonnegative(),
      to: z.enum(['scripted', 'live']).optional(),
      cassette: z.string().optional(),
    })
    .optional(),
  expose: z.array(z.unknown()).optional(),
});

function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Checks `agent.start()`'s options; CONFIG_INVALID names the first wrong option and its value. */
export function checkAgentStartOptions(engine: string, options: unknown): void {
  const where = `agent.start(${JSON.stringify(engine)})`;
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `${where} options must be an object, not ${describeValue(options)}.`,
      { details: { field: '(options)', value: describeValue(options) } },
    );
  const result = AgentStartOptionsSchema.safeParse(options);
  if (result.success) return;
  const issue = result.error.issues[0]!;
  let value: unknown = options;
  for (const key of issue.path)
    value =
      value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key as PropertyKey] : undefined;
  const field = issue.path.map(String).join('.');
  throw new AgentHarnessError(
    'CONFIG_INVALID',
    `${where} option ${field} = ${describeValue(value)} is invalid: ${issue.message}`,
    { details: { field, value: describeValue(value) } },
  );
}
