/** The orchestrator's one config object: model per phase, timeouts and limits (validated with zod). */
import * as z from 'zod';
import { parseConfig } from '../errors/index.js';

/** Model names, timeouts and limits in one place. */
export const OrchestratorConfigSchema = z
  .object({
    models: z
      .object({
        intent: z.string().min(1),
        memory: z.string().min(1),
        respond: z.string().min(1),
        utility: z.string().min(1),
      })
      .strict(),
    timeouts: z
      .object({ callMs: z.number().int().min(1).default(60_000), turnMs: z.number().int().min(1).default(300_000) })
      .strict()
      .default({ callMs: 60_000, turnMs: 300_000 }),
    limits: z
      .object({
        intentMaxIterations: z.number().int().min(1).max(32).default(4),
        historyWindow: z.number().int().min(0).default(12),
        maxRetries: z.number().int().min(0).max(10).default(2),
      })
      .strict()
      .default({ intentMaxIterations: 4, historyWindow: 12, maxRetries: 2 }),
    /** Stream model answers (SSE) instead of whole responses. */
    stream: z.boolean().default(false),
  })
  .strict();
/** The orchestrator's config, defaults filled. */
export type OrchestratorConfig = z.infer<typeof OrchestratorConfigSchema>;
/** The orchestrator's config as written (defaults optional). */
export type OrchestratorConfigInput = z.input<typeof OrchestratorConfigSchema>;

/** The per-phase model names as seed 004's harnesses read them (`ctx.config.intentModel`). */
export interface PhaseModelNames {
  intentModel: string;
  memoryModel: string;
  responseModel: string;
  utilityModel: string;
}

/** What a harness sees as `ctx.config`: the orchestrator's config plus the per-phase model names. */
export type HarnessContextConfig = OrchestratorConfig & PhaseModelNames;

/** The config a harness context carries (the orchestrator builds it for each turn). */
export function harnessContextConfig(config: OrchestratorConfig): HarnessContextConfig {
  return {
    ...config,
    intentModel: config.models.intent,
    memoryModel: config.models.memory,
    responseModel: config.models.respond,
    utilityModel: config.models.utility,
  };
}

/** Validates a config; CONFIG_INVALID names the offending path. */
export function buildOrchestratorConfig(value: unknown): OrchestratorConfig {
  return parseConfig(OrchestratorConfigSchema, value, 'orchestrator config');
}
