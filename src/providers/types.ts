/**
 * The AgentProvider contract (seed 003, names kept).
 */
import type { AgentEvent } from '../protocol/index.js';
import type { AgentProviderConfig } from './config.js';

/** One provider: `query` runs one turn and yields normalized events as they happen. */
export interface AgentProvider {
  readonly name: string;
  /**
   * Runs a query and yields normalized events: `session` first, `message`s, then `complete` (a failed turn: `error`,
   * then `complete` with `success: false`; an aborted query: `error` only).
   */
  query(config: AgentProviderConfig): AsyncIterable<AgentEvent>;
  /** Cleans up resources, if any. */
  dispose?(): Promise<void>;
}
