/**
 * The page script's comparisons (see html-page-script.ts): the engine matrix, the side-by-side diff of two runs
 * (tool calls aligned on their normalized form by a longest common subsequence, files changed, completion and
 * counts), the report's fidelity and ACP tables, and the comparison with the baseline report. Agent content goes in
 * as text only.
 */
import { ACP_CONFORMANCE_COLUMNS } from './acp-conformance.js';

export const PAGE_COMPARE = String.raw`
var ACP_COLUMNS = ${JSON.stringify(ACP_CONFORMANCE_COLUMNS)};
function cellFor(row, engine) { return row.engines[engine] || null; }
function runOfTest(testId) { return DATA.runs.filter(function (r) { return r.testId === testId; })[0] || null; }

function renderMatrix(main) {
  var rows = DATA.report.matrix;
  var engines = uniq([].concat.apply([], rows.map(function (r) { return Object.keys(r.engines); })));
  var only = h('input', { type: 'checkbox', checked: state.differentOnly, 'data-testid': 'different-only',
    onchange: function () { state.differentOnly = only.checked; render(); } });
  main.appendChild(h('div', { class: 'filters' }, [h('label', null, [only, 'only cases where the engines disagree'])]));
  if (!rows.length) { main.appendChild(h('p', { class: 'muted' }, 'No case ran on two or more engines.')); renderTables(main); return; }
  var table = h('table', { 'data-testid': 'matrix' }, [h('tr', null, [h('th', null, 'case')].concat(engines.map(function (e) { return h('th', null, e); }), [h('th', null, 'agreement'), h('th', null, '')]))]);
  rows.filter(function (r) { return !state.differentOnly || r.disagree; }).forEach(function (row) {
    var runs = engines.map(function (e) { var c = cellFor(row, e); return c ? runOfTest(c.testId) : null; });
    table.appendChild(h('tr', { 'data-testid': 'matrix-row' }, [h('td', null, row.case)].concat(engines.map(function (e, i) {
      var c = cellFor(row, e);
      if (!c) return h('td', null, '\u2014');
      return h('td', { class: stateClass(c.outcome) }, [c.outcome + (c.completion ? ' (' + c.completion + ')' : ''),
        runs[i] ? h('span', { class: 'muted' }, ' \u00B7 ' + toolCount(runs[i]) + ' tools') : null]);
    }), [h('td', { class: row.disagree ? 'differ' : 'same' }, row.disagree ? 'disagree' : 'agree'),
      h('td', null, h('button', { class: 'btn', 'data-testid': 'compare', onclick: function () {
        var present = runs.filter(Boolean);
        if (present.length >= 2) { state.left = 'now:' + present[0].handle; state.right = 'now:' + present[1].handle; }
        state.tab = 'diff'; render();
      } }, 'compare'))])));
  });
  main.appendChild(table);
  renderTables(main);
}

/** The consistency report's per-engine tables: cassette fidelity, and ACP against native (when the tests made them). */
function renderTables(main) {
  var fidelity = DATA.report.fidelity || [];
  if (fidelity.length) {
    var cols = ['recorded', 'replayed', 'exact', 'divergent', 'missed', 'unused'];
    main.appendChild(h('h2', null, 'Cassette fidelity'));
    main.appendChild(h('table', { 'data-testid': 'fidelity' }, [h('tr', null, ['engine'].concat(cols).map(function (c) { return h('th', null, c); }))]
      .concat(fidelity.map(function (row) {
        return h('tr', null, [h('td', null, row.engine)].concat(cols.map(function (c) {
          return h('td', { class: (c === 'missed' || c === 'unused') && row[c] > 0 ? 'state-failed' : null }, String(row[c]));
        })));
      }))));
  }
  var acp = DATA.report.acpConformance || [];
  if (acp.length) {
    main.appendChild(h('h2', null, 'ACP against native'));
    var marks = { pass: '\u2713', fail: '\u2717', skipped: '\u2013' };
    var classes = { pass: 'state-completed', fail: 'state-failed', skipped: 'muted' };
    main.appendChild(h('table', { 'data-testid': 'acp-conformance' }, [h('tr', null, [h('th', null, 'engine')].concat(ACP_COLUMNS.map(function (c) { return h('th', null, c[1]); })))]
      .concat(acp.map(function (row) {
        return h('tr', { 'data-testid': 'acp-row-' + row.engine }, [h('td', null, row.engine)].concat(ACP_COLUMNS.map(function (c) {
          var o = row[c[0]] || { status: 'skipped', detail: '' };
          return h('td', { class: classes[o.status] || null, title: o.detail || null }, marks[o.status] || o.status);
        })));
      }))));
  }
}

function choices() {
  var out = DATA.runs.map(function (r) { return ['now:' + r.handle, r.engine + ' \u00B7 ' + r.case + ' \u00B7 ' + r.handle]; });
  if (DATA.baseline) DATA.baseline.runs.forEach(function (r) { out.push(['baseline:' + r.handle, DATA.baseline.label + ': ' + r.engine + ' \u00B7 ' + r.case + ' \u00B7 ' + r.handle]); });
  return out;
}
function pick(key) {
  if (!key) return null;
  var i = key.indexOf(':');
  return runByHandle(key.slice(i + 1), key.slice(0, i) === 'baseline' ? DATA.baseline.runs : DATA.runs);
}

/** Aligns two lists on equal keys (longest common subsequence): rows of [left index|null, right index|null]. */
function align(a, b) {
  var n = a.length, m = b.length, i, j, L = [];
  if (n * m > 4000000) { var pairs = []; for (i = 0; i < Math.max(n, m); i++) pairs.push([i < n ? i : null, i < m ? i : null]); return pairs; }
  for (i = 0; i <= n; i++) { L.push(new Array(m + 1).fill(0)); }
  for (i = n - 1; i >= 0; i--) for (j = m - 1; j >= 0; j--)
    L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  var rows = []; i = 0; j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { rows.push([i, j]); i++; j++; }
    else if (j >= m || (i < n && L[i + 1][j] >= L[i][j + 1])) { rows.push([i, null]); i++; }
    else { rows.push([null, j]); j++; }
  }
  return rows;
}

function renderDiff(main) {
  var opts = choices();
  if (!state.left && opts[0]) state.left = opts[0][0];
  if (!state.right && opts[1]) state.right = opts[1][0];
  var sel = function (key, value) {
    var el = h('select', { 'data-testid': 'diff-' + key, onchange: function () { state[key] = el.value; render(); } },
      opts.map(function (o) { return h('option', { value: o[0], selected: o[0] === value }, o[1]); }));
    return el;
  };
  main.appendChild(h('div', { class: 'filters' }, [h('label', null, ['left', sel('left', state.left)]), h('label', null, ['right', sel('right', state.right)])]));
  var L = pick(state.left), R = pick(state.right);
  if (!L || !R) { main.appendChild(h('p', { class: 'muted' }, 'Pick two runs to compare.')); return; }
  var la = lastAttempt(L), ra = lastAttempt(R);
  var counts = uniq(Object.keys((la && la.fcmpCounts) || {}).concat(Object.keys((ra && ra.fcmpCounts) || {})));
  var cmp = [['engine', L.engine, R.engine], ['case', L.case, R.case], ['completion', completionOf(L), completionOf(R)],
    ['error code', codeOf(L), codeOf(R)], ['tool calls', String(toolCount(L)), String(toolCount(R))],
    ['diagnostics', String(diagCount(L)), String(diagCount(R))], ['attempts', String(L.attempts.length), String(R.attempts.length)]]
    .concat(counts.map(function (k) { return ['FCMP ' + k, String((la && la.fcmpCounts[k]) || 0), String((ra && ra.fcmpCounts[k]) || 0)]; }));
  main.appendChild(h('h2', null, 'Outcome and counts'));
  main.appendChild(h('table', { 'data-testid': 'diff-summary' }, [h('tr', null, [h('th', null, ''), h('th', null, 'left'), h('th', null, 'right')])].concat(cmp.map(function (r) {
    return h('tr', { class: r[1] === r[2] ? 'row-same' : 'row-differ' }, [h('th', null, r[0]), h('td', { class: r[1] === r[2] ? '' : 'differ' }, r[1]), h('td', { class: r[1] === r[2] ? '' : 'differ' }, r[2])]);
  }))));
  var lk = la ? la.toolKeys : [], rk = ra ? ra.toolKeys : [];
  main.appendChild(h('h2', null, 'Tool calls, aligned on their normalized form'));
  var rows = align(lk, rk);
  main.appendChild(h('table', { 'data-testid': 'diff-tools' }, [h('tr', null, [h('th', null, 'left'), h('th', null, ''), h('th', null, 'right')])].concat(rows.map(function (p) {
    var kind = p[0] !== null && p[1] !== null ? 'same' : p[0] !== null ? 'only-left' : 'only-right';
    return h('tr', { class: 'row-' + kind, 'data-testid': 'tool-row-' + kind }, [h('td', null, p[0] !== null ? lk[p[0]] : ''),
      h('td', { class: kind === 'same' ? 'same' : 'differ' }, kind === 'same' ? '=' : kind === 'only-left' ? '\u2190' : '\u2192'),
      h('td', null, p[1] !== null ? rk[p[1]] : '')]);
  }))));
  main.appendChild(h('h2', null, 'Files changed'));
  var files = function (a) { var out = {}; if (a && a.files) ['created', 'modified', 'deleted'].forEach(function (k) { a.files[k].forEach(function (p) { out[p] = k; }); }); return out; };
  var lf = files(la), rf = files(ra);
  var paths = uniq(Object.keys(lf).concat(Object.keys(rf)));
  main.appendChild(paths.length ? h('table', { 'data-testid': 'diff-files' }, [h('tr', null, [h('th', null, 'file'), h('th', null, 'left'), h('th', null, 'right')])].concat(paths.map(function (p) {
    return h('tr', { class: lf[p] === rf[p] ? 'row-same' : '' }, [h('td', null, p), h('td', { class: lf[p] === rf[p] ? '' : 'differ' }, lf[p] || '\u2014'), h('td', { class: lf[p] === rf[p] ? '' : 'differ' }, rf[p] || '\u2014')]);
  }))) : h('p', { class: 'muted' }, 'Neither changed a file.'));
}

function renderBaseline(main) {
  var b = DATA.baseline;
  main.appendChild(h('h2', null, b.regressions.length + ' regression(s), ' + b.changes.length + ' change(s) against ' + b.label));
  main.appendChild(h('ul', { 'data-testid': 'regressions' }, b.regressions.map(function (r) { return h('li', { class: 'differ' }, r); })
    .concat(b.changes.map(function (c) { return h('li', null, c); }))));
  var then = {};
  b.report.tests.forEach(function (t) { then[t.fullName] = t; });
  var table = h('table', { 'data-testid': 'baseline-table' }, [h('tr', null, ['test', 'completion then', 'now', 'tool calls then', 'now', 'diagnostics then', 'now', '']
    .map(function (c) { return h('th', null, c); }))]);
  // One row per engine and case, the newest test of it (as the baseline comparison counts them).
  var latest = {}, order = [];
  DATA.report.tests.forEach(function (t) { var k = t.engine + '\u0000' + t.fullName; if (!(k in latest)) order.push(k); latest[k] = t; });
  order.map(function (k) { return latest[k]; }).forEach(function (t) {
    var p = then[t.fullName];
    if (!p || !t.engine) return;
    var was = p.completion ? p.completion.state : '', is = t.completion ? t.completion.state : '';
    var oldRun = b.runs.filter(function (r) { return r.testId === p.id; })[0];
    var newRun = runOfTest(t.id);
    table.appendChild(h('tr', null, [h('td', null, t.fullName), h('td', null, was), h('td', { class: was === is ? '' : 'differ' }, is),
      h('td', null, String(p.toolCalls || 0)), h('td', { class: (p.toolCalls || 0) === (t.toolCalls || 0) ? '' : 'differ' }, String(t.toolCalls || 0)),
      h('td', null, String(p.diagnostics)), h('td', { class: p.diagnostics === t.diagnostics ? '' : 'differ' }, String(t.diagnostics)),
      h('td', null, oldRun && newRun ? h('button', { class: 'btn', 'data-testid': 'baseline-diff', onclick: function () {
        state.left = 'baseline:' + oldRun.handle; state.right = 'now:' + newRun.handle; state.tab = 'diff'; render();
      } }, 'diff') : '')]));
  });
  main.appendChild(table);
}
`;
