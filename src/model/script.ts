/**
 * The model script: an ordered list of turns written once and rendered per wire API.
 *
 * Format (JSON, `version` 1):
 *
 *   { "version": 1, "description"?: "...", "turns": [
 *       { "type": "text",  "text": "...", "reasoning"?: "..." },            assistant reply; the agent waits for the user
 *       { "type": "shell", "command": "echo hi > out.txt", "wait"?: false }, one shell tool call (run to its end unless wait is false)
 *       { "type": "final", "text": "...", "done"?: true, "reasoning"?: "..." }, final message (+ done marker line when done)
 *       { "type": "error", "status": 429, "message": "..." }               HTTP error in the vendor's JSON error shape
 *       { "type": "stall", "ms"?: 30000 }                                   200 + stream headers, then silence (then a drop)
 *       { "type": "malformed" }                                             200 with a body no client can parse
 *       { "type": "drop" }                                                  200, half an event, then the connection is cut
 *       { "type": "mcp_tool", "server": "echo", "tool": "echo", "arguments": {…} }  a call of an MCP server's tool
 *       { "type": "branch", "p": 0.8, "turns": [...], "else"?: [...] }      turns taken with probability p (seeded draw)
 *       { "type": "if_skill_offered", "name": "x", "turns": [...], "else"?: [...] }  turns taken when skill x was offered
 *       { "type": "follow_skill", "name": "x" }                             the stand-in follows skill x's fenced shell steps
 *   ], "seed"?: 7 }
 *
 * Turn selection is stateless: the turn answered is the number of model outputs already present in the
 * request's history (see each wire module's `countModelTurns`). A resumed session carries its whole history,
 * so it continues the script where it stopped, even against a fresh server or after `codex exec resume`.
 */
import * as z from 'zod';
import { AgentHarnessError } from '../errors/index.js';
import { DEFAULT_MAX_SCRIPT_BYTES, readInputText } from '../runtime/bounded-input.js';
import { readIntegerEnv } from '../runtime/integer-setting.js';
import { missingMcpToolCommand, SKILL_NAME, useSkillCommand, writeFileCommand } from './script-turns.js';

// What the server uses at run time, without zod; re-exported so that this module offers the whole script API.
export * from './script-turns.js';

/** An MCP server or tool name as engines expose it in tool names. */
const MCP_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Engine-neutral intents, lowered to shell turns when a script is parsed (every wire renders shell calls). */
const IntentSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('write_file'), path: z.string().min(1), content: z.string() }).strict(),
  z.object({ type: z.literal('use_skill'), name: z.string().regex(SKILL_NAME) }).strict(),
  z
    .object({
      type: z.literal('mcp_tool'),
      server: z.string().regex(MCP_NAME),
      tool: z.string().regex(MCP_NAME),
      arguments: z.record(z.string(), z.unknown()).default({}),
    })
    .strict(),
]);

/**
 * An intent becomes a `shell` turn that remembers the intent: a wire whose engine has a native tool for it (its tool
 * table's `write` / `skill`, `src/engines/<id>/tools.ts`) calls that tool; the others run the shell command.
 */
function lowerIntent(value: unknown): unknown {
  const intent = IntentSchema.safeParse(value);
  if (!intent.success) return value;
  const data = intent.data;
  if (data.type === 'write_file')
    return {
      type: 'shell',
      command: writeFileCommand(data.path, data.content),
      intent: { kind: 'write_file', path: data.path, content: data.content },
    };
  if (data.type === 'use_skill')
    return { type: 'shell', command: useSkillCommand(data.name), intent: { kind: 'use_skill', name: data.name } };
  return {
    type: 'shell',
    command: missingMcpToolCommand(data.server, data.tool),
    intent: { kind: 'mcp_tool', server: data.server, tool: data.tool, arguments: data.arguments },
  };
}

/** The intent a shell turn came from, when it came from one. */
const TurnIntentSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('write_file'), path: z.string().min(1), content: z.string() }).strict(),
  z.object({ kind: z.literal('use_skill'), name: z.string().regex(SKILL_NAME) }).strict(),
  z
    .object({
      kind: z.literal('mcp_tool'),
      server: z.string().regex(MCP_NAME),
      tool: z.string().regex(MCP_NAME),
      arguments: z.record(z.string(), z.unknown()),
    })
    .strict(),
]);
/** The intent a shell turn came from. */
export type TurnIntent = z.infer<typeof TurnIntentSchema>;

const RenderedTurnSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string(), reasoning: z.string().optional() }).strict(),
  z
    .object({
      type: z.literal('shell'),
      command: z.string().min(1),
      intent: TurnIntentSchema.optional(),
      /** False: answer the next turn even while the command still runs (default: poll it to its end, see tool-table.ts). */
      wait: z.boolean().optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('final'),
      text: z.string(),
      done: z.boolean().default(true),
      reasoning: z.string().optional(),
    })
    .strict(),
  z.object({ type: z.literal('error'), status: z.number().int().min(400).max(599), message: z.string() }).strict(),
  /** Model-side faults, answered by the server itself (see `faults.ts`), never by a wire module. */
  z.object({ type: z.literal('stall'), ms: z.number().int().positive().optional() }).strict(),
  z.object({ type: z.literal('malformed') }).strict(),
  z.object({ type: z.literal('drop') }).strict(),
]);

/** Every turn type a script may use, for error messages. */
export const MODEL_TURN_TYPES: readonly string[] = [
  ...RenderedTurnSchema.options.map((o) => o.shape.type.value),
  ...IntentSchema.options.map((o) => o.shape.type.value),
  'branch',
  'if_skill_offered',
  'follow_skill',
];

/** Checks the type first, so a bad turn is reported as "unknown type" or with the intent's own missing field. */
function checkTurn(value: unknown, ctx: z.RefinementCtx): void {
  const type = (value as { type?: unknown } | null)?.type;
  if (type === undefined && Array.isArray((value as { turns?: unknown } | null)?.turns)) {
    // A whole script handed over as a turn (`model.script({ version, seed, turns })`): say where a script goes.
    ctx.addIssue({
      code: 'custom',
      message:
        'this is a whole script (it has "turns"), not a turn: pass it to model.setScript(script) or as the `script` option',
    });
    return;
  }
  if (typeof type !== 'string' || !MODEL_TURN_TYPES.includes(type)) {
    ctx.addIssue({
      code: 'custom',
      message: `${type === undefined ? 'missing "type"' : `unknown turn type ${JSON.stringify(type)}`}; turn types: ${MODEL_TURN_TYPES.join(', ')}`,
    });
    return;
  }
  const schema = [...IntentSchema.options, ...RenderedTurnSchema.options].find((o) => o.shape.type.value === type);
  if (!schema) return; // a dynamic turn: checked by its own schema
  const result = schema.safeParse(value);
  for (const issue of result.success ? [] : result.error.issues) {
    const field = issue.path.join('.');
    const missing = issue.code === 'invalid_type' && (value as Record<string, unknown>)[field] === undefined;
    ctx.addIssue({
      code: 'custom',
      path: issue.path,
      message: missing ? `${type} turn needs "${field}"` : `${type} turn: ${issue.message}`,
    });
  }
}

/** A plain turn: `text`, `shell`, `final`, `error`, a fault, or an intent (lowered to `shell`). */
const PlainTurnSchema = z.unknown().superRefine(checkTurn).pipe(z.preprocess(lowerIntent, RenderedTurnSchema));
/** A turn the server answers a request with (intents lowered, branches resolved: see `branch.ts`). */
export type PlayedTurn = z.infer<typeof RenderedTurnSchema>;

/** `branch`: `turns` with probability `p` (a seeded draw, see `branch.ts`), else `else`. */
export interface BranchTurn {
  type: 'branch';
  p: number;
  turns: ModelTurn[];
  else: ModelTurn[];
}
/** `if_skill_offered`: `turns` when the engine offered skill `name` in the request (named it before any model output), else `else`. */
export interface IfSkillOfferedTurn {
  type: 'if_skill_offered';
  name: string;
  turns: ModelTurn[];
  else: ModelTurn[];
}
/** `follow_skill`: the skill-following stand-in (see `follow-skill.ts`): load skill `name`, run its fenced shell steps, finish. */
export interface FollowSkillTurn {
  type: 'follow_skill';
  name: string;
}
/** A turn resolved per request into plain turns. */
export type DynamicTurn = BranchTurn | IfSkillOfferedTurn | FollowSkillTurn;
/** One scripted turn: a plain turn or a dynamic one (intents already lowered). */
export type ModelTurn = PlayedTurn | DynamicTurn;
/** A turn a wire module renders: what the model says (text, a tool call, a final message). */
export type ContentTurn = Exclude<PlayedTurn, { type: 'error' | 'stall' | 'malformed' | 'drop' }>;

const TurnListSchema = z.array(z.lazy(() => ModelTurnSchema));
const DynamicTurnSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('branch'),
      p: z.number().min(0).max(1),
      turns: TurnListSchema,
      else: TurnListSchema.default([]),
    })
    .strict(),
  z
    .object({
      type: z.literal('if_skill_offered'),
      name: z.string().regex(SKILL_NAME),
      turns: TurnListSchema,
      else: TurnListSchema.default([]),
    })
    .strict(),
  z.object({ type: z.literal('follow_skill'), name: z.string().regex(SKILL_NAME) }).strict(),
]);
/** The dynamic turn types. */
const DYNAMIC_TURN_TYPES: readonly string[] = DynamicTurnSchema.options.map((o) => o.shape.type.value);

/**
 * One scripted turn: `text`, `shell`, `final`, `error`, the faults `stall`, `malformed`, `drop`, the intents
 * `write_file` ({path, content}) and `use_skill` ({name}), which become `shell` turns, or the dynamic turns
 * `branch` ({p, turns, else}), `if_skill_offered` ({name, turns, else}) and `follow_skill` ({name}).
 */
export const ModelTurnSchema: z.ZodType<ModelTurn> = z.unknown().transform((value, ctx): ModelTurn => {
  const type = (value as { type?: unknown } | null)?.type;
  const schema: z.ZodType<ModelTurn> =
    typeof type === 'string' && DYNAMIC_TURN_TYPES.includes(type)
      ? (DynamicTurnSchema as z.ZodType<ModelTurn>)
      : (PlainTurnSchema as z.ZodType<ModelTurn>);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues)
    ctx.addIssue({
      code: 'custom',
      path: issue.path,
      message: DYNAMIC_TURN_TYPES.includes(type as string) ? `${type} turn: ${issue.message}` : issue.message,
    });
  return z.NEVER;
});

/** A model script (`{ "version": 1, "turns": [...] }`). */
export const ModelScriptSchema = z
  .object({
    version: z.literal(1),
    /** Free text for the script's author; ignored by the server (JSON has no comments). */
    description: z.string().optional(),
    /** Seeds the draws of `branch` turns (see `branch.ts`): same seed, same choices; absent = 0. */
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 53 - 1)
      .optional(),
    turns: z.array(ModelTurnSchema),
    /** Content-chosen turn lists (see {@link ScriptRouteSchema}); absent = every request uses `turns`. */
    routes: z.array(z.lazy(() => ScriptRouteSchema)).optional(),
  })
  .strict();
/** A model script. */
export type ModelScript = z.infer<typeof ModelScriptSchema>;

/**
 * A route: requests whose body matches `match` (every given field must hold) answer from the route's own
 * `turns`, indexed by the same history count as the main list. Routes let independent callers (one per
 * orchestrator phase, each with its own model) share one server. First matching route wins; no match falls
 * back to the script's `turns`. `gate` holds each matching request until `size` requests of the same gate
 * name are waiting (or `timeout_ms` passed), then answers them together: a deterministic proof of concurrency.
 */
export const ScriptRouteSchema = z
  .object({
    match: z
      .object({
        /** Exact `model` field of the request body. */
        model: z.string().min(1).optional(),
        /** Substring of the request body's JSON text (e.g. a marker in the system prompt). */
        contains: z.string().min(1).optional(),
      })
      .strict()
      .refine((m) => m.model !== undefined || m.contains !== undefined, 'a route match needs "model" or "contains"'),
    turns: z.array(ModelTurnSchema),
    gate: z
      .object({
        name: z.string().min(1),
        size: z.number().int().min(2).max(64),
        timeout_ms: z.number().int().min(1).max(600_000).default(10_000),
      })
      .strict()
      .optional(),
  })
  .strict();
/** A content-chosen turn list of a script. */
export type ScriptRoute = z.infer<typeof ScriptRouteSchema>;

/** Validates a script value; MODEL_SCRIPT_INVALID names the source and the offending path. */
export function parseModelScript(value: unknown, sourceName = 'model script'): ModelScript {
  const result = ModelScriptSchema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
  throw new AgentHarnessError(
    'MODEL_SCRIPT_INVALID',
    `${sourceName} is not a valid model script: at ${where}: ${issue?.message ?? result.error.message}`,
    {
      details: {
        source: sourceName,
        issues: result.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })),
      },
    },
  );
}

/** Size limit of a model script: `AGENT_HARNESS_MAX_SCRIPT_BYTES` (bytes, 1 or more), else 16 MiB; CONFIG_INVALID when set badly. */
export function maxScriptBytes(env: NodeJS.ProcessEnv = process.env): number {
  return readIntegerEnv(env, 'AGENT_HARNESS_MAX_SCRIPT_BYTES', {
    fallback: DEFAULT_MAX_SCRIPT_BYTES,
    min: 1,
    unit: 'bytes',
  });
}

/**
 * Reads and validates a JSON script file. It must be a regular file (INPUT_NOT_REGULAR_FILE: a FIFO or
 * /dev/zero would hang) within {@link maxScriptBytes} (INPUT_TOO_LARGE: parsing costs many times the size).
 */
export async function loadModelScript(file: string): Promise<ModelScript> {
  const text = await readInputText(file, {
    what: 'model script',
    maxBytes: maxScriptBytes(),
    unreadableCode: 'MODEL_SCRIPT_INVALID',
    tooLargeHint: 'Split the script, or raise the limit with AGENT_HARNESS_MAX_SCRIPT_BYTES=<bytes>.',
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AgentHarnessError(
      'MODEL_SCRIPT_INVALID',
      `Model script ${file} is not valid JSON: ${(error as Error).message}`,
      { cause: error, details: { source: file } },
    );
  }
  return parseModelScript(value, file);
}
