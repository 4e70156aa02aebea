/**
 * Validating a user-given config with its zod schema: the value parsed, or CONFIG_INVALID whose message names the
 * first bad field and whose details list every issue.
 */
import type * as z from 'zod';
import { AgentHarnessError } from './agent-harness-error.js';

/** Parses `value` with `schema`; `label` prefixes the field path in the message (`AgentProviderConfig.prompt`). */
export function parseConfig<S extends z.ZodType>(schema: S, value: unknown, label: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
  throw new AgentHarnessError('CONFIG_INVALID', `${label}.${field}: ${issue?.message ?? 'invalid'}`, {
    details: { field, issues: result.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
  });
}
