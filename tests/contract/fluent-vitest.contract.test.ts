import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect } from 'vitest';
import { createWorkflowFixture, test } from '../../src/public/vitest.js';
import { defineHarness, resolveRecordingPath } from '../../src/public/fluent.js';

const recording = resolveRecordingPath(fileURLToPath(import.meta.url), 'fixture-roundtrip');
afterAll(() =>
  rm(resolveRecordingPath(fileURLToPath(import.meta.url), 'x').replace(/x\.json$/, ''), {
    recursive: true,
    force: true,
  }),
);

let calls = 0;
class Counter {
  async execute(n: number) {
    return this.next(n);
  }
  async next(n: number) {
    calls += 1;
    return n + 1;
  }
}
const counting = defineHarness({
  name: 'counting',
  agents: { counter: Counter },
  run: async ({ task, agents }, n: number) => task('count', () => agents.counter.next(n)),
});

describe('workflow fixture and toHaveEmitted', () => {
  test('records live next to the test, then replays by default without calling the agent', async ({ workflow }) => {
    await rm(recording, { force: true });
    const live = await workflow.run(counting, 1, { name: 'fixture-roundtrip', mode: 'live' });
    expect(existsSync(recording)).toBe(true);
    expect(calls).toBe(1);
    const replayed = await workflow.run(counting, 1, { name: 'fixture-roundtrip' });
    expect(calls).toBe(1);
    expect(replayed.result).toBe(live.result);
    expect(replayed).toHaveEmitted([
      'task:start',
      { type: 'agent:complete', name: 'counter.next', replayed: true },
      { type: 'task:complete', result: 2 },
    ]);
    expect(JSON.parse(await readFile(recording, 'utf8'))).toMatchObject({ version: 1, harness: 'counting' });
  });

  test('toHaveEmitted fails on a missing or out-of-order event, naming where it stopped', async ({ workflow }) => {
    const out = await workflow.run(counting, 5, { name: 'fixture-order', mode: 'live' });
    expect(out).not.toHaveEmitted(['task:complete', 'task:start']);
    expect(() => expect(out.events).toHaveEmitted(['task:start', 'phase:start'])).toThrow(
      /matched up to "phase:start"/,
    );
  });

  test('attaches the event log, then leaves no temporary file behind', async ({ task }) => {
    const attached: { path: string; text: string }[] = [];
    const fixture = createWorkflowFixture({
      task,
      // Vitest copies an attachment's file before `annotate` settles; the copy is what a report shows.
      annotate: async (_message, _type, attachment) => {
        attached.push({ path: attachment!.path!, text: readFileSync(attachment!.path!, 'utf8') });
      },
    });
    await fixture.run(counting, 7, { name: 'fixture-attach', mode: 'live' });
    expect(attached).toHaveLength(1);
    expect(attached[0]!.text).toContain('task:complete');
    expect(existsSync(attached[0]!.path)).toBe(false);
  });
});
