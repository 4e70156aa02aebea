/**
 * What the page script reads of its data block (`ViewData`, view-schema.ts): only the fields it uses, declared here
 * so the browser program needs nothing of the server's (zod, Node). render-html.ts assigns the server's `ViewData`
 * to {@link PageData}, so tsc fails there when the data stops carrying what the page reads.
 */

/** A tool call of the timeline. */
export interface PageTool {
  kind: string;
  name: string;
  command: string | null;
  input: string | null;
  status: string | null;
  exitCode: number | null;
  output: string | null;
}

/** One item of an attempt's timeline. */
export interface PageTimelineItem {
  seq: number;
  t: number;
  kind: string;
  text: string | null;
  tool: PageTool | null;
  code: string | null;
  level: string | null;
}

/** One request the engine made to the scripted model. */
export interface PageModelRequest {
  seq: number;
  ts: string;
  method: string;
  path: string;
  wire: string | null;
  status: number;
  kind: string;
  turn: number | null;
}

/** One attempt; `timeline` is null in a listing (the page fetches the attempt for it). */
export interface PageAttempt {
  attempt: number;
  status: string;
  launch: string | null;
  startedAt: string | null;
  durationMs: number | null;
  completion: { state: string; reason: string; code: string | null } | null;
  exit: { code: number | null; signal: string | null } | null;
  engineVersion: string | null;
  engineVersionChecked?: boolean | null;
  steps: Record<string, number>;
  toolCalls: number;
  toolKeys: string[];
  diagnostics: string[];
  fcmpCounts: Record<string, number>;
  files: { created: string[]; modified: string[]; deleted: string[] } | null;
  gitPatch: string | null;
  modelRequests: PageModelRequest[];
  conformance: unknown;
  timeline: PageTimelineItem[] | null;
  omitted?: string | null;
}

/** One run. */
export interface PageRun {
  handle: string;
  runId: string;
  engine: string;
  case: string;
  label: string | null;
  testId: string | null;
  href: string | null;
  running: boolean;
  attempts: PageAttempt[];
}

/** One test of the consistency report. */
export interface PageTest {
  id: string;
  fullName: string;
  state: string;
  engine: string | null;
  completion: { state: string } | null;
  toolCalls?: number;
  diagnostics: number;
  errors: string[];
}

/** One cell of the engine matrix. */
export interface PageCell {
  testId: string;
  outcome: string;
  completion: string | null;
}

/** One row of the engine matrix: a case and each engine's cell. */
export interface PageMatrixRow {
  case: string;
  engines: Record<string, PageCell>;
  disagree: boolean;
}

/** One engine's row of the cassette fidelity table. */
export interface PageFidelityRow {
  engine: string;
  recorded: number;
  replayed: number;
  exact: number;
  divergent: number;
  missed: number;
  unused: number;
}

/** One check of an ACP-against-native row. */
export interface PageCheckOutcome {
  status: string;
  /** Absent for a pass. */
  detail?: string;
}

/** One engine's row of the ACP-against-native table: its engine and a check outcome per column. */
export interface PageAcpRow {
  engine: string;
  [check: string]: PageCheckOutcome | string;
}

/** The consistency report, as far as the page shows it. */
export interface PageReport {
  summary: { total: number; passed: number; failed: number; skipped: number; disagreements: number };
  tests: PageTest[];
  matrix: PageMatrixRow[];
  fidelity?: PageFidelityRow[];
  acpConformance?: PageAcpRow[];
}

/** Everything a page shows. */
export interface PageData {
  generatedAt: string;
  title: string;
  report: PageReport;
  runs: PageRun[];
  baseline: { label: string; report: PageReport; regressions: string[]; changes: string[]; runs: PageRun[] } | null;
  live: { api: string; token: string } | null;
}

/** One column of the ACP-against-native table: the check's key and its heading. */
export type AcpColumn = readonly [check: string, heading: string];
