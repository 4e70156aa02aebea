/**
 * The page script's attempt view: the test that made the run (its state and errors), the attempt's summary, step
 * timings, timeline and its playback at the recorded pace, files changed, git patch, model requests, conformance,
 * and the live tail over server-sent events in a page served by `agent-harness view`. Agent content goes in as text
 * only.
 */
import { api, DATA, runByHandle, state, testOf } from './data.js';
import { add, type Child, clear, h, ms, pre, stateClass } from './dom.js';
import type { PageAttempt, PageRun, PageTest, PageTimelineItem } from './page-data.js';
import { render, renderRuns } from './runs.js';

let playTimers: ReturnType<typeof setTimeout>[] = [];
let tail: EventSource | null = null;

/** Calls back with attempt n of a run; in a served page, fetched first when the listing left its timeline out. */
function withAttempt(run: PageRun, n: number | null, done: (a: PageAttempt | null) => void): void {
  const a = run.attempts.filter((x) => x.attempt === n)[0];
  if (!a) {
    done(null);
    return;
  }
  if (a.timeline || !DATA.live) {
    done(a);
    return;
  }
  fetch(api(`/runs/${run.handle}/attempts/${n}`))
    .then((res) => res.json())
    .then((body: { attempt: PageAttempt }) => {
      const i = run.attempts.indexOf(a);
      run.attempts[i] = body.attempt;
      done(body.attempt);
    })
    .catch(() => {
      done(a);
    });
}

/** The open run's page: back, the run, its test's result, its attempts, the attempt picked. */
export function renderAttempt(main: HTMLElement): void {
  const run = runByHandle(state.run);
  if (!run) {
    state.run = null;
    renderRuns(main);
    return;
  }
  const back = () => {
    state.run = null;
    stopTail();
    render();
  };
  main.appendChild(
    h('p', null, [
      h('button', { class: 'btn', 'data-testid': 'back', onclick: back }, '\u2190 runs'),
      ' ',
      h('b', null, `${run.engine} \u00B7 ${run.case}`),
      ' ',
      h('code', null, run.handle),
      run.href ? h('span', null, [' ', h('a', { href: run.href }, 'run directory')]) : null,
    ]),
  );
  const test = testOf(run);
  if (test) main.appendChild(testResult(test));
  main.appendChild(
    h(
      'div',
      { class: 'filters' },
      run.attempts.map((a) =>
        h(
          'button',
          {
            class: `btn${a.attempt === state.attempt ? ' on' : ''}`,
            'data-testid': `attempt-${a.attempt}`,
            onclick: () => {
              state.attempt = a.attempt;
              stopTail();
              render();
            },
          },
          `attempt ${a.attempt}`,
        ),
      ),
    ),
  );
  const body = h('div', { 'data-testid': 'attempt' });
  main.appendChild(body);
  withAttempt(run, state.attempt, (a) => {
    if (!a) {
      add(body, 'no attempt');
      return;
    }
    renderAttemptBody(body, run, a);
  });
}

/** The test that made the run, first on its page: its state and its errors, the failing expectation first. */
function testResult(t: PageTest): HTMLElement {
  const box = h('section', { class: 'test-result', 'data-testid': 'test-result' }, [
    h('p', null, [
      'test ',
      h('b', null, t.fullName),
      ' ',
      h('span', { class: stateClass(t.state), 'data-testid': 'test-result-state' }, t.state),
    ]),
  ]);
  for (const e of t.errors) box.appendChild(pre(e, 'test-error'));
  return box;
}

/** A two-column table of the rows that have a value. */
function kv(rows: [string, Child][]): HTMLElement {
  return h(
    'table',
    null,
    rows
      .filter((r) => r[1] !== null && r[1] !== undefined && r[1] !== '')
      .map((r) => h('tr', null, [h('th', null, r[0]), h('td', null, r[1])])),
  );
}

/** The attempt's sections, top to bottom. */
function renderAttemptBody(body: HTMLElement, run: PageRun, a: PageAttempt): void {
  renderSummary(body, a);
  renderTimeline(body, run, a);
  body.appendChild(h('h2', null, 'Files changed'));
  if (a.files) {
    const files = a.files;
    const rows: HTMLElement[] = [];
    for (const k of ['created', 'modified', 'deleted'] as const)
      for (const p of files[k]) rows.push(h('tr', null, [h('td', null, k), h('td', null, p)]));
    body.appendChild(rows.length ? h('table', { 'data-testid': 'files' }, rows) : h('p', { class: 'muted' }, 'none'));
  } else body.appendChild(h('p', { class: 'muted' }, 'no fs diff recorded'));
  if (a.gitPatch) {
    body.appendChild(h('h2', null, 'Git patch'));
    body.appendChild(pre(a.gitPatch, 'patch'));
  }
  body.appendChild(h('h2', null, 'Model requests'));
  const head = h(
    'tr',
    null,
    ['#', 'time', 'request', 'wire', 'status', 'kind', 'turn'].map((t) => h('th', null, t)),
  );
  const requests = a.modelRequests.map((r) =>
    h(
      'tr',
      null,
      [
        String(r.seq),
        r.ts,
        `${r.method} ${r.path}`,
        r.wire || '',
        String(r.status),
        r.kind,
        r.turn === null ? '' : String(r.turn),
      ].map((t) => h('td', null, t)),
    ),
  );
  body.appendChild(h('table', { 'data-testid': 'model-requests' }, [head].concat(requests)));
  if (a.conformance) {
    body.appendChild(h('h2', null, 'Conformance'));
    body.appendChild(pre(JSON.stringify(a.conformance, null, 2), 'conformance'));
  }
}

/** The attempt's summary table and its step timings. */
function renderSummary(body: HTMLElement, a: PageAttempt): void {
  const c = a.completion;
  const version = a.engineVersion ? a.engineVersion + (a.engineVersionChecked === false ? ' (unchecked)' : '') : null;
  body.appendChild(
    kv([
      ['status', a.status],
      ['launch', a.launch],
      [
        'completion',
        c
          ? h('span', { class: stateClass(c.state), 'data-testid': 'completion' }, `${c.state} (${c.code || c.reason})`)
          : null,
      ],
      ['exit', a.exit ? (a.exit.code !== null ? `code ${a.exit.code}` : `signal ${a.exit.signal}`) : null],
      ['duration', ms(a.durationMs)],
      ['engine version', version],
      ['started', a.startedAt],
      ['tool calls', String(a.toolCalls)],
      ['diagnostics', a.diagnostics.join(', ')],
    ]),
  );
  const steps = Object.keys(a.steps);
  if (steps.length) {
    body.appendChild(h('h2', null, 'Step timings'));
    body.appendChild(
      h(
        'table',
        { 'data-testid': 'steps' },
        steps.map((k) => h('tr', null, [h('th', null, k), h('td', null, ms(a.steps[k]))])),
      ),
    );
  }
}

/** The timeline, its playback controls, and in a served page the live tail of a running attempt. */
function renderTimeline(body: HTMLElement, run: PageRun, a: PageAttempt): void {
  body.appendChild(h('h2', null, 'Timeline'));
  const list = h('ol', { class: 'timeline', 'data-testid': 'timeline' });
  const speed = h(
    'select',
    { 'data-testid': 'speed' },
    ['1', '4', '16'].map((s) => h('option', { value: s }, `${s}\u00D7`)),
  );
  body.appendChild(
    h('div', { class: 'filters' }, [
      h(
        'button',
        { class: 'btn', 'data-testid': 'play', onclick: () => play(list, Number(speed.value)) },
        '\u25B6 play at recorded pace',
      ),
      speed,
      h('button', { class: 'btn', 'data-testid': 'stop', onclick: () => stopPlayback(list) }, '\u25A0 show all'),
    ]),
  );
  if (a.omitted) body.appendChild(h('p', { class: 'muted', 'data-testid': 'omitted' }, a.omitted));
  for (const item of a.timeline || []) list.appendChild(timelineItem(item));
  body.appendChild(list);
  if (run.running && a.status === 'running' && DATA.live) startTail(run, a, list);
}

/** One item of the timeline. */
function timelineItem(item: PageTimelineItem): HTMLElement {
  const li = h('li', {
    class: `k-${item.kind}`,
    'data-t': String(item.t),
    'data-seq': String(item.seq),
    'data-testid': `item-${item.kind}`,
  });
  fillItem(li, item);
  return li;
}

/** Fills (or fills again, when the tail updates it) a timeline item's element. */
function fillItem(li: HTMLElement, item: PageTimelineItem): void {
  clear(li);
  add(li, [h('span', { class: 'badge' }, `+${ms(item.t)}`), h('span', { class: 'badge' }, item.kind)]);
  if (item.code) add(li, h('span', { class: 'badge' }, item.code));
  if (item.level) add(li, h('span', { class: 'badge' }, item.level));
  if (item.tool) {
    const t = item.tool;
    const toolState = t.status === 'completed' ? 'completed' : t.status === 'failed' ? 'failed' : 'unknown';
    add(li, [
      h('b', null, t.name),
      ' ',
      h('span', { class: 'muted' }, t.kind),
      t.status ? h('span', { class: stateClass(toolState) }, ` ${t.status}`) : null,
      t.exitCode !== null ? h('span', { 'data-testid': 'exit-code' }, ` exit ${t.exitCode}`) : null,
    ]);
    if (t.command !== null) li.appendChild(pre(t.command, 'command'));
    else if (t.input) li.appendChild(pre(t.input, 'input'));
    if (t.output) li.appendChild(pre(t.output, 'output'));
  } else if (item.text !== null) li.appendChild(pre(item.text, 'text'));
}

/** Shows the timeline's items again at their recorded times, `speed` times faster. */
function play(list: HTMLElement, speed: number): void {
  stopPlayback();
  const items = Array.from(list.children);
  let shownCount = 0;
  list.setAttribute('data-playback', 'playing');
  for (const li of items) li.classList.add('hidden');
  for (const li of items)
    playTimers.push(
      setTimeout(
        () => {
          li.classList.remove('hidden');
          if (++shownCount === items.length) list.setAttribute('data-playback', 'done');
        },
        Number(li.getAttribute('data-t')) / (speed || 1),
      ),
    );
}

/** Stops a playback; with the list, shows all its items. */
export function stopPlayback(list?: HTMLElement): void {
  playTimers.forEach(clearTimeout);
  playTimers = [];
  if (list) for (const li of Array.from(list.children)) li.classList.remove('hidden');
}

/** Served by agent-harness view: the running attempt's new and updated items, then its run once it has ended. */
function startTail(run: PageRun, a: PageAttempt, list: HTMLElement): void {
  stopTail();
  const source = new EventSource(api(`/runs/${run.handle}/attempts/${a.attempt}/tail`));
  tail = source;
  const bySeq: Record<string, HTMLElement> = {};
  for (const li of Array.from(list.children) as HTMLElement[]) bySeq[String(li.getAttribute('data-seq'))] = li;
  source.addEventListener('item', (e) => {
    const item: PageTimelineItem = JSON.parse((e as MessageEvent<string>).data);
    let li = bySeq[String(item.seq)];
    if (li) fillItem(li, item);
    else {
      li = timelineItem(item);
      bySeq[String(item.seq)] = li;
      list.appendChild(li);
    }
  });
  source.addEventListener('end', () => {
    stopTail();
    fetch(api(`/runs/${run.handle}`))
      .then((res) => res.json())
      .then((body: { run: PageRun }) => {
        const i = DATA.runs.indexOf(run);
        if (i >= 0) DATA.runs[i] = body.run;
        if (state.run === run.handle) render();
      });
  });
}

/** Closes the live tail, if one is open. */
export function stopTail(): void {
  if (tail) {
    tail.close();
    tail = null;
  }
}
