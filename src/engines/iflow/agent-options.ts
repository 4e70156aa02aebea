/**
 * Agent options on iflow: none can be verified here (no iflow CLI is reachable), so every option beyond the
 * headless default (`--yolo`) is refused rather than guessed.
 */
import type { AgentOptions } from '../../protocol/index.js';
import {
  isDefaultAgentOptions,
  noAgentOptions,
  refuseUnavailable,
  type AppliedAgentOptions,
} from '../agent-options.js';

const WHY = 'its controls are not mapped (no iflow CLI is reachable here to verify them)';

/** The defaults apply as they are; anything else is ENGINE_CAPABILITY_UNAVAILABLE naming the option. */
export function applyIflowAgentOptions(options: AgentOptions): AppliedAgentOptions {
  if (isDefaultAgentOptions(options)) return noAgentOptions();
  refuseUnavailable('iflow', [
    [options.mcpServers.length > 0, 'mcpServers', WHY],
    [options.permissionMode !== 'bypassPermissions', `permissionMode:${options.permissionMode}`, WHY],
    [options.allowedTools.length > 0, 'allowedTools', WHY],
    [options.disallowedTools.length > 0, 'disallowedTools', WHY],
    [options.systemPrompt !== undefined, 'systemPrompt', WHY],
    [options.maxTurns !== undefined, 'maxTurns', WHY],
  ]);
  return noAgentOptions();
}
