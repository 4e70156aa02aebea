/**
 * The page script's data and state: the data block the server rendered (or, in a page served by `agent-harness
 * view`, the API's answers since), what the page shows now, and what it derives from a run.
 */
import type { PageAttempt, PageData, PageRun, PageTest } from './page-data.js';

/** The run list's filters, each empty for all. */
export interface Filters {
  engine: string;
  completion: string;
  test: string;
  diag: string;
  code: string;
  outcome: string;
}

/** What the page shows: its tab, the open run and attempt, the filters, the diff's two sides. */
export interface PageState {
  tab: string;
  run: string | null;
  attempt: number | null;
  filters: Filters;
  left: string;
  right: string;
  differentOnly: boolean;
}

/** The page's data: the JSON block the server wrote into the page. */
export const DATA: PageData = JSON.parse(document.getElementById('agent-harness-data')?.textContent ?? '');
/** Where the page renders. */
export const app = document.getElementById('app') as HTMLElement;
/** What the page shows now. */
export const state: PageState = {
  tab: 'runs',
  run: null,
  attempt: null,
  filters: { engine: '', completion: '', test: '', diag: '', code: '', outcome: '' },
  left: '',
  right: '',
  differentOnly: false,
};

/** A run's last attempt, or null before its first. */
export function lastAttempt(run: PageRun): PageAttempt | null {
  return run.attempts.length ? run.attempts[run.attempts.length - 1] : null;
}
/** How a run ended: its last attempt's completion state, `running`, or `unknown`. */
export function completionOf(run: PageRun): string {
  const a = lastAttempt(run);
  return run.running ? 'running' : a?.completion ? a.completion.state : 'unknown';
}
/** The error code of a run's last attempt, or ''. */
export function codeOf(run: PageRun): string {
  const a = lastAttempt(run);
  return a?.completion?.code ? a.completion.code : '';
}
/** How many diagnostics a run's attempts recorded. */
export function diagCount(run: PageRun): number {
  let n = 0;
  for (const a of run.attempts) n += a.diagnostics.length;
  return n;
}
/** How many tool calls a run's attempts made. */
export function toolCount(run: PageRun): number {
  let n = 0;
  for (const a of run.attempts) n += a.toolCalls;
  return n;
}
/**
 * The Vitest test that made a run (its state and errors), or null for a run no test made: a CLI run's record in the
 * report ('report --html', 'view') has the run id for its id and a state read from the completion, not a test's.
 */
export function testOf(run: PageRun): PageTest | null {
  if (!run.testId || run.testId === run.runId) return null;
  return DATA.report.tests.filter((t) => t.id === run.testId)[0] || null;
}
/** The state of the test that made a run, or ''. */
export function testStateOf(run: PageRun): string {
  const t = testOf(run);
  return t ? t.state : '';
}
/** The first line of the test's first error: its failing expectation (the reporter puts assertions first). */
export function assertionOf(run: PageRun): string {
  const t = testOf(run);
  return t?.errors.length ? String(t.errors[0]).split('\n')[0] : '';
}
/** The distinct non-empty values, sorted. */
export function uniq(list: string[]): string[] {
  return list.filter((v, i) => v && list.indexOf(v) === i).sort();
}
/** The run of a handle among these runs (the page's by default), or null. */
export function runByHandle(handle: string | null, runs?: PageRun[]): PageRun | null {
  return (runs || DATA.runs).filter((r) => r.handle === handle)[0] || null;
}
/** The API's URL for a path, with the page's token (served by `agent-harness view` only). */
export function api(path: string): string {
  const live = DATA.live!;
  return `${live.api}${path}${path.indexOf('?') < 0 ? '?' : '&'}token=${encodeURIComponent(live.token)}`;
}
