/**
 * What the drift command (`npm run test:engines -- --latest`, scripts/engines-latest.mjs) compares between the pinned
 * and the newest release of an engine, for the same probe case: the normalized stream (FCMP events reduced to what
 * does not change from run to run: no ids, times or sequence numbers), the tool names, the flags the CLI's help lists,
 * and the unknown events the parser reported (RASP diagnostics). Pure functions over audit records, so the report is
 * tested without installing a release.
 */

type Json = Record<string, unknown>;

/** One probe attempt as the drift command read it from its run's audit. */
export interface DriftProbe {
  /** The CLI's exit status. */
  exit: number | null;
  /** Why there is no audit, when there is none. */
  error?: string;
  /** The attempt's FCMP events, RASP events and meta. */
  fcmp?: readonly Json[];
  rasp?: readonly Json[];
  meta?: Json;
}

/** One side of the comparison. */
export interface DriftSide {
  /** `meta.completion.state` (`completed`, `failed`, …), or `no_run`. */
  verdict: string;
  /** `meta.engine_version`. */
  engine_version: string | null;
  /** The tool names of the FCMP tool calls, in order, without repeats. */
  tools: string[];
  /** Unknown events and unparsable lines the parser reported. */
  unknown: string[];
  /** The normalized FCMP stream. */
  stream: string[];
}

/** The pinned and newest release on the same case, and what changed in the normalized stream. */
export interface DriftComparison {
  pinned: DriftSide;
  latest: DriftSide;
  /** `- line` for a normalized event only the pinned printed, `+ line` for one only the newest printed. */
  fcmp_changes: string[];
}

const obj = (value: unknown): Json => (typeof value === 'object' && value !== null ? (value as Json) : {});

/** Data keys of each FCMP event type that are the same on every run of one case (ids, times and excerpts are not). */
const STABLE_KEYS: Readonly<Record<string, readonly string[]>> = {
  'tool.call': ['kind', 'name', 'command'],
  'tool.result': ['status', 'exit_code'],
  'assistant.message.final': ['text'],
  'conversation.completed': ['reason'],
  'conversation.failed': ['code', 'category'],
  'file.change': ['changes'],
};

/** An FCMP event reduced to its type and stable data, as one line. */
export function normalizeFcmpEvent(event: Json): string {
  const type = String(event.type);
  const data = obj(event.data);
  const keys = STABLE_KEYS[type] ?? [];
  const kept = Object.fromEntries(keys.filter((key) => key in data).map((key) => [key, data[key]]));
  return keys.length > 0 ? `${type} ${JSON.stringify(kept)}` : type;
}

/** Unknown events and unparsable lines among RASP events (`*_UNKNOWN_EVENT`, `STREAM_PARSE_ERROR` diagnostics). */
export function unknownEvents(rasp: readonly Json[]): string[] {
  return [
    ...new Set(
      rasp
        .map((event) => obj(obj(event.data).diagnostic))
        .filter((d) => typeof d.code === 'string' && /_UNKNOWN_EVENT$|^STREAM_PARSE_ERROR$/.test(d.code))
        .map((d) => `${String(d.code)}: ${String(d.message)}`),
    ),
  ];
}

/** The long flags (`--name`) and short ones (`-x`) a CLI's `--help` text lists, sorted, without repeats. */
export function helpFlags(help: string): string[] {
  const flags = help.match(/(?<![\w-])--?[A-Za-z][\w-]*/g) ?? [];
  return [...new Set(flags.filter((flag) => flag !== '--' && flag.length > 1))].sort();
}

function side(probe: DriftProbe): DriftSide {
  const fcmp = probe.fcmp ?? [];
  const tools = fcmp.filter((e) => e.type === 'tool.call').map((e) => String(obj(e.data).name));
  return {
    verdict: probe.meta ? String(obj(probe.meta.completion).state ?? 'unknown') : 'no_run',
    engine_version: typeof probe.meta?.engine_version === 'string' ? probe.meta.engine_version : null,
    tools: [...new Set(tools)],
    unknown: unknownEvents(probe.rasp ?? []),
    stream: fcmp.map(normalizeFcmpEvent),
  };
}

/** The lines only in `a` (`- …`) and only in `b` (`+ …`), in order (a longest-common-subsequence diff). */
export function lineDiff(a: readonly string[], b: readonly string[]): string[] {
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) out.push(`- ${a[i++]}`);
    else out.push(`+ ${b[j++]}`);
  }
  return out;
}

/** The comparison of the pinned and the newest release's probe attempts. */
export function compareDriftCase(pinned: DriftProbe, latest: DriftProbe): DriftComparison {
  const before = side(pinned);
  const after = side(latest);
  return { pinned: before, latest: after, fcmp_changes: lineDiff(before.stream, after.stream) };
}
