/**
 * The `workflow` fixture and `toHaveEmitted` matcher: run a fluent harness in a test, record or replay it after
 * Vitest's snapshot conventions, and attach its event log to the test like the attempts' audit files.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  formatEventLog,
  resolveRecordingPath,
  type HarnessEvent,
  type HarnessFactory,
  type FluentRunResult,
} from '../fluent/index.js';

export { formatEventLog } from '../fluent/index.js';

/** Options of `workflow.run`. */
export interface WorkflowRunOptions {
  /** Default: replay when the recording exists and Vitest is not updating snapshots (-u), live otherwise. */
  mode?: 'live' | 'replay';
  /** Recording name inside `__recordings__/<test file>/`; default: the test's full name. */
  name?: string;
}

/** The `workflow` fixture. */
export interface WorkflowFixture {
  /** Runs `factory.create(input)`, returning its result; the event log is attached to the test. */
  run<TState, TInput, TResult>(
    factory: HarnessFactory<TState, TInput, TResult>,
    input: TInput,
    options?: WorkflowRunOptions,
  ): Promise<FluentRunResult<TState, TResult>>;
}

interface WorkflowContext {
  task: { name: string; file?: { filepath?: string }; fullName?: string };
  annotate?: (message: string, type?: string, attachment?: { path?: string; contentType?: string }) => Promise<unknown>;
}

/** True under `vitest -u`; the snapshot state is the only place Vitest exposes it to a test. */
export function isUpdatingSnapshots(): boolean {
  const state = expect.getState().snapshotState as unknown as { _updateSnapshot?: string } | undefined;
  return state?._updateSnapshot === 'all';
}

/** Builds the fixture value for one test. */
export function createWorkflowFixture({ task, annotate }: WorkflowContext): WorkflowFixture {
  return {
    async run(factory, input, options = {}) {
      const testFile = task.file?.filepath ?? join(process.cwd(), 'workflow.test.ts');
      const recording = resolveRecordingPath(testFile, options.name ?? task.fullName ?? task.name);
      const mode = options.mode ?? (existsSync(recording) && !isUpdatingSnapshots() ? 'replay' : 'live');
      const events: HarnessEvent[] = [];
      try {
        return await factory
          .create(input, { mode, recording })
          .on('*', (e) => events.push(e))
          .run();
      } finally {
        // Attach even on failure: the log up to the failure is what explains it. Vitest copies an attachment's file
        // into its attachments directory before `annotate` settles, so the temporary copy goes right after.
        if (annotate) {
          const dir = await mkdtemp(join(tmpdir(), 'agent-harness-workflow-'));
          try {
            const file = join(dir, 'events.jsonl');
            await writeFile(file, formatEventLog(events));
            await annotate(`workflow ${factory.name} (${mode}) — events.jsonl`, 'agent-harness:workflow', {
              path: file,
              contentType: 'application/x-ndjson',
            }).catch(() => undefined);
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        }
      }
    },
  };
}

type EventSpec = string | Record<string, unknown>;

function matchesSpec(event: HarnessEvent, spec: EventSpec): boolean {
  if (typeof spec === 'string') return event.type === spec;
  return Object.entries(spec).every(([k, v]) => Object.is((event as unknown as Record<string, unknown>)[k], v));
}

/** Matchers for fluent results: `toHaveEmitted([...])` checks an in-order subsequence of event types/fields. */
export const workflowMatchers = {
  toHaveEmitted(received: FluentRunResult<unknown, unknown> | HarnessEvent[], expected: EventSpec[]) {
    const events = Array.isArray(received) ? received : received.events;
    let i = 0;
    for (const event of events) if (i < expected.length && matchesSpec(event, expected[i]!)) i += 1;
    const pass = i === expected.length;
    const seen = events.map((e) => `${e.type}(${e.name})`).join(', ');
    return {
      pass,
      message: () =>
        pass
          ? `expected events not to contain the sequence ${JSON.stringify(expected)}`
          : `expected events to contain the sequence ${JSON.stringify(expected)}; matched up to ${JSON.stringify(expected[i])}. Events: ${seen}`,
    };
  },
};

let installed = false;

/** Installs `toHaveEmitted` on Vitest's `expect` (idempotent). */
export function installWorkflowMatchers(): void {
  if (installed) return;
  installed = true;
  expect.extend(workflowMatchers);
}

/** Type of the workflow matchers on `expect(...)`. */
export interface WorkflowMatchers<R = unknown> {
  /** The harness result (or event array) contains these event types / partial events in this order. */
  toHaveEmitted(expected: Array<string | Record<string, unknown>>): R;
}

declare module 'vitest' {
  // biome-ignore lint/suspicious/noExplicitAny: the declaration merges with Vitest's own `Assertion<T = any>`
  interface Assertion<T = any> extends WorkflowMatchers<void> {}
}
