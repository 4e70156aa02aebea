/**
 * ATIF v1.7 (Agent Trajectory Interchange Format, Harbor's RFC 0001) as zod schemas: the field names, types and
 * required/optional status of the RFC's tables (root, AgentSchema, StepObject, ToolCallSchema, ObservationSchema,
 * ObservationResultSchema, MetricsSchema, FinalMetricsSchema, ContentPart, SubagentTrajectoryRef), plus its
 * normative rules: `step_id` numbers the steps from 1 in order; `model_name`, `reasoning_effort`,
 * `reasoning_content`, `tool_calls` and `metrics` belong to agent steps only; an observation result's
 * `source_call_id` names a `tool_call_id` of its own step; `llm_call_count: 0` excludes `metrics` and
 * `reasoning_content`; a subagent ref sets `trajectory_id` or `trajectory_path`; embedded subagents carry unique
 * `trajectory_id`s. Unknown keys are refused (Harbor's models forbid extra keys: custom data goes in `extra`).
 */
import * as z from 'zod';

/** The schema version this project writes. */
export const ATIF_SCHEMA_VERSION = 'ATIF-v1.7';

const Extra = z.record(z.string(), z.unknown());
const NonNegativeInt = z.number().int().nonnegative();

/** ImageSourceSchema (v1.6+): an image stored beside the trajectory. */
export const AtifImageSourceSchema = z.strictObject({
  media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
  path: z.string(),
});

/** ContentPartSchema (v1.6+): text or an image. */
export const AtifContentPartSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({ type: z.literal('image'), source: AtifImageSourceSchema }),
]);

const Content = z.union([z.string(), z.array(AtifContentPartSchema)]);

/** ToolCallSchema. */
export const AtifToolCallSchema = z.strictObject({
  tool_call_id: z.string().min(1),
  function_name: z.string().min(1),
  arguments: Extra,
  extra: Extra.optional(),
});

/** SubagentTrajectoryRefSchema (v1.7: resolvable by `trajectory_id` or `trajectory_path`). */
export const AtifSubagentTrajectoryRefSchema = z
  .strictObject({
    trajectory_id: z.string().nullable().optional(),
    trajectory_path: z.string().nullable().optional(),
    session_id: z.string().nullable().optional(),
    extra: Extra.optional(),
  })
  .refine((ref) => Boolean(ref.trajectory_id) || Boolean(ref.trajectory_path), {
    message: 'a subagent_trajectory_ref sets trajectory_id or trajectory_path',
  });

/** ObservationResultSchema. */
export const AtifObservationResultSchema = z.strictObject({
  source_call_id: z.string().nullable().optional(),
  content: Content.nullable().optional(),
  subagent_trajectory_ref: z.array(AtifSubagentTrajectoryRefSchema).nullable().optional(),
  extra: Extra.optional(),
});

/** ObservationSchema. */
export const AtifObservationSchema = z.strictObject({ results: z.array(AtifObservationResultSchema) });

/** MetricsSchema (per step; `prompt_tokens` includes `cached_tokens`). */
export const AtifMetricsSchema = z.strictObject({
  prompt_tokens: NonNegativeInt.nullable().optional(),
  completion_tokens: NonNegativeInt.nullable().optional(),
  cached_tokens: NonNegativeInt.nullable().optional(),
  cost_usd: z.number().nonnegative().nullable().optional(),
  prompt_token_ids: z.array(z.number().int()).nullable().optional(),
  completion_token_ids: z.array(z.number().int()).nullable().optional(),
  logprobs: z.array(z.number()).nullable().optional(),
  extra: Extra.optional(),
});

/** FinalMetricsSchema. */
export const AtifFinalMetricsSchema = z.strictObject({
  total_prompt_tokens: NonNegativeInt.nullable().optional(),
  total_completion_tokens: NonNegativeInt.nullable().optional(),
  total_cached_tokens: NonNegativeInt.nullable().optional(),
  total_cost_usd: z.number().nonnegative().nullable().optional(),
  total_steps: NonNegativeInt.nullable().optional(),
  extra: Extra.optional(),
});

/** AgentSchema. */
export const AtifAgentSchema = z.strictObject({
  name: z.string().min(1),
  version: z.string().min(1),
  model_name: z.string().nullable().optional(),
  tool_definitions: z.array(z.record(z.string(), z.unknown())).nullable().optional(),
  extra: Extra.optional(),
});

const AGENT_ONLY = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'] as const;

/** StepObject, with the rules that tie its fields together. */
export const AtifStepSchema = z
  .strictObject({
    step_id: z.number().int().positive(),
    timestamp: z.iso.datetime({ offset: true }).nullable().optional(),
    source: z.enum(['system', 'user', 'agent']),
    model_name: z.string().nullable().optional(),
    reasoning_effort: z.union([z.string(), z.number()]).nullable().optional(),
    message: Content,
    reasoning_content: z.string().nullable().optional(),
    tool_calls: z.array(AtifToolCallSchema).nullable().optional(),
    observation: AtifObservationSchema.nullable().optional(),
    metrics: AtifMetricsSchema.nullable().optional(),
    extra: Extra.optional(),
    llm_call_count: NonNegativeInt.nullable().optional(),
    is_copied_context: z.boolean().nullable().optional(),
  })
  .superRefine((step, ctx) => {
    if (step.source !== 'agent') {
      for (const key of AGENT_ONLY)
        if (step[key] !== undefined && step[key] !== null)
          ctx.addIssue({ code: 'custom', path: [key], message: `${key} is only applicable to agent steps` });
    }
    if (step.llm_call_count === 0 && step.source === 'agent') {
      for (const key of ['metrics', 'reasoning_content'] as const)
        if (step[key] !== undefined && step[key] !== null)
          ctx.addIssue({ code: 'custom', path: [key], message: `${key} must be absent when llm_call_count is 0` });
    }
    const ids = new Set<string>();
    for (const [index, call] of (step.tool_calls ?? []).entries()) {
      if (ids.has(call.tool_call_id))
        ctx.addIssue({
          code: 'custom',
          path: ['tool_calls', index, 'tool_call_id'],
          message: `tool_call_id ${call.tool_call_id} repeats within the step`,
        });
      ids.add(call.tool_call_id);
    }
    for (const [index, result] of (step.observation?.results ?? []).entries()) {
      if (result.source_call_id && !ids.has(result.source_call_id))
        ctx.addIssue({
          code: 'custom',
          path: ['observation', 'results', index, 'source_call_id'],
          message: `source_call_id ${result.source_call_id} names no tool_call_id of this step`,
        });
    }
  });

/** The root of an ATIF trajectory (v1.7). */
export interface AtifTrajectory {
  schema_version: string;
  session_id?: string | null | undefined;
  trajectory_id?: string | null | undefined;
  agent: z.infer<typeof AtifAgentSchema>;
  steps: Array<z.infer<typeof AtifStepSchema>>;
  notes?: string | null | undefined;
  final_metrics?: z.infer<typeof AtifFinalMetricsSchema> | null | undefined;
  continued_trajectory_ref?: string | null | undefined;
  extra?: Record<string, unknown> | undefined;
  subagent_trajectories?: AtifTrajectory[] | null | undefined;
}

/** The root Trajectory: `schema_version` "ATIF-v1.x", steps numbered 1..n, embedded subagents with unique ids. */
export const AtifTrajectorySchema: z.ZodType<AtifTrajectory> = z.lazy(() =>
  z
    .strictObject({
      schema_version: z.string().regex(/^ATIF-v1\.[0-7]$/),
      session_id: z.string().nullable().optional(),
      trajectory_id: z.string().nullable().optional(),
      agent: AtifAgentSchema,
      steps: z.array(AtifStepSchema).min(1),
      notes: z.string().nullable().optional(),
      final_metrics: AtifFinalMetricsSchema.nullable().optional(),
      continued_trajectory_ref: z.string().nullable().optional(),
      extra: Extra.optional(),
      subagent_trajectories: z.array(AtifTrajectorySchema).nullable().optional(),
    })
    .superRefine((root, ctx) => {
      root.steps.forEach((step, index) => {
        if (step.step_id !== index + 1)
          ctx.addIssue({
            code: 'custom',
            path: ['steps', index, 'step_id'],
            message: `step_id ${step.step_id} at position ${index + 1}: steps are numbered from 1 in order`,
          });
      });
      const seen = new Set<string>();
      for (const [index, sub] of (root.subagent_trajectories ?? []).entries()) {
        if (!sub.trajectory_id)
          ctx.addIssue({
            code: 'custom',
            path: ['subagent_trajectories', index, 'trajectory_id'],
            message: 'an embedded subagent trajectory sets trajectory_id',
          });
        else if (seen.has(sub.trajectory_id))
          ctx.addIssue({
            code: 'custom',
            path: ['subagent_trajectories', index, 'trajectory_id'],
            message: `trajectory_id ${sub.trajectory_id} repeats among the subagent trajectories`,
          });
        else seen.add(sub.trajectory_id);
      }
    }),
);

/** An ATIF step. */
export type AtifStep = z.infer<typeof AtifStepSchema>;
/** An ATIF tool call. */
export type AtifToolCall = z.infer<typeof AtifToolCallSchema>;
/** An ATIF observation result. */
export type AtifObservationResult = z.infer<typeof AtifObservationResultSchema>;
/** ATIF per-step metrics. */
export type AtifMetrics = z.infer<typeof AtifMetricsSchema>;
