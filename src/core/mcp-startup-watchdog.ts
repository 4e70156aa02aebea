/**
 * The harness's bound on an engine stuck starting its stdio MCP servers. An engine starts them itself and reads
 * their stdout; a server that floods it (JSON-RPC notifications forever, never answering `initialize`) keeps
 * claude's and opencode's own MCP clients busy reading, past their own startup timeout, and the turn never starts
 * (no model call; claude may still print its init, the flood starving its turn). So: when the engine has made no
 * model call (in live mode, where the harness sees none: printed nothing) by the longest `startupTimeoutMs` of its
 * stdio servers plus {@link MCP_TURN_START_GRACE_MS}, the attempt is ended with MCP_SERVER_STARTUP_STALLED naming the
 * servers.
 */
import { AgentHarnessError } from '../errors/index.js';
import { MCP_STARTUP_TIMEOUT_MS } from '../protocol/agent-option-defaults.js';
import type { McpServerDef } from '../protocol/index.js';
import { readIntegerEnv } from '../runtime/integer-setting.js';

/** The time an engine has past its servers' startup timeout to start its turn (its own boot, under load). */
export const MCP_TURN_START_GRACE_MS = 30_000;

/** The variable that changes {@link MCP_TURN_START_GRACE_MS} (ms). */
export const MCP_TURN_START_GRACE_ENV = 'AGENT_HARNESS_MCP_TURN_GRACE_MS';

/** The grace {@link MCP_TURN_START_GRACE_ENV} of `env` sets; CONFIG_INVALID for a value that is not whole ms. */
export function mcpTurnStartGraceMs(env: NodeJS.ProcessEnv): number {
  return readIntegerEnv(env, MCP_TURN_START_GRACE_ENV, {
    fallback: MCP_TURN_START_GRACE_MS,
    min: 0,
    max: 3_600_000,
    unit: 'ms',
  });
}

/** A running watchdog: `signal` aborts when it fires; `error` then says why. */
export interface McpStartupWatchdog {
  signal: AbortSignal;
  /** The attempt's error once the watchdog fired; null before (and when it never does). */
  readonly error: AgentHarnessError | null;
  /** Its turn has begun (live mode: the engine printed something), the watchdog stands down. */
  output(): void;
  /** Stops the timer (the engine is done). */
  stop(): void;
}

/**
 * Arms the watchdog for an attempt's stdio MCP servers; null when it has none. `modelCalled` says whether the engine
 * has made a real model call yet (checked when the time is up); `onStall` is told the error before the engine is
 * ended (the attempt's diagnostic, ahead of its exit); `graceMs` is the time past the servers' startup timeout.
 */
export function startMcpStartupWatchdog(
  servers: readonly McpServerDef[] | undefined,
  modelCalled: () => boolean,
  onStall: (error: AgentHarnessError) => void,
  graceMs = MCP_TURN_START_GRACE_MS,
): McpStartupWatchdog | null {
  const stdio = (servers ?? []).filter((server) => server.command);
  if (stdio.length === 0) return null;
  const startupMs = Math.max(...stdio.map((server) => server.startupTimeoutMs ?? MCP_STARTUP_TIMEOUT_MS));
  const limitMs = startupMs + graceMs;
  const controller = new AbortController();
  let error: AgentHarnessError | null = null;
  let begun = false;
  const timer = setTimeout(() => {
    if (begun || modelCalled()) return;
    const names = stdio.map((server) => `"${server.name}"`).join(', ');
    error = new AgentHarnessError(
      'MCP_SERVER_STARTUP_STALLED',
      `The engine had not started its turn ${limitMs} ms after launch (no model call; in live mode, no output) while starting its stdio MCP server${stdio.length > 1 ? 's' : ''} ${names} (startupTimeoutMs ${startupMs} + ${graceMs} ms grace); the attempt was ended. A server that prints to stdout before answering \`initialize\` (logs, a flood) can keep the engine's MCP client busy forever: check its command by hand, keep its logs on stderr.`,
      { details: { servers: stdio.map((server) => server.name), limit_ms: limitMs } },
    );
    onStall(error);
    controller.abort(error);
  }, limitMs);
  timer.unref?.();
  return {
    signal: controller.signal,
    get error() {
      return error;
    },
    output() {
      begun = true;
      clearTimeout(timer);
    },
    stop() {
      clearTimeout(timer);
    },
  };
}
