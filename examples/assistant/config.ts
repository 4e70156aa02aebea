/** The example assistant's config: the one place model names, timeouts and limits are chosen. */
import {
  buildOrchestratorConfig,
  type OrchestratorConfig,
  type OrchestratorConfigInput,
} from 'agent-harness/orchestrator';

/** Model names the demo script's routes match on. */
export const DEMO_CONFIG: OrchestratorConfigInput = {
  models: { intent: 'intent-small', memory: 'memory-small', respond: 'respond-large', utility: 'utility-small' },
  timeouts: { callMs: 30_000, turnMs: 120_000 },
  limits: { intentMaxIterations: 4, historyWindow: 12, maxRetries: 2 },
};

/** The demo config with `overrides` applied (validated). */
export function buildAssistantConfig(overrides: Partial<OrchestratorConfigInput> = {}): OrchestratorConfig {
  return buildOrchestratorConfig({ ...DEMO_CONFIG, ...overrides });
}
