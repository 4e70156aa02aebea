/**
 * The version policy of the engines: each adapter names the CLI versions it was checked against
 * (`EngineAdapter.checkedVersions`), and a run made with any other version is marked unchecked (meta
 * `engine_version_checked: false`) wherever it is shown; the Vitest plugin can refuse one
 * (`engineVersions: 'checked'`, ENGINE_VERSION_UNCHECKED). A script reads the ranges through {@link isCheckedVersion}
 * and {@link checkedVersionsOf}.
 *
 * A spec is a range or a list of ranges (any one matching is enough). A range is alternatives joined by `||`, each
 * a space-separated list of comparators that must all hold: `1.2.3` or `=1.2.3` (exactly), `>=`, `>`, `<=`, `<`, and
 * `1.2.x` / `1.2` / `1.x` (that release line). Versions compare by major.minor.patch, then a release is above its
 * pre-releases (`1.0.0-rc.1 < 1.0.0`); build metadata (`+…`) is ignored. The small subset npm ranges share with
 * every semver tool: no caret, tilde or hyphen ranges, which would say less plainly what was checked.
 */
import { AgentHarnessError } from '../errors/index.js';
import type { EngineAdapter } from './engine.js';
import { loadEngine } from './registry.js';

/** A parsed version: the three numbers and the pre-release tag ('' for a release). */
interface Version {
  nums: [number, number, number];
  pre: string;
}

const VERSION = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;
const PARTIAL = /^v?(\d+)(?:\.(\d+|x|\*))?(?:\.(x|\*))?$/;
const COMPARATOR = /^(>=|<=|>|<|=)?(.+)$/;

/** `text` as a version, or null when it is none (`2.1.328`, `v1.0.0-rc.1`; a CLI's `--version` line is cut first). */
export function parseVersion(text: string): Version | null {
  const match = VERSION.exec(text.trim());
  if (!match) return null;
  return { nums: [Number(match[1]), Number(match[2]), Number(match[3])], pre: match[4] ?? '' };
}

/** The first version in a CLI's `--version` line (`GitHub Copilot CLI 1.0.102.`, `2.1.197 (Claude Code)`), or null. */
export function versionInLine(line: string): string | null {
  return /\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]*[0-9A-Za-z])?/.exec(line)?.[0] ?? null;
}

/** Negative, zero or positive as `a` is below, equal to or above `b`. */
function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i += 1) if (a.nums[i] !== b.nums[i]) return a.nums[i]! - b.nums[i]!;
  if (a.pre === b.pre) return 0;
  if (a.pre === '') return 1;
  if (b.pre === '') return -1;
  return a.pre < b.pre ? -1 : 1;
}

/** One comparator as a test of a version; USAGE_ERROR naming `range` when it is not one. */
function comparator(text: string, range: string): (v: Version) => boolean {
  const [, op = '=', rest = ''] = COMPARATOR.exec(text) ?? [];
  const exact = parseVersion(rest);
  if (exact) {
    const cmp = (v: Version) => compare(v, exact);
    if (op === '>=') return (v) => cmp(v) >= 0;
    if (op === '>') return (v) => cmp(v) > 0;
    if (op === '<=') return (v) => cmp(v) <= 0;
    if (op === '<') return (v) => cmp(v) < 0;
    return (v) => cmp(v) === 0;
  }
  const partial = op === '=' ? PARTIAL.exec(rest) : null;
  if (partial) {
    const major = Number(partial[1]);
    const minor = partial[2] === undefined || partial[2] === 'x' || partial[2] === '*' ? null : Number(partial[2]);
    return (v) => v.pre === '' && v.nums[0] === major && (minor === null || v.nums[1] === minor);
  }
  throw new AgentHarnessError(
    'USAGE_ERROR',
    `Version range ${JSON.stringify(range)} has a comparator ${JSON.stringify(text)} this policy does not read; use versions with >=, >, <=, <, = or 1.2.x.`,
    { details: { range } },
  );
}

/** The ranges of `spec` (a range or a list of them). */
function rangesOf(spec: string | readonly string[]): readonly string[] {
  return typeof spec === 'string' ? [spec] : spec;
}

/**
 * True when `version` satisfies `spec` (a range or a list of ranges); false for a version that cannot be read.
 * USAGE_ERROR for a range this policy does not read.
 */
export function versionSatisfies(version: string, spec: string | readonly string[]): boolean {
  const parsed = parseVersion(version);
  const tests = rangesOf(spec).flatMap((range) =>
    range.split('||').map((alternative) => {
      const parts = alternative.trim().split(/\s+/).filter(Boolean);
      if (parts.length === 0)
        throw new AgentHarnessError('USAGE_ERROR', `Version range ${JSON.stringify(range)} has an empty alternative.`, {
          details: { range },
        });
      const checks = parts.map((part) => comparator(part, range));
      return (v: Version) => checks.every((check) => check(v));
    }),
  );
  return parsed !== null && tests.some((test) => test(parsed));
}

/** The versions `adapter` was checked against, as one line (`1.0.102`, `>=2.1.197 <2.2.0 || 2.2.1`), or null. */
export function describeCheckedVersions(adapter: Pick<EngineAdapter, 'checkedVersions'>): string | null {
  const spec = adapter.checkedVersions;
  return spec === undefined ? null : rangesOf(spec).join(' || ');
}

/**
 * Whether a run of `adapter` with CLI `version` is one it was checked against: null when either is unknown (the
 * adapter names no versions, or the version could not be read: a binary on PATH, a fake).
 */
export function checkedVersionState(
  adapter: Pick<EngineAdapter, 'checkedVersions'>,
  version: string | null,
): boolean | null {
  if (adapter.checkedVersions === undefined || version === null) return null;
  return versionSatisfies(version, adapter.checkedVersions);
}

/** The versions engine `engine` was checked against (its adapter's `checkedVersions`), or null when it names none. */
export async function checkedVersionsOf(engine: string): Promise<string | readonly string[] | null> {
  return (await loadEngine(engine)).checkedVersions ?? null;
}

/**
 * True when `version` of engine `engine`'s CLI is one its adapter was checked against; false otherwise (also when the
 * adapter names no versions). ENGINE_UNKNOWN for an engine that is not registered.
 */
export async function isCheckedVersion(engine: string, version: string): Promise<boolean> {
  return checkedVersionState(await loadEngine(engine), version) === true;
}
