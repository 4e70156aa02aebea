/**
 * The report page's "Trials" section (issue 45 item 7), rendered on the server from the consistency report's
 * statistics: per case × engine × arm a pass/fail strip (each failed or excluded trial a link to its run's page,
 * titled with its classified cause), the pass rate with its Wilson 95% interval drawn as a bar, and the lift over the
 * baseline arm. Plain HTML with every value escaped; the page script only follows the links (`#run=<handle>`).
 */
import type { StatisticsSection } from './statistics.js';

type Row = StatisticsSection['rows'][number];

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const percent = (x: number): string => `${(x * 100).toFixed(1)}%`;

/** The page link of a run: the page script opens the run whose handle follows `#run=`. */
export function runLink(handle: string): string {
  return `#run=${encodeURIComponent(handle)}`;
}

/** The strip: a mark per trial in index order, failed and excluded ones linked to their run with their cause. */
function strip(row: Row): string {
  const failures = [...row.failures];
  return [...row.strip]
    .map((mark, i) => {
      if (mark === 'P') return `<span class="trial trial-pass" title="trial ${i + 1}: passed">✓</span>`;
      const failure = failures.shift();
      const cause = failure
        ? `trial ${failure.trial + 1}: ${mark === 'F' ? 'failed' : 'excluded'}, ${failure.failureClass}${failure.code ? ` ${failure.code}` : ''}${failure.reason ? `: ${failure.reason}` : ''}`
        : `trial ${i + 1}: failed`;
      const cls = mark === 'F' ? 'trial-fail' : 'trial-excluded';
      const glyph = mark === 'F' ? '✗' : '–';
      return failure?.handle
        ? `<a class="trial ${cls}" data-testid="trial-link" href="${escapeHtml(runLink(failure.handle))}" title="${escapeHtml(cause)}">${glyph}</a>`
        : `<span class="trial ${cls}" title="${escapeHtml(cause)}">${glyph}</span>`;
    })
    .join('');
}

/** The rate and its interval as a bar: the interval shaded, the rate a tick, over [0, 100%]. */
function rateBar(row: Row): string {
  if (row.pass_rate === null) return '<span class="muted">no trial counted</span>';
  const [low, high] = row.ci95;
  const label = `${percent(row.pass_rate)} [${percent(low)}, ${percent(high)}]`;
  return `<span class="ci-bar" title="pass rate ${escapeHtml(label)} (Wilson 95%)"><span class="ci-range" style="left:${(low * 100).toFixed(2)}%;width:${((high - low) * 100).toFixed(2)}%"></span><span class="ci-rate" style="left:${(row.pass_rate * 100).toFixed(2)}%"></span></span> <span data-testid="trial-rate">${escapeHtml(label)}</span>`;
}

function lift(row: Row): string {
  if (!row.lift) return '<td class="muted">–</td>';
  const sign = row.lift.diff >= 0 ? '+' : '';
  const significant = row.lift.ci95[0] > 0 || row.lift.ci95[1] < 0;
  return `<td data-testid="trial-lift" class="${significant ? (row.lift.diff > 0 ? 'state-completed' : 'state-failed') : ''}">${sign}${percent(row.lift.diff)} [${percent(row.lift.ci95[0])}, ${percent(row.lift.ci95[1])}] vs ${escapeHtml(row.lift.vs)}</td>`;
}

/** The style of the section (the page's stylesheet has the colours). */
export const TRIALS_STYLE = `
#trials { padding: 0 1rem; }
.trial { display: inline-block; width: 1.1em; text-align: center; text-decoration: none; }
.trial-pass { color: var(--good, #1a7f37); }
.trial-fail { color: var(--bad, #cf222e); font-weight: bold; }
.trial-excluded { color: var(--muted, #777); }
.ci-bar { display: inline-block; position: relative; width: 8em; height: 0.7em; background: #8882; vertical-align: middle; }
.ci-range { position: absolute; top: 0; bottom: 0; background: #0969da66; }
.ci-rate { position: absolute; top: -0.15em; bottom: -0.15em; width: 2px; background: #0969da; }
`;

/** The section's HTML ('' when the report has no trial statistics). */
export function renderTrialsSection(statistics: StatisticsSection | undefined): string {
  const rows = statistics?.rows ?? [];
  if (rows.length === 0) return '';
  const body = rows
    .map(
      (row) =>
        `<tr data-testid="trial-row"><td>${escapeHtml(row.case)}</td><td>${escapeHtml(row.engine)}</td><td>${escapeHtml(row.arm)}</td><td>${row.passed}/${row.n}${row.flaky ? ' <span class="muted">flaky</span>' : ''}</td><td>${rateBar(row)}</td>${lift(row)}<td data-testid="trial-strip">${strip(row)}</td><td>${row.infra_failed + row.engine_failed + row.judge_errors}</td></tr>`,
    )
    .join('\n');
  return `<section id="trials" data-testid="trials">
<h2>Trials</h2>
<p class="muted">Pass rate with its Wilson 95% interval; lift over the baseline arm with Newcombe's 95% interval. A failed (✗) or excluded (–) trial links to its run; its title gives the classified cause.</p>
<table>
<tr><th>case</th><th>engine</th><th>arm</th><th>passed</th><th>pass rate</th><th>lift</th><th>trials</th><th>apart</th></tr>
${body}
</table>
</section>
`;
}
