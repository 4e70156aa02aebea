/**
 * GitHub Copilot CLI's own ACP mode (1.0.102: `copilot --acp`, "Start as Agent Client Protocol server", on stdio),
 * with the attempt's prepared engine as is: `COPILOT_HOME`, the offline BYOK provider env and the trust entry.
 */
import type { AcpSupport } from '../engine.js';

/** copilot over ACP. */
export const acp: AcpSupport = {
  via: 'native',
  command: (ctx) => ({ file: ctx.executable, args: ['--acp', '--no-auto-update'], env: {} }),
  // copilot 1.0.102 rejects a stdio server of session/new: its agent options give those by `--additional-mcp-config`.
  mcpInAgentOptions: true,
};
