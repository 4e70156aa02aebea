/**
 * The page script's side-by-side diff of two runs (tool calls aligned on their normalized form by a longest common
 * subsequence, files changed, completion and counts) and the comparison with the baseline report. Agent content goes
 * in as text only.
 */
import { runOfTest } from './compare.js';
import { codeOf, completionOf, DATA, diagCount, lastAttempt, runByHandle, state, toolCount, uniq } from './data.js';
import { h } from './dom.js';
import type { PageAttempt, PageRun, PageTest } from './page-data.js';
import { render } from './runs.js';

/** The runs a diff can pick, now's and the baseline's: [key, label]. */
function choices(): [string, string][] {
  const out: [string, string][] = DATA.runs.map((r) => [
    `now:${r.handle}`,
    `${r.engine} \u00B7 ${r.case} \u00B7 ${r.handle}`,
  ]);
  const baseline = DATA.baseline;
  if (baseline)
    for (const r of baseline.runs)
      out.push([`baseline:${r.handle}`, `${baseline.label}: ${r.engine} \u00B7 ${r.case} \u00B7 ${r.handle}`]);
  return out;
}
/** The run of a diff key (`now:<handle>`, `baseline:<handle>`), or null. */
function pick(key: string): PageRun | null {
  if (!key) return null;
  const i = key.indexOf(':');
  return runByHandle(key.slice(i + 1), key.slice(0, i) === 'baseline' ? DATA.baseline?.runs : DATA.runs);
}

/** Aligns two lists on equal keys (longest common subsequence): rows of [left index|null, right index|null]. */
function align(a: string[], b: string[]): [number | null, number | null][] {
  const n = a.length;
  const m = b.length;
  if (n * m > 4000000) {
    const pairs: [number | null, number | null][] = [];
    for (let i = 0; i < Math.max(n, m); i++) pairs.push([i < n ? i : null, i < m ? i : null]);
    return pairs;
  }
  const L: number[][] = [];
  for (let i = 0; i <= n; i++) L.push(new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const rows: [number | null, number | null][] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      rows.push([i, j]);
      i++;
      j++;
    } else if (j >= m || (i < n && L[i + 1][j] >= L[i][j + 1])) {
      rows.push([i, null]);
      i++;
    } else {
      rows.push([null, j]);
      j++;
    }
  }
  return rows;
}

/** The diff tab: two runs picked, their outcome and counts, their tool calls aligned, their files changed. */
export function renderDiff(main: HTMLElement): void {
  const opts = choices();
  if (!state.left && opts[0]) state.left = opts[0][0];
  if (!state.right && opts[1]) state.right = opts[1][0];
  const sel = (key: 'left' | 'right', value: string) => {
    const el = h(
      'select',
      {
        'data-testid': `diff-${key}`,
        onchange: () => {
          state[key] = el.value;
          render();
        },
      },
      opts.map((o) => h('option', { value: o[0], selected: o[0] === value }, o[1])),
    );
    return el;
  };
  main.appendChild(
    h('div', { class: 'filters' }, [
      h('label', null, ['left', sel('left', state.left)]),
      h('label', null, ['right', sel('right', state.right)]),
    ]),
  );
  const L = pick(state.left);
  const R = pick(state.right);
  if (!L || !R) {
    main.appendChild(h('p', { class: 'muted' }, 'Pick two runs to compare.'));
    return;
  }
  const la = lastAttempt(L);
  const ra = lastAttempt(R);
  diffSummary(main, L, R, la, ra);
  diffTools(main, la ? la.toolKeys : [], ra ? ra.toolKeys : []);
  diffFiles(main, la, ra);
}

/** The two runs' outcome and counts side by side, the rows that differ marked. */
function diffSummary(main: HTMLElement, L: PageRun, R: PageRun, la: PageAttempt | null, ra: PageAttempt | null): void {
  const counts = uniq(Object.keys(la?.fcmpCounts || {}).concat(Object.keys(ra?.fcmpCounts || {})));
  const cmp = [
    ['engine', L.engine, R.engine],
    ['case', L.case, R.case],
    ['completion', completionOf(L), completionOf(R)],
    ['error code', codeOf(L), codeOf(R)],
    ['tool calls', String(toolCount(L)), String(toolCount(R))],
    ['diagnostics', String(diagCount(L)), String(diagCount(R))],
    ['attempts', String(L.attempts.length), String(R.attempts.length)],
  ].concat(counts.map((k) => [`FCMP ${k}`, String(la?.fcmpCounts[k] || 0), String(ra?.fcmpCounts[k] || 0)]));
  main.appendChild(h('h2', null, 'Outcome and counts'));
  const head = h('tr', null, [h('th', null, ''), h('th', null, 'left'), h('th', null, 'right')]);
  const rows = cmp.map((r) => {
    const differ = r[1] === r[2] ? '' : 'differ';
    return h('tr', { class: r[1] === r[2] ? 'row-same' : 'row-differ' }, [
      h('th', null, r[0]),
      h('td', { class: differ }, r[1]),
      h('td', { class: differ }, r[2]),
    ]);
  });
  main.appendChild(h('table', { 'data-testid': 'diff-summary' }, [head].concat(rows)));
}

/** The two runs' tool calls, aligned on their normalized form. */
function diffTools(main: HTMLElement, lk: string[], rk: string[]): void {
  main.appendChild(h('h2', null, 'Tool calls, aligned on their normalized form'));
  const head = h('tr', null, [h('th', null, 'left'), h('th', null, ''), h('th', null, 'right')]);
  const rows = align(lk, rk).map((p) => {
    const kind = p[0] !== null && p[1] !== null ? 'same' : p[0] !== null ? 'only-left' : 'only-right';
    return h('tr', { class: `row-${kind}`, 'data-testid': `tool-row-${kind}` }, [
      h('td', null, p[0] !== null ? lk[p[0]] : ''),
      h(
        'td',
        { class: kind === 'same' ? 'same' : 'differ' },
        kind === 'same' ? '=' : kind === 'only-left' ? '\u2190' : '\u2192',
      ),
      h('td', null, p[1] !== null ? rk[p[1]] : ''),
    ]);
  });
  main.appendChild(h('table', { 'data-testid': 'diff-tools' }, [head].concat(rows)));
}

/** What each file's change was in an attempt: path → created, modified or deleted. */
function changedFiles(a: PageAttempt | null): Record<string, string> {
  const out: Record<string, string> = {};
  const files = a?.files;
  if (files) for (const k of ['created', 'modified', 'deleted'] as const) for (const p of files[k]) out[p] = k;
  return out;
}

/** The files either run changed, and how each did. */
function diffFiles(main: HTMLElement, la: PageAttempt | null, ra: PageAttempt | null): void {
  main.appendChild(h('h2', null, 'Files changed'));
  const lf = changedFiles(la);
  const rf = changedFiles(ra);
  const paths = uniq(Object.keys(lf).concat(Object.keys(rf)));
  if (!paths.length) {
    main.appendChild(h('p', { class: 'muted' }, 'Neither changed a file.'));
    return;
  }
  const head = h('tr', null, [h('th', null, 'file'), h('th', null, 'left'), h('th', null, 'right')]);
  const rows = paths.map((p) => {
    const differ = lf[p] === rf[p] ? '' : 'differ';
    return h('tr', { class: lf[p] === rf[p] ? 'row-same' : '' }, [
      h('td', null, p),
      h('td', { class: differ }, lf[p] || '\u2014'),
      h('td', { class: differ }, rf[p] || '\u2014'),
    ]);
  });
  main.appendChild(h('table', { 'data-testid': 'diff-files' }, [head].concat(rows)));
}

/** The baseline tab: regressions and changes, then a row per engine and case against its test then. */
export function renderBaseline(main: HTMLElement): void {
  const b = DATA.baseline!;
  main.appendChild(
    h('h2', null, `${b.regressions.length} regression(s), ${b.changes.length} change(s) against ${b.label}`),
  );
  main.appendChild(
    h(
      'ul',
      { 'data-testid': 'regressions' },
      b.regressions.map((r) => h('li', { class: 'differ' }, r)).concat(b.changes.map((c) => h('li', null, c))),
    ),
  );
  const then: Record<string, PageTest> = {};
  for (const t of b.report.tests) then[t.fullName] = t;
  const table = h('table', { 'data-testid': 'baseline-table' }, [
    h(
      'tr',
      null,
      ['test', 'completion then', 'now', 'tool calls then', 'now', 'diagnostics then', 'now', ''].map((c) =>
        h('th', null, c),
      ),
    ),
  ]);
  // One row per engine and case, the newest test of it (as the baseline comparison counts them).
  const latest: Record<string, PageTest> = {};
  const order: string[] = [];
  for (const t of DATA.report.tests) {
    const k = `${t.engine}\u0000${t.fullName}`;
    if (!(k in latest)) order.push(k);
    latest[k] = t;
  }
  for (const k of order) {
    const t = latest[k];
    const p = then[t.fullName];
    if (!p || !t.engine) continue;
    table.appendChild(baselineRow(p, t, b.runs));
  }
  main.appendChild(table);
}

/** A test's row against the baseline: completion, tool calls and diagnostics then and now, and a diff button. */
function baselineRow(p: PageTest, t: PageTest, baselineRuns: PageRun[]): HTMLElement {
  const was = p.completion ? p.completion.state : '';
  const is = t.completion ? t.completion.state : '';
  const oldRun = baselineRuns.filter((r) => r.testId === p.id)[0];
  const newRun = runOfTest(t.id);
  const button =
    oldRun && newRun
      ? h(
          'button',
          {
            class: 'btn',
            'data-testid': 'baseline-diff',
            onclick: () => {
              state.left = `baseline:${oldRun.handle}`;
              state.right = `now:${newRun.handle}`;
              state.tab = 'diff';
              render();
            },
          },
          'diff',
        )
      : '';
  return h('tr', null, [
    h('td', null, t.fullName),
    h('td', null, was),
    h('td', { class: was === is ? '' : 'differ' }, is),
    h('td', null, String(p.toolCalls || 0)),
    h('td', { class: (p.toolCalls || 0) === (t.toolCalls || 0) ? '' : 'differ' }, String(t.toolCalls || 0)),
    h('td', null, String(p.diagnostics)),
    h('td', { class: p.diagnostics === t.diagnostics ? '' : 'differ' }, String(t.diagnostics)),
    h('td', null, button),
  ]);
}
