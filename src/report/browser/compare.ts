/**
 * The page script's engine matrix, and the report's fidelity and ACP tables beside it (diff.ts has the side-by-side
 * diff of two runs and the comparison with the baseline report). Agent content goes in as text only.
 */
import { DATA, state, toolCount, uniq } from './data.js';
import { h, stateClass } from './dom.js';
import type { AcpColumn, PageCheckOutcome, PageMatrixRow, PageRun } from './page-data.js';
import { render } from './runs.js';

/** The ACP table's columns: defined ahead of the script by the server, from ACP_CONFORMANCE_COLUMNS. */
declare const ACP_COLUMNS: readonly AcpColumn[];

/** An engine's cell of a matrix row, or null. */
function cellFor(row: PageMatrixRow, engine: string) {
  return row.engines[engine] || null;
}
/** The run a test made, or null. */
export function runOfTest(testId: string): PageRun | null {
  return DATA.runs.filter((r) => r.testId === testId)[0] || null;
}

/** The engine matrix: a row per case, a column per engine, and a button that diffs the first two runs. */
export function renderMatrix(main: HTMLElement): void {
  const rows = DATA.report.matrix;
  const engines = uniq(rows.flatMap((r) => Object.keys(r.engines)));
  const only = h('input', {
    type: 'checkbox',
    checked: state.differentOnly,
    'data-testid': 'different-only',
    onchange: () => {
      state.differentOnly = only.checked;
      render();
    },
  });
  main.appendChild(h('div', { class: 'filters' }, [h('label', null, [only, 'only cases where the engines disagree'])]));
  if (!rows.length) {
    main.appendChild(h('p', { class: 'muted' }, 'No case ran on two or more engines.'));
    renderTables(main);
    return;
  }
  const table = h('table', { 'data-testid': 'matrix' }, [
    h(
      'tr',
      null,
      [h('th', null, 'case')].concat(
        engines.map((e) => h('th', null, e)),
        [h('th', null, 'agreement'), h('th', null, '')],
      ),
    ),
  ]);
  for (const row of rows.filter((r) => !state.differentOnly || r.disagree)) table.appendChild(matrixRow(row, engines));
  main.appendChild(table);
  renderTables(main);
}

/** One case's row of the matrix. */
function matrixRow(row: PageMatrixRow, engines: string[]): HTMLElement {
  const runs = engines.map((e) => {
    const c = cellFor(row, e);
    return c ? runOfTest(c.testId) : null;
  });
  const cells = engines.map((e, i) => {
    const c = cellFor(row, e);
    if (!c) return h('td', null, '\u2014');
    const run = runs[i];
    return h('td', { class: stateClass(c.outcome) }, [
      c.outcome + (c.completion ? ` (${c.completion})` : ''),
      run ? h('span', { class: 'muted' }, ` \u00B7 ${toolCount(run)} tools`) : null,
    ]);
  });
  const compare = () => {
    const present = runs.filter((r): r is PageRun => Boolean(r));
    if (present.length >= 2) {
      state.left = `now:${present[0].handle}`;
      state.right = `now:${present[1].handle}`;
    }
    state.tab = 'diff';
    render();
  };
  return h(
    'tr',
    { 'data-testid': 'matrix-row' },
    [h('td', null, row.case)].concat(cells, [
      h('td', { class: row.disagree ? 'differ' : 'same' }, row.disagree ? 'disagree' : 'agree'),
      h('td', null, h('button', { class: 'btn', 'data-testid': 'compare', onclick: compare }, 'compare')),
    ]),
  );
}

/** The consistency report's per-engine tables: cassette fidelity, and ACP against native (when the tests made them). */
function renderTables(main: HTMLElement): void {
  const fidelity = DATA.report.fidelity || [];
  if (fidelity.length) {
    const cols = ['recorded', 'replayed', 'exact', 'divergent', 'missed', 'unused'] as const;
    main.appendChild(h('h2', null, 'Cassette fidelity'));
    const head = h(
      'tr',
      null,
      ['engine'].concat(cols).map((c) => h('th', null, c)),
    );
    const body = fidelity.map((row) =>
      h(
        'tr',
        null,
        [h('td', null, row.engine)].concat(
          cols.map((c) =>
            h(
              'td',
              { class: (c === 'missed' || c === 'unused') && row[c] > 0 ? 'state-failed' : null },
              String(row[c]),
            ),
          ),
        ),
      ),
    );
    main.appendChild(h('table', { 'data-testid': 'fidelity' }, [head].concat(body)));
  }
  const acp = DATA.report.acpConformance || [];
  if (acp.length) {
    main.appendChild(h('h2', null, 'ACP against native'));
    const marks: Record<string, string> = { pass: '\u2713', fail: '\u2717', skipped: '\u2013' };
    const classes: Record<string, string> = { pass: 'state-completed', fail: 'state-failed', skipped: 'muted' };
    const head = h('tr', null, [h('th', null, 'engine')].concat(ACP_COLUMNS.map((c) => h('th', null, c[1]))));
    const body = acp.map((row) =>
      h(
        'tr',
        { 'data-testid': `acp-row-${row.engine}` },
        [h('td', null, row.engine)].concat(
          ACP_COLUMNS.map((c) => {
            const check = row[c[0]];
            const o: PageCheckOutcome = typeof check === 'object' ? check : { status: 'skipped', detail: '' };
            return h('td', { class: classes[o.status] || null, title: o.detail || null }, marks[o.status] || o.status);
          }),
        ),
      ),
    );
    main.appendChild(h('table', { 'data-testid': 'acp-conformance' }, [head].concat(body)));
  }
}
