/**
 * The HTML report's script, plain DOM and no framework, kept as a string: it is inlined into the page, and the
 * page's CSP allows exactly this script by its hash. Every piece of agent content goes into the page as text
 * (`textContent`, text nodes), never as markup; bidi and other invisible control characters are shown as `⟦U+202E⟧`
 * so a line cannot pretend to say what it does not. It reads the data block, and in a page served by
 * `agent-harness view` fetches attempts from the API and tails running ones over server-sent events.
 */
export const PAGE_SCRIPT = String.raw`(function () {
'use strict';
var DATA = JSON.parse(document.getElementById('agent-harness-data').textContent);
var app = document.getElementById('app');
var state = { tab: 'runs', run: null, attempt: null, filters: { engine: '', completion: '', test: '', diag: '', code: '' },
  left: '', right: '', differentOnly: false };
var playTimers = [];
var tail = null;

var CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/g;
function shown(value) {
  if (value === null || value === undefined) return '';
  return String(value).replace(CONTROL, function (c) {
    return '\u27E6U+' + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0') + '\u27E7';
  });
}
function h(tag, attrs, children) {
  var el = document.createElement(tag);
  if (attrs) for (var k in attrs) {
    var v = attrs[k];
    if (v === null || v === undefined || v === false) continue;
    if (k === 'onclick' || k === 'onchange' || k === 'oninput') el.addEventListener(k.slice(2), v);
    else if (k === 'href') { if (safeHref(v)) el.setAttribute('href', v); }
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  add(el, children);
  return el;
}
function add(el, children) {
  if (children === null || children === undefined) return el;
  if (!Array.isArray(children)) children = [children];
  for (var i = 0; i < children.length; i++) {
    var c = children[i];
    if (c === null || c === undefined || c === false) continue;
    if (typeof c === 'object' && c.nodeType) el.appendChild(c);
    else el.appendChild(document.createTextNode(shown(c)));
  }
  return el;
}
function safeHref(v) { return typeof v === 'string' && !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(v) && v.indexOf('//') !== 0; }
var SHOW_FIRST = 65536;
/** A text block; a long one shows its first 64 KiB and a button that shows the rest (layout stays quick). */
function pre(text, testid) {
  var p = h('pre', { 'data-testid': testid || null });
  text = String(text);
  if (text.length <= SHOW_FIRST) { p.textContent = shown(text); return p; }
  p.textContent = shown(text.slice(0, SHOW_FIRST));
  var more = h('button', { class: 'btn', 'data-testid': 'show-all', onclick: function () {
    p.textContent = shown(text);
    more.remove();
  } }, 'show all ' + text.length + ' characters');
  var box = h('div', null, [p, more]);
  return box;
}
function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }
function stateClass(s) { return 'state-' + String(s || 'unknown').replace(/[^a-z_]/g, ''); }
function ms(n) { return n === null || n === undefined ? '' : n < 1000 ? Math.round(n) + ' ms' : (n / 1000).toFixed(1) + ' s'; }
function lastAttempt(run) { return run.attempts.length ? run.attempts[run.attempts.length - 1] : null; }
function completionOf(run) { var a = lastAttempt(run); return run.running ? 'running' : a && a.completion ? a.completion.state : 'unknown'; }
function codeOf(run) { var a = lastAttempt(run); return a && a.completion && a.completion.code ? a.completion.code : ''; }
function diagCount(run) { var n = 0; run.attempts.forEach(function (a) { n += a.diagnostics.length; }); return n; }
function toolCount(run) { var n = 0; run.attempts.forEach(function (a) { n += a.toolCalls; }); return n; }
function uniq(list) { return list.filter(function (v, i) { return v && list.indexOf(v) === i; }).sort(); }
function runByHandle(handle, runs) { return (runs || DATA.runs).filter(function (r) { return r.handle === handle; })[0] || null; }
function token() { return DATA.live ? DATA.live.token : ''; }
function api(path) { return DATA.live.api + path + (path.indexOf('?') < 0 ? '?' : '&') + 'token=' + encodeURIComponent(token()); }

function render() {
  stopPlayback();
  clear(app);
  var s = DATA.report.summary;
  app.appendChild(h('header', null, [
    h('h1', null, DATA.title),
    h('span', { 'data-testid': 'summary' }, s.total + ' tests: ' + s.passed + ' passed, ' + s.failed + ' failed, ' + s.skipped +
      ' skipped; ' + DATA.runs.length + ' runs; ' + s.disagreements + ' engine disagreement(s)'),
    h('span', { class: 'muted' }, (DATA.live ? 'live, ' : '') + 'generated ' + DATA.generatedAt)
  ]));
  var tabs = [['runs', 'Runs'], ['matrix', 'Engine matrix'], ['diff', 'Diff']];
  if (DATA.baseline) tabs.push(['baseline', 'Against ' + DATA.baseline.label]);
  app.appendChild(h('nav', null, tabs.map(function (t) {
    return h('button', { class: state.tab === t[0] ? 'on' : null, 'data-testid': 'tab-' + t[0],
      onclick: function () { state.tab = t[0]; render(); } }, t[1]);
  })));
  var main = h('main');
  app.appendChild(main);
  if (state.tab === 'runs') state.run ? renderAttempt(main) : renderRuns(main);
  else if (state.tab === 'matrix') renderMatrix(main);
  else if (state.tab === 'diff') renderDiff(main);
  else renderBaseline(main);
}

function select(name, value, options, onchange) {
  var el = h('select', { 'data-testid': 'filter-' + name, onchange: function () { onchange(el.value); } },
    [h('option', { value: '' }, 'all')].concat(options.map(function (o) {
      return h('option', { value: o, selected: o === value }, o);
    })));
  return h('label', null, [name, el]);
}

function filteredRuns() {
  var f = state.filters;
  return DATA.runs.filter(function (r) {
    if (f.engine && r.engine !== f.engine) return false;
    if (f.completion && completionOf(r) !== f.completion) return false;
    if (f.code && codeOf(r) !== f.code) return false;
    if (f.diag === 'with' && diagCount(r) === 0) return false;
    if (f.diag === 'without' && diagCount(r) > 0) return false;
    if (f.test) {
      var hay = (r.case + ' ' + (r.label || '') + ' ' + (r.testId || '') + ' ' + r.handle + ' ' + r.runId).toLowerCase();
      if (hay.indexOf(f.test.toLowerCase()) < 0) return false;
    }
    return true;
  });
}

function renderRuns(main) {
  var f = state.filters;
  var set = function (key) { return function (v) { f[key] = v; render(); }; };
  var search = h('input', { type: 'search', placeholder: 'test, case or handle', value: f.test, 'data-testid': 'filter-test' });
  search.addEventListener('change', function () { f.test = search.value; render(); });
  main.appendChild(h('div', { class: 'filters' }, [
    select('engine', f.engine, uniq(DATA.runs.map(function (r) { return r.engine; })), set('engine')),
    select('completion', f.completion, uniq(DATA.runs.map(completionOf)), set('completion')),
    select('diagnostics', f.diag, ['with', 'without'], set('diag')),
    select('error code', f.code, uniq(DATA.runs.map(codeOf)), set('code')),
    h('label', null, ['test', search]),
    DATA.live ? h('button', { class: 'btn', 'data-testid': 'refresh', onclick: refreshRuns }, '\u21BB refresh') : null
  ]));
  var rows = filteredRuns();
  var table = h('table', { 'data-testid': 'runs' }, [h('tr', null, ['handle', 'engine', 'case', 'completion', 'code',
    'tool calls', 'diagnostics', 'attempts', 'duration'].map(function (c) { return h('th', null, c); }))]);
  rows.forEach(function (r) {
    var a = lastAttempt(r);
    var dur = 0; r.attempts.forEach(function (x) { dur += x.durationMs || 0; });
    var open = function () { state.run = r.handle; state.attempt = a ? a.attempt : null; render(); };
    var row = h('tr', { class: 'click', tabindex: '0', 'data-testid': 'run-' + r.handle, onclick: open });
    row.addEventListener('keydown', function (e) { if (e.key === 'Enter') open(); });
    table.appendChild(add(row, [
      h('td', null, h('code', null, r.handle)), h('td', null, r.engine), h('td', null, r.case),
      h('td', { class: stateClass(completionOf(r)) }, completionOf(r)), h('td', null, codeOf(r)),
      h('td', null, String(toolCount(r))), h('td', null, String(diagCount(r))), h('td', null, String(r.attempts.length)),
      h('td', null, ms(dur))
    ]));
  });
  main.appendChild(h('p', { class: 'muted' }, rows.length + ' of ' + DATA.runs.length + ' runs'));
  main.appendChild(table);
}

/** Served by agent-harness view: the run list again from the API (new runs, attempts that have ended). */
function refreshRuns() {
  fetch(api('/runs')).then(function (res) { return res.json(); }).then(function (body) {
    DATA.runs = body.runs;
    render();
  });
}

function withAttempt(run, n, done) {
  var a = run.attempts.filter(function (x) { return x.attempt === n; })[0];
  if (!a) return done(null);
  if (a.timeline || !DATA.live) return done(a);
  fetch(api('/runs/' + run.handle + '/attempts/' + n)).then(function (res) { return res.json(); }).then(function (body) {
    var i = run.attempts.indexOf(a);
    run.attempts[i] = body.attempt;
    done(body.attempt);
  }).catch(function () { done(a); });
}

function renderAttempt(main) {
  var run = runByHandle(state.run);
  if (!run) { state.run = null; return renderRuns(main); }
  main.appendChild(h('p', null, [h('button', { class: 'btn', 'data-testid': 'back', onclick: function () { state.run = null; stopTail(); render(); } }, '\u2190 runs'),
    ' ', h('b', null, run.engine + ' \u00B7 ' + run.case), ' ', h('code', null, run.handle),
    run.href ? h('span', null, [' ', h('a', { href: run.href }, 'run directory')]) : null]));
  main.appendChild(h('div', { class: 'filters' }, run.attempts.map(function (a) {
    return h('button', { class: 'btn' + (a.attempt === state.attempt ? ' on' : ''), 'data-testid': 'attempt-' + a.attempt,
      onclick: function () { state.attempt = a.attempt; stopTail(); render(); } }, 'attempt ' + a.attempt);
  })));
  var body = h('div', { 'data-testid': 'attempt' });
  main.appendChild(body);
  withAttempt(run, state.attempt, function (a) {
    if (!a) { add(body, 'no attempt'); return; }
    renderAttemptBody(body, run, a);
  });
}

function kv(rows) {
  return h('table', null, rows.filter(function (r) { return r[1] !== null && r[1] !== undefined && r[1] !== ''; })
    .map(function (r) { return h('tr', null, [h('th', null, r[0]), h('td', null, r[1])]); }));
}

function renderAttemptBody(body, run, a) {
  var c = a.completion;
  body.appendChild(kv([
    ['status', a.status], ['launch', a.launch],
    ['completion', c ? h('span', { class: stateClass(c.state), 'data-testid': 'completion' }, c.state + ' (' + (c.code || c.reason) + ')') : null],
    ['exit', a.exit ? (a.exit.code !== null ? 'code ' + a.exit.code : 'signal ' + a.exit.signal) : null],
    ['duration', ms(a.durationMs)], ['engine version', a.engineVersion], ['started', a.startedAt],
    ['tool calls', String(a.toolCalls)], ['diagnostics', a.diagnostics.join(', ')]
  ]));
  var steps = Object.keys(a.steps);
  if (steps.length) {
    body.appendChild(h('h2', null, 'Step timings'));
    body.appendChild(h('table', { 'data-testid': 'steps' }, steps.map(function (k) {
      return h('tr', null, [h('th', null, k), h('td', null, ms(a.steps[k]))]);
    })));
  }
  body.appendChild(h('h2', null, 'Timeline'));
  var list = h('ol', { class: 'timeline', 'data-testid': 'timeline' });
  var speed = h('select', { 'data-testid': 'speed' }, ['1', '4', '16'].map(function (s) { return h('option', { value: s }, s + '\u00D7'); }));
  body.appendChild(h('div', { class: 'filters' }, [
    h('button', { class: 'btn', 'data-testid': 'play', onclick: function () { play(list, Number(speed.value)); } }, '\u25B6 play at recorded pace'),
    speed,
    h('button', { class: 'btn', 'data-testid': 'stop', onclick: function () { stopPlayback(list); } }, '\u25A0 show all')
  ]));
  if (a.omitted) body.appendChild(h('p', { class: 'muted', 'data-testid': 'omitted' }, a.omitted));
  (a.timeline || []).forEach(function (item) { list.appendChild(timelineItem(item)); });
  body.appendChild(list);
  if (run.running && a.status === 'running' && DATA.live) startTail(run, a, list);
  body.appendChild(h('h2', null, 'Files changed'));
  if (a.files) {
    var rows = [];
    ['created', 'modified', 'deleted'].forEach(function (k) { a.files[k].forEach(function (p) { rows.push(h('tr', null, [h('td', null, k), h('td', null, p)])); }); });
    body.appendChild(rows.length ? h('table', { 'data-testid': 'files' }, rows) : h('p', { class: 'muted' }, 'none'));
  } else body.appendChild(h('p', { class: 'muted' }, 'no fs diff recorded'));
  if (a.gitPatch) { body.appendChild(h('h2', null, 'Git patch')); body.appendChild(pre(a.gitPatch, 'patch')); }
  body.appendChild(h('h2', null, 'Model requests'));
  body.appendChild(h('table', { 'data-testid': 'model-requests' }, [h('tr', null, ['#', 'time', 'request', 'wire', 'status', 'kind', 'turn']
    .map(function (t) { return h('th', null, t); }))].concat(a.modelRequests.map(function (r) {
    return h('tr', null, [String(r.seq), r.ts, r.method + ' ' + r.path, r.wire || '', String(r.status), r.kind,
      r.turn === null ? '' : String(r.turn)].map(function (t) { return h('td', null, t); }));
  }))));
  if (a.conformance) { body.appendChild(h('h2', null, 'Conformance')); body.appendChild(pre(JSON.stringify(a.conformance, null, 2), 'conformance')); }
}

function timelineItem(item) {
  var li = h('li', { class: 'k-' + item.kind, 'data-t': String(item.t), 'data-seq': String(item.seq), 'data-testid': 'item-' + item.kind });
  fillItem(li, item);
  return li;
}
function fillItem(li, item) {
  clear(li);
  add(li, [h('span', { class: 'badge' }, '+' + ms(item.t)), h('span', { class: 'badge' }, item.kind)]);
  if (item.code) add(li, h('span', { class: 'badge' }, item.code));
  if (item.level) add(li, h('span', { class: 'badge' }, item.level));
  if (item.tool) {
    var t = item.tool;
    add(li, [h('b', null, t.name), ' ', h('span', { class: 'muted' }, t.kind),
      t.status ? h('span', { class: stateClass(t.status === 'completed' ? 'completed' : t.status === 'failed' ? 'failed' : 'unknown') }, ' ' + t.status) : null,
      t.exitCode !== null ? h('span', { 'data-testid': 'exit-code' }, ' exit ' + t.exitCode) : null]);
    if (t.command !== null) li.appendChild(pre(t.command, 'command'));
    else if (t.input) li.appendChild(pre(t.input, 'input'));
    if (t.output) li.appendChild(pre(t.output, 'output'));
  } else if (item.text !== null) li.appendChild(pre(item.text, 'text'));
}

function play(list, speed) {
  stopPlayback();
  var items = Array.prototype.slice.call(list.children);
  var shownCount = 0;
  list.setAttribute('data-playback', 'playing');
  items.forEach(function (li) { li.classList.add('hidden'); });
  items.forEach(function (li) {
    playTimers.push(setTimeout(function () {
      li.classList.remove('hidden');
      if (++shownCount === items.length) list.setAttribute('data-playback', 'done');
    }, Number(li.getAttribute('data-t')) / (speed || 1)));
  });
}
function stopPlayback(list) {
  playTimers.forEach(clearTimeout);
  playTimers = [];
  if (list) Array.prototype.forEach.call(list.children, function (li) { li.classList.remove('hidden'); });
}

function startTail(run, a, list) {
  stopTail();
  var source = new EventSource(api('/runs/' + run.handle + '/attempts/' + a.attempt + '/tail'));
  tail = source;
  var bySeq = {};
  Array.prototype.forEach.call(list.children, function (li) { bySeq[li.getAttribute('data-seq')] = li; });
  source.addEventListener('item', function (e) {
    var item = JSON.parse(e.data);
    var li = bySeq[String(item.seq)];
    if (li) fillItem(li, item);
    else { li = timelineItem(item); bySeq[String(item.seq)] = li; list.appendChild(li); }
  });
  source.addEventListener('end', function () {
    stopTail();
    fetch(api('/runs/' + run.handle)).then(function (res) { return res.json(); }).then(function (body) {
      var i = DATA.runs.indexOf(run);
      if (i >= 0) DATA.runs[i] = body.run;
      if (state.run === run.handle) render();
    });
  });
}
function stopTail() { if (tail) { tail.close(); tail = null; } }

function cellFor(row, engine) { return row.engines[engine] || null; }
function runOfTest(testId) { return DATA.runs.filter(function (r) { return r.testId === testId; })[0] || null; }

function renderMatrix(main) {
  var rows = DATA.report.matrix;
  var engines = uniq([].concat.apply([], rows.map(function (r) { return Object.keys(r.engines); })));
  var only = h('input', { type: 'checkbox', checked: state.differentOnly, 'data-testid': 'different-only',
    onchange: function () { state.differentOnly = only.checked; render(); } });
  main.appendChild(h('div', { class: 'filters' }, [h('label', null, [only, 'only cases where the engines disagree'])]));
  if (!rows.length) { main.appendChild(h('p', { class: 'muted' }, 'No case ran on two or more engines.')); return; }
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

window.addEventListener('keydown', function (e) { if (e.key === 'Escape' && state.run) { state.run = null; stopTail(); render(); } });
render();
})();
`;
