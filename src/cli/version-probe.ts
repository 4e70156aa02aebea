/**
 * `doctor`'s probe of an engine executable: `<file> --version`, bounded by a generous timeout and tried once more when
 * it fails, since a healthy CLI can be slow to start on a loaded machine (gemini and opencode, Node and Bun apps,
 * took over 20 s to answer `--version` under load). A failure says why: the timeout and how long it waited, the exit
 * code or signal, the last lines of stderr, or why the process could not start.
 */
import { execa } from 'execa';

/** How long one `--version` may take by default (ms): far above a start on a loaded machine. */
export const VERSION_PROBE_TIMEOUT_MS = 60_000;

/** How many times a failing probe runs in all by default (a second try rides out a load spike). */
export const VERSION_PROBE_TRIES = 2;

/** How much of stderr a failure quotes (its end: where a CLI prints its error). */
const STDERR_TAIL_CHARS = 400;

/** The outcome of one try: the version line, or why it failed. */
type TryOutcome = { ok: true; version: string } | { ok: false; timedOut: boolean; reason: string };

/** The outcome of a probe: the version line, or why its last try failed; `tries`: how many it took. */
export type VersionProbeResult = TryOutcome & { tries: number };

/** What {@link probeVersion} runs with. */
export interface VersionProbeOptions {
  /** The environment the executable sees (nothing else is inherited). */
  env: Record<string, string>;
  /** The bound of one try (ms); default {@link VERSION_PROBE_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** How many tries in all; default {@link VERSION_PROBE_TRIES}. */
  tries?: number;
}

/** The last `STDERR_TAIL_CHARS` of `text` on one line, or null when empty. */
function tailOf(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed.length === 0) return null;
  const tail = trimmed.length > STDERR_TAIL_CHARS ? `…${trimmed.slice(-STDERR_TAIL_CHARS)}` : trimmed;
  return tail.replace(/\s*\n\s*/g, ' | ');
}

/** Runs `file --version` once. */
async function tryOnce(file: string, env: Record<string, string>, timeoutMs: number): Promise<TryOutcome> {
  const run = await execa(file, ['--version'], {
    reject: false,
    timeout: timeoutMs,
    forceKillAfterDelay: 2_000,
    stdin: 'ignore',
    env,
    extendEnv: false,
  });
  // The first line names the version (`codex-cli 0.169.0`); the rest, where a CLI prints more, is its licence.
  const version = String(run.stdout ?? '')
    .trim()
    .split('\n')[0]!
    .trim();
  if (run.exitCode === 0 && !run.timedOut) return { ok: true, version: version || 'exit 0' };
  const stderr = tailOf(String(run.stderr ?? ''));
  const withStderr = (why: string) => (stderr ? `${why}; stderr: ${stderr}` : `${why}; no stderr`);
  if (run.timedOut)
    return { ok: false, timedOut: true, reason: withStderr(`\`--version\` timed out after ${timeoutMs} ms`) };
  if (typeof run.exitCode === 'number')
    return { ok: false, timedOut: false, reason: withStderr(`\`--version\` exited with code ${run.exitCode}`) };
  if (run.signal)
    return { ok: false, timedOut: false, reason: withStderr(`\`--version\` was killed by ${run.signal}`) };
  // No exit code and no signal: the process never ran (ENOENT, EACCES, a bad interpreter line).
  const cause = (run as { cause?: unknown }).cause;
  const why = cause instanceof Error ? cause.message : String(run.message ?? 'unknown error');
  return { ok: false, timedOut: false, reason: `\`--version\` could not start: ${why}` };
}

/** Runs `file --version` up to `tries` times until it succeeds; the result says how many tries it took. */
export async function probeVersion(file: string, options: VersionProbeOptions): Promise<VersionProbeResult> {
  const timeoutMs = options.timeoutMs ?? VERSION_PROBE_TIMEOUT_MS;
  const tries = Math.max(1, options.tries ?? VERSION_PROBE_TRIES);
  let last: TryOutcome | null = null;
  for (let n = 1; n <= tries; n += 1) {
    last = await tryOnce(file, options.env, timeoutMs);
    if (last.ok) return { ...last, tries: n };
  }
  return { ...last!, tries };
}
