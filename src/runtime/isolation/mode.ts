/**
 * The isolation an attempt asks for and the isolation it got (recorded in `meta.N.json` as `isolation`).
 */
import { AgentHarnessError } from '../../errors/index.js';
import type { IsolationMode } from '../../protocol/meta.js';
import { ISOLATION_MODE_VALUES } from '../../protocol/versions.js';
import { NAMESPACE_INIT_ENV, namespaceInitSetting } from './init-scripts.js';

export { NAMESPACE_INIT_ENV } from './init-scripts.js';

/** The environment variable that sets the default mode. */
export const ISOLATION_ENV = 'AGENT_HARNESS_ISOLATION';

/** Which init `AGENT_HARNESS_NAMESPACE_INIT` asks for; CONFIG_INVALID for a value other than `auto` or `node`. */
export function resolveNamespaceInit(env: NodeJS.ProcessEnv = process.env): 'auto' | 'node' {
  const raw = namespaceInitSetting(env);
  if (raw === 'auto' || raw === 'node') return raw;
  throw new AgentHarnessError('CONFIG_INVALID', `${NAMESPACE_INIT_ENV}="${raw}" is not one of auto, node.`, { details: { value: raw } });
}

/**
 * The mode from an explicit option, else `AGENT_HARNESS_ISOLATION`, else `auto`; CONFIG_INVALID for anything else
 * (and for a bad `AGENT_HARNESS_NAMESPACE_INIT`, which is then reported as a bad isolation mode is: the attempt fails
 * with CONFIG_INVALID before its engine starts).
 */
export function resolveIsolationMode(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): IsolationMode {
  resolveNamespaceInit(env);
  const raw = explicit ?? env[ISOLATION_ENV] ?? 'auto';
  // A check of three strings, not IsolationModeSchema: that would load the audit meta's schemas before an attempt.
  if (!(ISOLATION_MODE_VALUES as readonly string[]).includes(raw)) {
    throw new AgentHarnessError('CONFIG_INVALID', `Isolation mode "${raw}"${explicit === undefined ? ` (from ${ISOLATION_ENV})` : ''} is not one of auto, require, off.`, { details: { value: raw } });
  }
  return raw as IsolationMode;
}
