/**
 * claude over the Agent Client Protocol, through Zed's adapter `@zed-industries/claude-agent-acp` (pinned 0.23.1, a
 * devDependency like the CLI). The adapter is a Node script (`dist/index.js`, bin `claude-agent-acp`) on the Claude
 * Agent SDK 0.2.83, which starts a Claude Code process per session: `CLAUDE_CODE_EXECUTABLE` points it at the pinned
 * `@anthropic-ai/claude-code` the native transport runs (else the SDK would run its own bundled copy). Everything
 * else comes from the prepared engine env: `CLAUDE_CONFIG_DIR` in the managed home, `ANTHROPIC_BASE_URL` at the
 * scripted model and its placeholder key, the quiet switches, and `IS_SANDBOX=1`, without which the adapter offers
 * no `bypassPermissions` mode when run as root. Measured facts: docs/acp.md.
 */
import type { AcpCommand, AcpLaunchContext, AcpSupport } from '../engine.js';
import { adapterFile } from '../acp/adapter-package.js';

/** The adapter's npm package. */
export const CLAUDE_ACP_PACKAGE = '@zed-industries/claude-agent-acp';
/** Its bin. */
export const CLAUDE_ACP_BIN = 'claude-agent-acp';
/** The bin's script inside the package. */
const CLAUDE_ACP_SCRIPT = 'dist/index.js';

/**
 * The adapter's command: this Node running the adapter's script (the bin's `#!/usr/bin/env node` would depend on the
 * engine env's PATH), with the pinned CLI as the SDK's Claude Code.
 */
function claudeAcpCommand(ctx: AcpLaunchContext): AcpCommand {
  const script = adapterFile('claude', CLAUDE_ACP_PACKAGE, CLAUDE_ACP_SCRIPT);
  return { file: process.execPath, args: [script], env: { CLAUDE_CODE_EXECUTABLE: ctx.executable } };
}

/** claude's ACP support: the pinned adapter driving the pinned CLI. */
export const acp: AcpSupport = {
  via: { package: CLAUDE_ACP_PACKAGE, bin: CLAUDE_ACP_BIN },
  command: claudeAcpCommand,
  installed: () => void adapterFile('claude', CLAUDE_ACP_PACKAGE, CLAUDE_ACP_SCRIPT),
  // The adapter does not exit when its stdin closes after a session either, but claude's transcript in its SDK mode
  // records no turn end (no `turn_duration` record) to stop it on: it is stopped after the client's grace.
};
