/**
 * The page script's frame and run list: the header and tabs, the runs with their filters (engine, completion, the
 * test's state and failing expectation, diagnostics, error code, a search), and in a page served by `agent-harness
 * view` a refresh from the API.
 */
import { renderAttempt, stopPlayback } from './attempt.js';
import { renderMatrix } from './compare.js';
import {
  app,
  assertionOf,
  codeOf,
  completionOf,
  DATA,
  diagCount,
  type Filters,
  lastAttempt,
  state,
  testOf,
  testStateOf,
  toolCount,
  uniq,
  api,
} from './data.js';
import { renderBaseline, renderDiff } from './diff.js';
import { add, clear, h, ms, stateClass } from './dom.js';
import type { PageRun } from './page-data.js';

/** Renders the whole page again from the state. */
export function render(): void {
  stopPlayback();
  clear(app);
  const s = DATA.report.summary;
  app.appendChild(
    h('header', null, [
      h('h1', null, DATA.title),
      h(
        'span',
        { 'data-testid': 'summary' },
        `${s.total} tests: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped; ${DATA.runs.length} runs; ${s.disagreements} engine disagreement(s)`,
      ),
      h('span', { class: 'muted' }, `${DATA.live ? 'live, ' : ''}generated ${DATA.generatedAt}`),
    ]),
  );
  const tabs = [
    ['runs', 'Runs'],
    ['matrix', 'Engine matrix'],
    ['diff', 'Diff'],
  ];
  if (DATA.baseline) tabs.push(['baseline', `Against ${DATA.baseline.label}`]);
  app.appendChild(
    h(
      'nav',
      null,
      tabs.map((t) =>
        h(
          'button',
          {
            class: state.tab === t[0] ? 'on' : null,
            'data-testid': `tab-${t[0]}`,
            onclick: () => {
              state.tab = t[0];
              render();
            },
          },
          t[1],
        ),
      ),
    ),
  );
  const main = h('main');
  app.appendChild(main);
  if (state.tab === 'runs') state.run ? renderAttempt(main) : renderRuns(main);
  else if (state.tab === 'matrix') renderMatrix(main);
  else if (state.tab === 'diff') renderDiff(main);
  else renderBaseline(main);
}

/** A labelled filter: `all` and the options, calling back with the one picked. */
function select(name: string, value: string, options: string[], onchange: (value: string) => void): HTMLElement {
  const el = h(
    'select',
    { 'data-testid': `filter-${name}`, onchange: () => onchange(el.value) },
    [h('option', { value: '' }, 'all')].concat(options.map((o) => h('option', { value: o, selected: o === value }, o))),
  );
  return h('label', null, [name, el]);
}

/** The runs the filters let through. */
function filteredRuns(): PageRun[] {
  const f = state.filters;
  return DATA.runs.filter((r) => {
    if (f.engine && r.engine !== f.engine) return false;
    if (f.completion && completionOf(r) !== f.completion) return false;
    if (f.outcome && testStateOf(r) !== f.outcome) return false;
    if (f.code && codeOf(r) !== f.code) return false;
    if (f.diag === 'with' && diagCount(r) === 0) return false;
    if (f.diag === 'without' && diagCount(r) > 0) return false;
    if (f.test) {
      const hay = `${r.case} ${r.label || ''} ${r.testId || ''} ${r.handle} ${r.runId}`.toLowerCase();
      if (hay.indexOf(f.test.toLowerCase()) < 0) return false;
    }
    return true;
  });
}

/** The run list: its filters, then a row per run that opens it. */
export function renderRuns(main: HTMLElement): void {
  const f = state.filters;
  const set = (key: keyof Filters) => (v: string) => {
    f[key] = v;
    render();
  };
  const search = h('input', {
    type: 'search',
    placeholder: 'test, case or handle',
    value: f.test,
    'data-testid': 'filter-test',
  });
  search.addEventListener('change', () => {
    f.test = search.value;
    render();
  });
  main.appendChild(
    h('div', { class: 'filters' }, [
      select('engine', f.engine, uniq(DATA.runs.map((r) => r.engine)), set('engine')),
      select('completion', f.completion, uniq(DATA.runs.map(completionOf)), set('completion')),
      select('test state', f.outcome, uniq(DATA.runs.map(testStateOf)), set('outcome')),
      select('diagnostics', f.diag, ['with', 'without'], set('diag')),
      select('error code', f.code, uniq(DATA.runs.map(codeOf)), set('code')),
      h('label', null, ['test', search]),
      DATA.live
        ? h('button', { class: 'btn', 'data-testid': 'refresh', onclick: refreshRuns }, '\u21BB refresh')
        : null,
    ]),
  );
  const rows = filteredRuns();
  // The test's state beside the agent's completion: an agent can complete and its test still fail.
  const table = h('table', { 'data-testid': 'runs' }, [
    h(
      'tr',
      null,
      [
        'handle',
        'engine',
        'case',
        'test',
        'completion',
        'code',
        'tool calls',
        'diagnostics',
        'attempts',
        'duration',
      ].map((c) => h('th', null, c)),
    ),
  ]);
  for (const r of rows) table.appendChild(runRow(r));
  main.appendChild(h('p', { class: 'muted' }, `${rows.length} of ${DATA.runs.length} runs`));
  main.appendChild(table);
}

/** A run's row of the list; a click or Enter opens its last attempt. */
function runRow(r: PageRun): HTMLElement {
  const a = lastAttempt(r);
  let dur = 0;
  for (const x of r.attempts) dur += x.durationMs || 0;
  const open = () => {
    state.run = r.handle;
    state.attempt = a ? a.attempt : null;
    render();
  };
  const row = h('tr', { class: 'click', tabindex: '0', 'data-testid': `run-${r.handle}`, onclick: open });
  row.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') open();
  });
  return add(row, [
    h('td', null, h('code', null, r.handle)),
    h('td', null, r.engine),
    h('td', null, r.case),
    testCell(r),
    h('td', { class: stateClass(completionOf(r)) }, completionOf(r)),
    h('td', null, codeOf(r)),
    h('td', null, String(toolCount(r))),
    h('td', null, String(diagCount(r))),
    h('td', null, String(r.attempts.length)),
    h('td', null, ms(dur)),
  ]);
}

/** The run list's test cell: the test's state and, for a failed one, its failing expectation's first line. */
function testCell(r: PageRun): HTMLElement {
  const t = testOf(r);
  if (!t) return h('td', { class: 'muted', 'data-testid': 'test-state' }, '\u2013');
  const assertion = assertionOf(r);
  return h('td', { 'data-testid': 'test-state' }, [
    h('span', { class: stateClass(t.state) }, t.state),
    assertion ? h('div', { class: 'assertion', 'data-testid': 'test-assertion', title: t.errors[0] }, assertion) : null,
  ]);
}

/** Served by agent-harness view: the run list again from the API (new runs, attempts that have ended). */
function refreshRuns(): void {
  fetch(api('/runs'))
    .then((res) => res.json())
    .then((body: { runs: PageRun[] }) => {
      DATA.runs = body.runs;
      render();
    });
}
