/**
 * Qwen Code's own ACP mode (0.24.4: `qwen --acp`), with the attempt's prepared engine as is: its settings, trust
 * entry, placeholder key and base URL at the scripted model.
 */
import type { AcpSupport } from '../engine.js';

/** qwen over ACP. */
export const acp: AcpSupport = {
  via: 'native',
  command: (ctx) => ({ file: ctx.executable, args: ['--acp'], env: {} }),
  // qwen 0.24.4 hides session/new servers' tools behind its tool search: its agent options turn that off.
  mcpInAgentOptions: true,
};
