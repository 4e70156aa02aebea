/**
 * Options of the `agentHarness()` Vitest plugin: a zod schema, its parser (CONFIG_INVALID naming the field and
 * the value) and the serializable config handed to tests through `project.provide('agentHarness', …)`.
 */
import path from 'node:path';
import * as z from 'zod';
import { AgentHarnessError } from '../errors/index.js';
import { isEngineId, unknownEngineMessage } from '../engines/registry.js';
import { ModelModeSchema } from '../protocol/index.js';
import { parseExposeEntry } from '../runtime/isolation/expose-entry.js';

const RateSchema = z.number().min(0).max(1);
const ConfidenceSchema = z.number().gt(0).lt(1);

/** The plugin's `gates` option (held by the reporter, see src/report/statistics.ts). */
export const GatesOptionSchema = z.strictObject({
  passRate: z.strictObject({ atLeast: RateSchema, confidence: ConfidenceSchema.optional() }).optional(),
  lift: z
    .strictObject({ atLeast: z.number().min(-1).max(1).optional(), confidence: ConfidenceSchema.optional() })
    .optional(),
  k: z.array(z.number().int().positive()).optional(),
});

/** Default directory of the consistency reports, relative to the Vitest root. */
export const DEFAULT_REPORT_DIR = 'reports/agent-harness';

/** Schema of the options passed to `agentHarness(options)`. */
export const AgentHarnessOptionsSchema = z
  .object({
    /** Run root for the runs started by tests (relative to the Vitest root). Default: the harness default. */
    runRoot: z.string().min(1).optional(),
    /** Skill source roots (relative to the Vitest root). Default: the harness default roots. */
    skillRoots: z.array(z.string().min(1)).optional(),
    /**
     * Engines enabled for the project; `agent.start` skips the test for any other engine. Each must be registered
     * (built in, or by `registerEngine` before the plugin is made).
     */
    engines: z.array(z.string().refine(isEngineId, { error: (issue) => unknownEngineMessage(issue.input) })).optional(),
    /**
     * Model mode: `scripted` (default), `live`, or a cassette mode: `record`, `replay`, `auto` (replay a test's
     * cassette when it exists, record it when it does not and a key is set; `-u` re-records). See docs/cassettes.md.
     */
    model: z.union([ModelModeSchema, z.literal('auto')]).default('scripted'),
    /** Recording: the origin requests go to instead of the vendor (the request path is kept). */
    upstream: z.url({ protocol: /^https?$/ }).optional(),
    /** Where the reporter writes consistency.json/.md and junit.xml (relative to the Vitest root). */
    reportDir: z.string().min(1).default(DEFAULT_REPORT_DIR),
    /** Codex profile name the harness writes. */
    codexProfile: z.string().min(1).optional(),
    /** Default attempt timeout in ms. */
    timeoutMs: z.number().int().positive().max(2_147_483_647).optional(),
    /**
     * Export each attempt of each test at the end of the run, beside its audit files: `atif` writes `atif.N.json`
     * (ATIF v1.7), `otlp` writes `otlp.N.json` (OpenTelemetry spans, also sent to OTEL_EXPORTER_OTLP_ENDPOINT).
     */
    export: z.strictObject({ atif: z.boolean().optional(), otlp: z.boolean().optional() }).optional(),
    /**
     * Host paths every agent sees beyond its workspace (relative to the Vitest root): `PATH` (read-write),
     * `PATH:ro`, or `{ path, readOnly }`. Each must exist when an attempt starts (docs/isolation.md).
     */
    /**
     * An engine CLI version its adapter was not checked against (`EngineAdapter.checkedVersions`): `warn` (default)
     * runs it and marks it unchecked (meta, report, viewer, a diagnostic warning); `checked` refuses the attempt with
     * ENGINE_VERSION_UNCHECKED; `any` runs it with the mark only in the meta and the report.
     */
    engineVersions: z.enum(['checked', 'warn', 'any']).default('warn'),
    expose: z
      .array(
        z.union([z.string().min(1), z.object({ path: z.string().min(1), readOnly: z.boolean().optional() }).strict()]),
      )
      .optional(),
    /** Default number of trials of `agent.trials()` (docs/evals.md). */
    trials: z.number().int().positive().optional(),
    /**
     * Gates held by the reporter over every case × engine × arm of the run's trials; one that fails fails the run
     * (docs/evals.md): `passRate: { atLeast, confidence? }`, `lift: { atLeast?, confidence? }`, `k` for pass@k.
     */
    gates: GatesOptionSchema.optional(),
  })
  .strict();

/** Options of `agentHarness(options)` as written by the user. */
export type AgentHarnessOptions = z.input<typeof AgentHarnessOptionsSchema>;

/** Options after validation and defaults. */
export type ResolvedAgentHarnessOptions = z.output<typeof AgentHarnessOptionsSchema>;

/** The structured-cloneable config provided to tests (`inject('agentHarness')`); paths are absolute. */
export interface AgentHarnessConfig {
  /** Vitest root the relative options were resolved against. */
  root: string;
  runRoot: string | null;
  skillRoots: string[] | null;
  engines: string[] | null;
  model: ResolvedAgentHarnessOptions['model'];
  /** Recording's upstream origin, or null for the vendor. */
  upstream: string | null;
  reportDir: string;
  codexProfile: string | null;
  timeoutMs: number | null;
  /** The reporter's progress socket (set by the plugin; absent or null: no live progress). */
  progressSocket?: string | null;
  /** What an unchecked engine version does (absent in configs provided before the option: `warn`). */
  engineVersions?: ResolvedAgentHarnessOptions['engineVersions'];
  /** Exposed host paths, absolute (`:ro` kept), or null. */
  expose: Array<string | { path: string; readOnly?: boolean }> | null;
  /** Default trial count of `agent.trials()` (absent or null: each call names its own). */
  trials?: number | null;
}

function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Validates plugin options; CONFIG_INVALID names the first offending field and its value. */
export function parseAgentHarnessOptions(input: unknown = {}): ResolvedAgentHarnessOptions {
  const result = AgentHarnessOptionsSchema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  let value: unknown = input;
  for (const key of issue.path)
    value =
      value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key as PropertyKey] : undefined;
  const keys = issue.code === 'unrecognized_keys' ? ((issue as { keys?: string[] }).keys ?? []) : [];
  const field =
    keys.length > 0 ? keys.join(', ') : issue.path.length > 0 ? issue.path.map(String).join('.') : '(options)';
  const shown = keys.length > 0 ? describeValue((input as Record<string, unknown>)[keys[0]!]) : describeValue(value);
  throw new AgentHarnessError(
    'CONFIG_INVALID',
    `agentHarness() option ${field} = ${shown} is invalid: ${issue.message}`,
    {
      details: {
        field,
        value: shown,
        issues: result.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })),
      },
    },
  );
}

/** The variable that narrows a run to some of the project's engines (`AGENT_HARNESS_ENGINES=codex,claude`). */
export const ENGINES_ENV = 'AGENT_HARNESS_ENGINES';

/** The value of `AGENT_HARNESS_ENGINES` that narrows nothing (as if unset), for a script that must say so explicitly. */
export const ALL_ENGINES = 'all';

/**
 * The engines enabled for this run: the option's, narrowed to those `AGENT_HARNESS_ENGINES` names when it is set (a
 * CI job that runs a matrix on fewer engines without editing the config); `all` narrows nothing. A name no engine has
 * is CONFIG_INVALID.
 */
export function enabledEngines(configured: readonly string[] | undefined, env: NodeJS.ProcessEnv): string[] | null {
  const raw = env[ENGINES_ENV]?.trim();
  if (!raw || raw === ALL_ENGINES) return configured ? [...configured] : null;
  const named = raw
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  const unknown = named.find((id) => !isEngineId(id));
  if (unknown !== undefined)
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `${ENGINES_ENV}=${raw} is invalid: ${unknownEngineMessage(unknown)}`,
      {
        details: { field: ENGINES_ENV, value: raw },
      },
    );
  return configured ? configured.filter((id) => named.includes(id)) : named;
}

/** Resolves validated options against the Vitest root into the config provided to tests. */
export function toAgentHarnessConfig(
  options: ResolvedAgentHarnessOptions,
  root: string,
  env: NodeJS.ProcessEnv = process.env,
): AgentHarnessConfig {
  const abs = (p: string): string => path.resolve(root, p);
  return {
    root: path.resolve(root),
    runRoot: options.runRoot ? abs(options.runRoot) : null,
    skillRoots: options.skillRoots ? options.skillRoots.map(abs) : null,
    engines: enabledEngines(options.engines, env),
    model: options.model,
    upstream: options.upstream ?? null,
    reportDir: abs(options.reportDir),
    codexProfile: options.codexProfile ?? null,
    timeoutMs: options.timeoutMs ?? null,
    ...(options.trials !== undefined ? { trials: options.trials } : {}),
    engineVersions: options.engineVersions,
    expose: options.expose
      ? options.expose.map((entry) => {
          if (typeof entry !== 'string') return { ...entry, path: abs(entry.path) };
          const { path: raw, readOnly } = parseExposeEntry(entry);
          // An empty path is left as it is, for the attempt to refuse (CONFIG_INVALID), not made the root.
          return raw === '' ? entry : `${abs(raw)}${readOnly ? ':ro' : ''}`;
        })
      : null,
  };
}
