/**
 * gemini's own ACP mode (0.61.0: `gemini --acp`; `--experimental-acp` is its deprecated name), with the attempt's
 * prepared engine as is: its settings, trust entry, placeholder key and base URL at the scripted model
 * (docs/acp.md has the measured facts).
 */
import type { AcpSupport } from '../engine.js';
import { setAsideChatNames } from './session-store.js';

/** gemini over ACP. */
export const acp: AcpSupport = {
  via: 'native',
  command: (ctx) => ({ file: ctx.executable, args: ['--acp'], env: {} }),
  beforeLoad: (ctx) => setAsideChatNames(ctx),
};
