/**
 * The isolation an attempt asks for and the isolation it got (recorded in `meta.N.json` as `isolation`).
 */
import { AgentHarnessError } from '../../errors/index.js';
import type { IsolationMode } from '../../protocol/meta.js';
import { ISOLATION_MODE_VALUES } from '../../protocol/versions.js';

/** The environment variable that sets the default mode. */
export const ISOLATION_ENV = 'AGENT_HARNESS_ISOLATION';

/** The mode from an explicit option, else `AGENT_HARNESS_ISOLATION`, else `auto`; CONFIG_INVALID for anything else. */
export function resolveIsolationMode(
  explicit: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): IsolationMode {
  const raw = explicit ?? env[ISOLATION_ENV] ?? 'auto';
  // A check of three strings, not IsolationModeSchema: that would load the audit meta's schemas before an attempt.
  if (!(ISOLATION_MODE_VALUES as readonly string[]).includes(raw)) {
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `Isolation mode "${raw}"${explicit === undefined ? ` (from ${ISOLATION_ENV})` : ''} is not one of auto, require, off.`,
      { details: { value: raw } },
    );
  }
  return raw as IsolationMode;
}
