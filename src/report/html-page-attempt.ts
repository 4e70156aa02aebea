/**
 * The page script's attempt view (see html-page-script.ts): the test that made the run (its state and errors), the
 * attempt's summary, step timings, timeline and its playback at the recorded pace, files changed, git patch, model
 * requests, conformance, and the live tail over server-sent events in a page served by `agent-harness view`. Agent
 * content goes in as text only.
 */
export const PAGE_ATTEMPT = String.raw`
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
  var test = testOf(run);
  if (test) main.appendChild(testResult(test));
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

/** The test that made the run, first on its page: its state and its errors, the failing expectation first. */
function testResult(t) {
  var box = h('section', { class: 'test-result', 'data-testid': 'test-result' }, [
    h('p', null, ['test ', h('b', null, t.fullName), ' ', h('span', { class: stateClass(t.state), 'data-testid': 'test-result-state' }, t.state)])
  ]);
  t.errors.forEach(function (e) { box.appendChild(pre(e, 'test-error')); });
  return box;
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
    ['duration', ms(a.durationMs)], ['engine version', a.engineVersion ? a.engineVersion + (a.engineVersionChecked === false ? ' (unchecked)' : '') : null], ['started', a.startedAt],
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
`;
