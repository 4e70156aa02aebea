/**
 * Renders a {@link ConsistencyReport} as Markdown (consistency.md), JUnit XML (junit.xml) and a short
 * GitHub step summary.
 */
import type { ConsistencyReport, ConsistencyTest } from './schema.js';
import { acpConformanceMarkdown } from './acp-conformance.js';
import { renderFidelityTable } from './fidelity.js';

const ICON: Record<ConsistencyTest['state'], string> = { passed: '✅', failed: '❌', skipped: '⏭', pending: '…' };

/** Escapes a value for a Markdown table cell. */
function cell(value: unknown): string {
  return String(value ?? '')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n/g, ' ');
}

function matrixEngines(report: ConsistencyReport): string[] {
  return [...new Set(report.matrix.flatMap((row) => Object.keys(row.engines)))].sort();
}

/** What a disagreeing row disagrees on: the engines grouped by outcome (`passed: codex, claude; failed: gemini`). */
function disagreement(row: ConsistencyReport['matrix'][number]): string {
  const groups = new Map<string, string[]>();
  for (const [engine, c] of Object.entries(row.engines)) {
    if (c.outcome === 'skipped') continue;
    const key = `${c.outcome}${c.completion ? ` (${c.completion})` : ''}`;
    groups.set(key, [...(groups.get(key) ?? []), engine]);
  }
  return [...groups].map(([outcome, engines]) => `${outcome}: ${engines.join(', ')}`).join('; ');
}

/** The engine matrix as Markdown table lines (empty when no case ran on two engines). */
export function renderMatrix(report: ConsistencyReport): string[] {
  if (report.matrix.length === 0) return [];
  const engines = matrixEngines(report);
  const lines = [
    `| case | ${engines.join(' | ')} | agreement |`,
    `| --- | ${engines.map(() => '---').join(' | ')} | --- |`,
  ];
  for (const row of report.matrix) {
    const cells = engines.map((engine) => {
      const c = row.engines[engine];
      return c ? `${ICON[c.outcome]} ${c.outcome}${c.completion ? ` (${c.completion})` : ''}` : '—';
    });
    lines.push(
      `| ${cell(row.case)} | ${cells.map(cell).join(' | ')} | ${row.disagree ? `⚠ ${disagreement(row)}` : 'agree'} |`,
    );
  }
  return lines;
}

/** consistency.md: summary, one table per test file, then the engine matrix. */
export function renderMarkdown(report: ConsistencyReport): string {
  const s = report.summary;
  const out = [
    '# agent-harness consistency report',
    '',
    `${s.total} tests: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped, ${s.flaky} flaky; ${s.disagreements} engine disagreement(s). Run ${report.reason}, ${report.generatedAt}.`,
  ];
  const byFile = new Map<string, ConsistencyTest[]>();
  for (const t of report.tests)
    byFile.set(`${t.project ? `[${t.project}] ` : ''}${t.file}`, [
      ...(byFile.get(`${t.project ? `[${t.project}] ` : ''}${t.file}`) ?? []),
      t,
    ]);
  for (const [file, tests] of byFile) {
    out.push(
      '',
      `## ${file}`,
      '',
      '| test | state | engine | completion | tools | retries | duration | run | audit |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const t of tests) {
      const completion = t.completion ? `${t.completion.state} (${t.failureCode ?? t.completion.reason})` : '';
      const state = `${ICON[t.state]} ${t.state}${t.flaky ? ' (flaky)' : ''}`;
      const unchecked = t.engineVersionChecked === false ? ' (unchecked version)' : '';
      const engine = t.engine ? `${t.engine}${t.engineVersion ? ` ${t.engineVersion}` : ''}${unchecked}` : '';
      out.push(
        `| ${[t.fullName, state, engine, completion, t.toolCalls ?? '', t.retryCount, `${Math.round(t.durationMs)} ms`, t.handle ?? '', t.auditDir ? `\`${t.auditDir}\`` : ''].map(cell).join(' | ')} |`,
      );
    }
    // Why each failed test failed: its first error line (the matcher's message, which names the tool calls).
    for (const t of tests.filter((test) => test.state === 'failed')) {
      out.push(
        '',
        `**❌ ${cell(t.fullName)}**: ${cell((t.errors[0] ?? t.failureCode ?? 'failed').split('\n')[0]!.slice(0, 300))}`,
      );
      const detail = (t.errors[0] ?? '')
        .split('\n')
        .slice(1)
        .filter((line) => line.trim() !== '')
        .slice(0, 20);
      if (detail.length > 0) out.push('', '```', ...detail, '```');
    }
  }
  const matrix = renderMatrix(report);
  if (matrix.length > 0) out.push('', '## Engine matrix', '', ...matrix);
  const fidelity = renderFidelityTable(report.fidelity ?? []);
  if (fidelity.length > 0) out.push('', '## Cassette fidelity', '', ...fidelity);
  if (report.acpConformance?.length)
    out.push('', '## ACP against native', '', acpConformanceMarkdown(report.acpConformance));
  return `${out.join('\n')}\n`;
}

/** Escapes text for XML content and attribute values (and drops characters XML 1.0 forbids). */
export function xmlEscape(value: unknown): string {
  return (
    String(value ?? '')
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
  );
}

/** junit.xml: one testsuite per file, properties engine/run_id/audit_dir per testcase. */
export function renderJunit(report: ConsistencyReport): string {
  const suites = new Map<string, ConsistencyTest[]>();
  for (const t of report.tests) suites.set(t.file, [...(suites.get(t.file) ?? []), t]);
  const secs = (ms: number): string => (ms / 1000).toFixed(3);
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const s = report.summary;
  const total = report.tests.reduce((n, t) => n + t.durationMs, 0);
  lines.push(
    `<testsuites name="agent-harness" tests="${s.total}" failures="${s.failed}" errors="0" skipped="${s.skipped}" time="${secs(total)}">`,
  );
  for (const [file, tests] of suites) {
    const failures = tests.filter((t) => t.state === 'failed').length;
    const skipped = tests.filter((t) => t.state === 'skipped' || t.state === 'pending').length;
    const time = tests.reduce((n, t) => n + t.durationMs, 0);
    lines.push(
      `  <testsuite name="${xmlEscape(file)}" tests="${tests.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${secs(time)}">`,
    );
    for (const t of tests) {
      lines.push(
        `    <testcase classname="${xmlEscape(file)}" name="${xmlEscape(t.fullName)}" time="${secs(t.durationMs)}">`,
      );
      const props: Array<[string, unknown]> = [
        ['engine', t.engine],
        ['run_id', t.runId],
        ['audit_dir', t.auditDir],
        ['completion', t.completion?.state],
        ['retry_count', t.retryCount],
        ['flaky', t.flaky],
      ];
      lines.push('      <properties>');
      for (const [name, value] of props)
        if (value !== null && value !== undefined)
          lines.push(`        <property name="${name}" value="${xmlEscape(value)}"/>`);
      lines.push('      </properties>');
      if (t.state === 'failed') {
        const message = t.errors[0] ?? 'test failed';
        lines.push(
          `      <failure message="${xmlEscape(message.split('\n')[0])}" type="AssertionError">${xmlEscape(t.errors.join('\n\n'))}</failure>`,
        );
      } else if (t.state === 'skipped' || t.state === 'pending') {
        lines.push('      <skipped/>');
      }
      lines.push('    </testcase>');
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

/** A short Markdown block for `$GITHUB_STEP_SUMMARY`: totals, failed agent tests, the matrix. */
export function renderStepSummary(report: ConsistencyReport): string {
  const s = report.summary;
  const out = [
    '### agent-harness',
    '',
    `${s.passed}/${s.total} passed, ${s.failed} failed, ${s.flaky} flaky, ${s.disagreements} engine disagreement(s).`,
  ];
  const failed = report.tests.filter((t) => t.state === 'failed');
  if (failed.length > 0) {
    out.push('');
    for (const t of failed.slice(0, 20))
      out.push(
        `- ❌ ${cell(t.fullName)}${t.engine ? ` (${t.engine}, ${t.handle ?? ''})` : ''}${t.auditDir ? ` — \`${t.auditDir}\`` : ''}`,
      );
  }
  const matrix = renderMatrix(report);
  if (matrix.length > 0) out.push('', ...matrix);
  return `${out.join('\n')}\n\n`;
}
