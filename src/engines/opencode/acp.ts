/**
 * opencode's own ACP mode (1.18.33: `opencode acp`, on stdio), with the attempt's prepared engine as is: the managed
 * config (its scripted provider and model) and the run directory as its `--cwd` (docs/acp.md).
 */
import type { AcpSupport } from '../engine.js';

/** opencode over ACP. */
export const acp: AcpSupport = {
  via: 'native',
  command: (ctx) => ({ file: ctx.executable, args: ['acp', '--cwd', ctx.runDir], env: {} }),
};
