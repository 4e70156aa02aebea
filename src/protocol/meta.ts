/**
 * The audit record of one attempt: `.audit/meta.N.json`. Written at the start of an attempt (status
 * `running`) and rewritten when it ends, so a crash still leaves a meta file behind.
 */
import * as z from 'zod';
import { EngineIdSchema, ModelModeSchema, TimestampSchema, TranslateModeSchema, UsageSchema } from './common.js';
import { ISOLATION_MODE_VALUES, META_VERSION } from './versions.js';

/** Version tag of the meta file. */
export { META_VERSION } from './versions.js';

/** One injected skill. */
export const InjectedSkillSchema = z.object({
  name: z.string(),
  source: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  contract_appended: z.boolean(),
});

/** What skill injection did before the attempt. */
export const SkillInjectionSchema = z.object({
  source_roots: z.array(z.string()),
  target_root: z.string(),
  skill_count: z.number().int().nonnegative(),
  skills: z.array(InjectedSkillSchema),
  /**
   * Injected skills the engine offered the model: named in its first real model request (the system prompt or
   * the tool list where each engine announces skills). Null when unknown (live mode, no request).
   */
  offered: z.array(z.string()).nullable().optional(),
});
/** A skill injection summary. */
export type SkillInjection = z.infer<typeof SkillInjectionSchema>;

/** What config injection did before the attempt. */
export const ConfigInjectionSchema = z.object({
  engine: EngineIdSchema,
  config_path: z.string(),
  profile: z.string().nullable(),
});
/** A config injection summary. */
export type ConfigInjection = z.infer<typeof ConfigInjectionSchema>;

/** Trust registration of the run directory in the engine's config. */
export const TrustRecordSchema = z.object({
  path: z.string(),
  config_path: z.string(),
  /** `argv`: given on the engine's command line (codex `-c projects=…`), nothing written to `config_path`. Absent: written there. */
  via: z.enum(['config', 'argv']).optional(),
  registered_at: TimestampSchema.nullable(),
  removed_at: TimestampSchema.nullable(),
});

/** Completion state of an attempt, as judged from its events (never from the exit code alone). */
export const CompletionSchema = z.object({
  /** `no_session`: a user-written call (`agent-harness codex --version`) that exited 0 and started no session. */
  state: z.enum(['completed', 'awaiting_input', 'failed', 'interrupted', 'no_session', 'unknown']),
  reason: z.string(),
  /** The stable failure code when `state` is `failed` (`ENGINE_TIMEOUT`, `ENGINE_RATE_LIMITED`, …). */
  code: z.string().optional(),
});
/** A completion state. */
export type Completion = z.infer<typeof CompletionSchema>;

/**
 * `auto` (default): namespaces where the machine has them, else the fallback with a warning diagnostic.
 * `require`: refuse to run (`ISOLATION_UNAVAILABLE`) where namespaces are unavailable. `off`: no namespaces.
 */
export const IsolationModeSchema = z.enum(ISOLATION_MODE_VALUES);
/** An isolation mode. */
export type IsolationMode = z.infer<typeof IsolationModeSchema>;

/** A host path an agent saw inside its mount namespace, and why. */
export const ExposedPathSchema = z.object({
  path: z.string(),
  access: z.enum(['ro', 'rw']),
  /**
   * `workspace` (the run directory), `managed` (HOME, TMPDIR, npm prefix, uv), `engine` (its installation, Node),
   * `mcp` (a stdio MCP server's files), `expose` (asked for), `audit` (`.audit/`, read-only).
   */
  why: z.enum(['workspace', 'managed', 'engine', 'mcp', 'expose', 'audit', 'system']),
});
/** A host path an agent saw. */
export type ExposedPath = z.infer<typeof ExposedPathSchema>;

/** The isolation an attempt actually ran under. */
export const IsolationRecordSchema = z.object({
  mode: IsolationModeSchema,
  /**
   * `namespace`: its own network namespace with only loopback, the model server forwarded in. `proxy-only`: the
   * host network, proxy variables pointing at the model server (a hint, not a wall). `host`: the host network on
   * purpose (`--model live`, where the engine must reach its vendor).
   */
  network: z.enum(['namespace', 'proxy-only', 'host']),
  /** `pid-namespace`: ending the attempt ends every process it started, setsid or not. `process-group`: only its group. */
  processes: z.enum(['pid-namespace', 'process-group']),
  /** Why namespaces were not used, when they were not. */
  reason: z.string().nullable(),
  /**
   * `mount-namespace`: the agent saw only its workspace, its managed HOME and TMPDIR, the engine's installation and
   * the system read-only, and what was exposed on purpose (`exposed`). `host`: the host's files (absent in metas
   * written before filesystem containment).
   */
  filesystem: z.enum(['mount-namespace', 'host']).optional(),
  /** The host paths the agent saw under `mount-namespace`, beyond the system's read-only directories. */
  exposed: z.array(ExposedPathSchema).optional(),
});
/** The isolation an attempt ran under. */
export type IsolationRecord = z.infer<typeof IsolationRecordSchema>;

/** `.audit/meta.N.json`. */
export const AttemptMetaSchema = z.object({
  version: z.literal(META_VERSION),
  run_id: z.string(),
  handle: z.string().regex(/^[0-9a-f]{8}$/),
  attempt: z.number().int().positive(),
  engine: EngineIdSchema,
  launch: z.enum(['start', 'resume', 'passthrough']),
  /** `acp`: the engine ran in its ACP mode with the harness as the client (its stdout is JSON-RPC); absent: native. */
  transport: z.enum(['native', 'acp']).optional(),
  status: z.enum(['running', 'finished']),
  translate_mode: TranslateModeSchema,
  model: z.object({
    mode: ModelModeSchema,
    base_url: z.string().nullable(),
    script: z.string().nullable(),
    /** The cassette recorded or replayed (record and replay modes): its file and how its requests matched. */
    cassette: z
      .object({
        path: z.string(),
        mode: z.enum(['record', 'replay']),
        interactions: z.number().int().nonnegative(),
        exact: z.number().int().nonnegative(),
        divergent: z.number().int().nonnegative(),
        missed: z.number().int().nonnegative(),
        unused: z.number().int().nonnegative(),
        /**
         * A replay forked after `at` model turns onto the scripted or the live model (forwarded, live turns
         * `recorded` into that cassette, or null), when it was forked.
         */
        fork: z
          .object({
            at: z.number().int().nonnegative(),
            to: z.enum(['scripted', 'live']),
            recorded: z.string().nullable(),
          })
          .optional(),
      })
      .optional(),
  }),
  command: z.object({
    executable: z.string(),
    argv: z.array(z.string()),
    cwd: z.string(),
    io: z.enum(['split', 'pty', 'passthrough']),
    /** The launcher script installed as the engine's command that the harness stood in for (codex's npm `bin/codex.js`), when `executable` is the native binary it starts, or Node running the script (gemini, qwen). */
    launcher: z.string().optional(),
  }),
  /** The env the engine saw, secrets redacted. */
  env: z.record(z.string(), z.string()),
  timings: z.object({
    started_at: TimestampSchema,
    ended_at: TimestampSchema.nullable(),
    duration_ms: z.number().nonnegative().nullable(),
    /** Milliseconds per step of the attempt (harness steps and `engine`), in order; absent in older metas. */
    steps: z.record(z.string(), z.number().nonnegative()).optional(),
  }),
  exit: z
    .object({
      code: z.number().int().nullable(),
      signal: z.string().nullable(),
      timed_out: z.boolean(),
      canceled: z.boolean(),
    })
    .nullable(),
  session_id: z.string().nullable(),
  completion: CompletionSchema.nullable(),
  usage: UsageSchema.nullable(),
  skill_injection: SkillInjectionSchema,
  config_injection: ConfigInjectionSchema.nullable(),
  trust: TrustRecordSchema.nullable(),
  /** Version of the engine CLI, from the npm package that ships it (null for a binary of unknown origin). */
  engine_version: z.string().nullable().optional(),
  /**
   * Whether `engine_version` is one the engine's adapter was checked against (`EngineAdapter.checkedVersions`): false
   * marks a run made with an unchecked version; null when either is unknown.
   */
  engine_version_checked: z.boolean().nullable().optional(),
  /** The versions the adapter was checked against, as one range (`1.0.102`, `>=2.1.197 <2.2.0`); null when none. */
  engine_checked_versions: z.string().nullable().optional(),
  /** A seeded start: the template copied, the files written, and the seed commit when the run dir is a git repo. */
  workspace: z
    .object({ template: z.string().nullable(), files: z.array(z.string()), git_commit: z.string().nullable() })
    .nullable()
    .optional(),
  /** Resume only: the start's flags given to this resume again, and those the resume command does not take. */
  resume_flags: z
    .object({ carried: z.array(z.string()), dropped: z.array(z.string()) })
    .nullable()
    .optional(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  files: z.record(z.string(), z.string()),
  /** Agent options as the engine applied them (providers; tokens redacted); null or absent when none were given. */
  agent_options: z.record(z.string(), z.unknown()).nullable().optional(),
  /** The namespaces the engine ran in (absent in metas written before isolation was recorded). */
  isolation: IsolationRecordSchema.nullable().optional(),
  /** The harness process that ran the attempt (pid + kernel start time): a `running` meta whose owner is gone was interrupted. */
  owner: z.object({ pid: z.number().int(), start_time: z.string().nullable() }).optional(),
});
/** The audit record of one attempt. */
export type AttemptMeta = z.infer<typeof AttemptMetaSchema>;
