/**
 * The HTML report's script, plain DOM and no framework, kept as a string: it is inlined into the page, and the
 * page's CSP allows exactly this script by its hash. Every piece of agent content goes into the page as text
 * (`textContent`, text nodes), never as markup; bidi and other invisible control characters are shown as `⟦U+202E⟧`
 * so a line cannot pretend to say what it does not. It reads the data block, and in a page served by
 * `agent-harness view` fetches attempts from the API and tails running ones over server-sent events.
 */
import { PAGE_ATTEMPT } from './html-page-attempt.js';
import { PAGE_COMPARE } from './html-page-compare.js';

/** The core of the page script: data, DOM helpers that insert text only, the tabs, the run list and its filters. */
const PAGE_CORE = String.raw`'use strict';
var DATA = JSON.parse(document.getElementById('agent-harness-data').textContent);
var app = document.getElementById('app');
var state = { tab: 'runs', run: null, attempt: null, filters: { engine: '', completion: '', test: '', diag: '', code: '', outcome: '' },
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
/**
 * The Vitest test that made a run (its state and errors), or null for a run no test made: a CLI run's record in the
 * report ('report --html', 'view') has the run id for its id and a state read from the completion, not a test's.
 */
function testOf(run) {
  if (!run.testId || run.testId === run.runId) return null;
  return DATA.report.tests.filter(function (t) { return t.id === run.testId; })[0] || null;
}
function testStateOf(run) { var t = testOf(run); return t ? t.state : ''; }
/** The first line of the test's first error: its failing expectation (the reporter puts assertions first). */
function assertionOf(run) { var t = testOf(run); return t && t.errors.length ? String(t.errors[0]).split('\n')[0] : ''; }
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
    if (f.outcome && testStateOf(r) !== f.outcome) return false;
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
    select('test state', f.outcome, uniq(DATA.runs.map(testStateOf)), set('outcome')),
    select('diagnostics', f.diag, ['with', 'without'], set('diag')),
    select('error code', f.code, uniq(DATA.runs.map(codeOf)), set('code')),
    h('label', null, ['test', search]),
    DATA.live ? h('button', { class: 'btn', 'data-testid': 'refresh', onclick: refreshRuns }, '\u21BB refresh') : null
  ]));
  var rows = filteredRuns();
  // The test's state beside the agent's completion: an agent can complete and its test still fail.
  var table = h('table', { 'data-testid': 'runs' }, [h('tr', null, ['handle', 'engine', 'case', 'test', 'completion', 'code',
    'tool calls', 'diagnostics', 'attempts', 'duration'].map(function (c) { return h('th', null, c); }))]);
  rows.forEach(function (r) {
    var a = lastAttempt(r);
    var dur = 0; r.attempts.forEach(function (x) { dur += x.durationMs || 0; });
    var open = function () { state.run = r.handle; state.attempt = a ? a.attempt : null; render(); };
    var row = h('tr', { class: 'click', tabindex: '0', 'data-testid': 'run-' + r.handle, onclick: open });
    row.addEventListener('keydown', function (e) { if (e.key === 'Enter') open(); });
    table.appendChild(add(row, [
      h('td', null, h('code', null, r.handle)), h('td', null, r.engine), h('td', null, r.case),
      testCell(r),
      h('td', { class: stateClass(completionOf(r)) }, completionOf(r)), h('td', null, codeOf(r)),
      h('td', null, String(toolCount(r))), h('td', null, String(diagCount(r))), h('td', null, String(r.attempts.length)),
      h('td', null, ms(dur))
    ]));
  });
  main.appendChild(h('p', { class: 'muted' }, rows.length + ' of ' + DATA.runs.length + ' runs'));
  main.appendChild(table);
}

/** The run list's test cell: the test's state and, for a failed one, its failing expectation's first line. */
function testCell(r) {
  var t = testOf(r);
  if (!t) return h('td', { class: 'muted', 'data-testid': 'test-state' }, '\u2013');
  var assertion = assertionOf(r);
  return h('td', { 'data-testid': 'test-state' }, [h('span', { class: stateClass(t.state) }, t.state),
    assertion ? h('div', { class: 'assertion', 'data-testid': 'test-assertion', title: t.errors[0] }, assertion) : null]);
}

/** Served by agent-harness view: the run list again from the API (new runs, attempts that have ended). */
function refreshRuns() {
  fetch(api('/runs')).then(function (res) { return res.json(); }).then(function (body) {
    DATA.runs = body.runs;
    render();
  });
}
`;

const PAGE_START = `window.addEventListener('keydown', function (e) { if (e.key === 'Escape' && state.run) { state.run = null; stopTail(); render(); } });
// A link to a run's page (the Trials section's failed trials): #run=<handle> opens it.
function openHashRun() {
  var m = /^#run=(.+)$/.exec(location.hash);
  if (!m) return;
  var run = runByHandle(decodeURIComponent(m[1]));
  var last = run ? lastAttempt(run) : null;
  state.tab = 'runs'; state.run = run ? run.handle : null; state.attempt = last ? last.attempt : null;
  stopTail(); render(); app.scrollIntoView();
}
window.addEventListener('hashchange', openHashRun);
render();
openHashRun();
`;

/** The whole script, one function scope (its parts' functions see each other). */
export const PAGE_SCRIPT = `(function () {\n${PAGE_CORE}${PAGE_ATTEMPT}${PAGE_COMPARE}${PAGE_START}})();\n`;
