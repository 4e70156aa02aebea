/**
 * The ACP SDK (`@agentclientprotocol/sdk`) is an optional peer dependency: the ACP client (an engine over ACP) and
 * the ACP agent (`agent-harness acp`) load it here on first use, so `agent-harness` installs and runs every native
 * engine without it; a missing SDK is DEPENDENCY_MISSING naming it and its install command.
 */
import type * as AcpSdkModule from '@agentclientprotocol/sdk';
import { loadOptionalPeer } from '../../runtime/optional-peer.js';

/** The `@agentclientprotocol/sdk` module. */
export type AcpSdk = typeof AcpSdkModule;

/** Loads `@agentclientprotocol/sdk` (DEPENDENCY_MISSING when it is not installed). */
export function loadAcpSdk(): Promise<AcpSdk> {
  return loadOptionalPeer({
    packages: ['@agentclientprotocol/sdk'],
    neededBy: 'the Agent Client Protocol (an engine over ACP, agent-harness acp)',
    load: () => import('@agentclientprotocol/sdk'),
  });
}
