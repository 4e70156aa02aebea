/**
 * An attempt's events are spooled: written to rasp/fcmp.N.jsonl as they are built and kept in memory only up to a
 * budget, so a long attempt's memory is flat. Past the budget the result is read back from the files, checked to be
 * what was written (the run directory is the engine's). Sealing an orphan writes its events the same way. Tested on
 * the spool itself (fast-check), then on whole attempts of a fake engine, in and out of memory.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditWriteFailures } from '../../src/core/audit-files.js';
import {
  DEFAULT_EVENT_MEMORY_BYTES,
  EventSpool,
  jsonlRecords,
  readJsonlFile,
  resolveEventMemoryBytes,
} from '../../src/core/event-spool.js';
import { runAttempt } from '../../src/core/run-attempt.js';
import type { AttemptResult } from '../../src/core/attempt-result.js';
import { printFinished } from '../../src/cli/output.js';
import { loadEngine } from '../../src/engines/registry.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import type { AttemptMeta, FcmpEvent } from '../../src/protocol/index.js';
import { resolveHarnessPaths } from '../../src/runtime/paths.js';
import { translateRecorded } from '../../src/translate/recorded.js';
import { renderTranslateView } from '../../src/translate/views.js';
import { deadOwner } from '../helpers/processes.js';
import { createCliSandbox, installFakeEngine, runCliProcess, type CliSandbox } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-spool-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
let files = 0;
const fresh = (): string => path.join(tmp, `spool-${(files += 1)}.jsonl`);

/** JSON values with strings that hold newlines, quotes and characters outside the BMP. */
const jsonValue = fc.record({
  n: fc.integer(),
  s: fc.string({ unit: 'grapheme', maxLength: 40 }),
  big: fc.string({ maxLength: 3000 }),
  nested: fc.array(fc.oneof(fc.boolean(), fc.constant(null), fc.string({ maxLength: 5 })), { maxLength: 4 }),
});

describe('EventSpool', () => {
  it("the seal's tamper check leaves the spool writable: FCMP's last events go after it, and a later change is caught", () => {
    const file = fresh();
    const failures = new AuditWriteFailures();
    const spool = new EventSpool<{ n: number }>(file, failures, 0);
    spool.push({ n: 1 });
    spool.check();
    spool.push({ n: 2 });
    expect(failures.list).toEqual([]);
    spool.check();
    expect([...spool.events()]).toEqual([{ n: 1 }, { n: 2 }]);
    fs.writeFileSync(file, '{"n":9}\n{"n":2}\n');
    expect(() => spool.check()).toThrow(/not what the harness wrote/);
    spool.close();
  });

  it('gives back every event in order, in memory under the budget and read back from the file past it', () => {
    fc.assert(
      fc.property(fc.array(jsonValue, { maxLength: 60 }), fc.integer({ min: 0, max: 40_000 }), (events, budget) => {
        const file = fresh();
        const spool = new EventSpool<unknown>(file, new AuditWriteFailures(), budget);
        for (const event of events) spool.push(event);
        const bytes = events.reduce<number>((sum, event) => sum + JSON.stringify(event).length + 1, 0);
        expect(spool.inMemory).toBe(bytes <= budget);
        expect([...spool.events()]).toEqual(events);
        spool.close();
        // After close the file is read by its path.
        expect(spool.all()).toEqual(events);
        expect(fs.readFileSync(file, 'utf8')).toBe(events.map((event) => `${JSON.stringify(event)}\n`).join(''));
        fs.rmSync(file);
      }),
      { numRuns: 150 },
    );
  });

  it('JSONL split anywhere, in reused buffers, parses to the same records', () => {
    fc.assert(
      fc.property(fc.array(jsonValue, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 20 }), (values, cuts) => {
        const bytes = Buffer.from(values.map((value) => `${JSON.stringify(value)}\n`).join(''), 'utf8');
        const points = [...new Set(cuts.map((cut) => (bytes.length === 0 ? 0 : cut % bytes.length)))].sort(
          (a, b) => a - b,
        );
        // Each chunk is handed out in one shared buffer, overwritten before the next: as the file readers do.
        const shared = Buffer.alloc(bytes.length + 1);
        function* chunks(): Generator<Buffer> {
          let from = 0;
          for (const to of [...points, bytes.length]) {
            if (to <= from) continue;
            shared.fill(0x7b);
            bytes.copy(shared, 0, from, to);
            yield shared.subarray(0, to - from);
            from = to;
          }
        }
        expect([...jsonlRecords(chunks())]).toEqual(values);
      }),
      { numRuns: 300 },
    );
  });

  it('a file changed behind it is AUDIT_TAMPERED before any event is given: a byte changed, cut short, replaced', () => {
    const events = Array.from({ length: 50 }, (_, i) => ({ seq: i + 1, text: `line ${i} `.repeat(20) }));
    const changes: Array<(file: string) => void> = [
      (file) => {
        const fd = fs.openSync(file, 'r+');
        fs.writeSync(fd, '7', 20);
        fs.closeSync(fd);
      },
      (file) => fs.truncateSync(file, 1000),
      // A new file in its place: the spool reads through its own descriptor, so it still sees its own bytes …
      (file) => {
        fs.rmSync(file);
        fs.writeFileSync(file, events.map((e) => `${JSON.stringify({ ...e, forged: true })}\n`).join(''));
      },
    ];
    for (const [index, change] of changes.entries()) {
      const file = fresh();
      const spool = new EventSpool<unknown>(file, new AuditWriteFailures(), 100);
      for (const event of events) spool.push(event);
      change(file);
      if (index === 2) {
        expect([...spool.events()]).toEqual(events);
        // … and once closed it reads the path, where the forged file is refused.
        spool.close();
      }
      const given: unknown[] = [];
      let error: unknown = null;
      try {
        for (const event of spool.events()) given.push(event);
      } catch (caught) {
        error = caught;
      }
      expect(isAgentHarnessError(error) && error.code, `change ${index}`).toBe('AUDIT_TAMPERED');
      expect(given).toEqual([]);
      spool.close();
    }
  });

  it('events it could not write are kept in memory, whatever the budget, and the failure is recorded', () => {
    const failures = new AuditWriteFailures();
    // A device is refused at the open (a write failing later: own-files.contract.test.ts).
    const spool = new EventSpool<unknown>('/dev/full', failures, 0);
    const events = [{ a: 1 }, { b: 'two' }];
    for (const event of events) spool.push(event);
    expect(failures.list).toEqual([
      expect.objectContaining({ file: '/dev/full', message: expect.stringMatching(/not a regular file/) }),
    ]);
    expect(spool.inMemory).toBe(true);
    expect([...spool.events()]).toEqual(events);
    spool.close();
  });

  it('readJsonlFile streams a JSONL file and refuses a FIFO', () => {
    const file = fresh();
    const rows = Array.from({ length: 3000 }, (_, i) => ({ i, pad: 'x'.repeat(i % 700) }));
    fs.writeFileSync(file, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
    expect([...readJsonlFile(file)]).toEqual(rows);
    const fifo = path.join(tmp, 'fifo.jsonl');
    fs.rmSync(fifo, { force: true });
    expect(mkfifo(fifo)).toBe(0);
    expect(() => [...readJsonlFile(fifo)]).toThrow(/not a regular file/);
  });
});

function mkfifo(file: string): number | null {
  return spawnSync('mkfifo', [file]).status;
}

/** A codex `exec --json` stream with `items` shell calls (outputs of a few KB), noise, and a done marker. */
function longCodexStream(items: number): string {
  const lines: string[] = [
    JSON.stringify({ type: 'thread.started', thread_id: '01a2053b-9f5a-7bc0-b066-eb965712ebee' }),
    JSON.stringify({ type: 'turn.started' }),
  ];
  for (let i = 0; i < items; i += 1) {
    const command = `/bin/bash -lc 'seq ${i}'`;
    lines.push(
      JSON.stringify({
        type: 'item.started',
        item: {
          id: `item_${i}`,
          type: 'command_execution',
          command,
          aggregated_output: '',
          exit_code: null,
          status: 'in_progress',
        },
      }),
    );
    lines.push(
      JSON.stringify({
        type: 'item.completed',
        item: {
          id: `item_${i}`,
          type: 'command_execution',
          command,
          aggregated_output: `${i} `.repeat(400 + (i % 7) * 100),
          exit_code: i % 5 === 0 ? 1 : 0,
          status: i % 5 === 0 ? 'failed' : 'completed',
        },
      }),
    );
    if (i % 25 === 0) lines.push(`noise line ${i}: not JSON`);
    if (i % 10 === 0)
      lines.push(
        JSON.stringify({
          type: 'item.completed',
          item: { id: `msg_${i}`, type: 'agent_message', text: `Step ${i} done — ✓` },
        }),
      );
  }
  lines.push(
    JSON.stringify({
      type: 'item.completed',
      item: { id: 'msg_last', type: 'agent_message', text: 'All done.\n__SKILL_DONE__' },
    }),
  );
  lines.push(
    JSON.stringify({
      type: 'turn.completed',
      usage: { input_tokens: 20, cached_input_tokens: 0, output_tokens: 10, reasoning_output_tokens: 0 },
    }),
  );
  return `${lines.join('\n')}\n`;
}

/** What two attempts of the same output share: their events without run id, run dir, model port, timestamps and durations. */
function comparable(result: AttemptResult): unknown {
  const text = JSON.stringify({
    rasp: result.rasp,
    fcmp: result.fcmp,
    toolCalls: result.toolCalls,
    conformance: { ...result.conformance, run_id: null, metrics: null },
    assistantMessages: result.assistantMessages,
    finalMessage: result.finalMessage,
    completion: result.completion,
    sessionId: result.sessionId,
    usage: result.usage,
  });
  return JSON.parse(
    text
      .replaceAll(result.runId, 'RUN')
      .replaceAll(result.runDir, 'DIR')
      .replace(/127\.0\.0\.1:\d+/g, 'MODEL'),
    (key, value: unknown) => (key === 'ts' || key === 'duration_ms' || key === 'pid' ? null : value),
  );
}

describe('a long attempt keeps its events on disk, not in memory', () => {
  let sandbox: CliSandbox;
  const attempt = (eventMemoryBytes?: number, isolation?: 'off'): Promise<AttemptResult> =>
    runAttempt({
      paths: resolveHarnessPaths({ env: sandbox.env, cwd: sandbox.root }),
      engine: 'codex',
      launch: 'start',
      prompt: 'hi',
      hostEnv: sandbox.env,
      ...(eventMemoryBytes === undefined ? {} : { eventMemoryBytes }),
      ...(isolation ? { isolation } : {}),
    });

  it('gives the same result past the budget as within it, read back from the audit files', async () => {
    sandbox = createCliSandbox();
    try {
      const stream = path.join(sandbox.root, 'long.stdout.jsonl');
      fs.writeFileSync(stream, longCodexStream(300));
      installFakeEngine(sandbox, 'codex', { stdoutFile: stream });
      const kept = await attempt();
      const spooled = await attempt(64 * 1024);
      expect(kept.eventsInMemory).toBe(true);
      expect(spooled.eventsInMemory).toBe(false);
      expect(kept.error).toBeNull();
      expect(spooled.error).toBeNull();
      expect(spooled.completion).toMatchObject({ state: 'completed' });
      expect(spooled.toolCalls).toHaveLength(300);
      expect(spooled.assistantMessages.at(-1)).toBe('All done.\n__SKILL_DONE__');
      expect(comparable(spooled)).toEqual(comparable(kept));
      // The files hold exactly the result's events, and the conformance report on disk is the result's.
      for (const result of [kept, spooled]) {
        expect([...readJsonlFile(result.audit.rasp)]).toEqual(result.rasp);
        expect([...readJsonlFile(result.audit.fcmp)]).toEqual(result.fcmp);
        expect(JSON.parse(fs.readFileSync(result.audit.conformance, 'utf8'))).toEqual(result.conformance);
      }
      expect(spooled.conformance.tool_call_count).toBe(300);

      // The command's views 2 and 3 of a spooled attempt are streamed from fcmp.N.jsonl, and read as the renderers give them.
      for (const mode of [2, 3] as const) {
        const stdout = new PassThrough();
        const chunks: Buffer[] = [];
        stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
        await printFinished({ stdout, stderr: new PassThrough() }, spooled, mode, 'Start', true);
        expect(Buffer.concat(chunks).toString('utf8')).toBe(
          renderTranslateView(mode, { rasp: spooled.rasp, fcmp: spooled.fcmp as FcmpEvent[] }),
        );
      }
    } finally {
      sandbox.cleanup();
    }
  });

  it('an engine that rewrites rasp.N.jsonl while it runs is caught by the seal: AUDIT_TAMPERED, in memory or spooled', async () => {
    sandbox = createCliSandbox();
    try {
      // Prints a failing turn, then overwrites its RASP file with a forged, completed one.
      const failing = [
        { type: 'thread.started', thread_id: '01a2053b-9f5a-7bc0-b066-eb965712ebee' },
        { type: 'turn.started' },
        ...Array.from({ length: 60 }, (_, i) => ({
          type: 'item.completed',
          item: { id: `m${i}`, type: 'agent_message', text: `working ${i} `.repeat(30) },
        })),
        { type: 'turn.failed', error: { message: 'the model gave up' } },
      ]
        .map((line) => JSON.stringify(line))
        .join('\n');
      const script = `#!/usr/bin/env node
const fs = require('node:fs');
process.stdout.write(${JSON.stringify(`${failing}\n`)}, () => {
  // Once the harness has recorded the failed turn (however loaded the machine), it is rewritten as a completed one.
  const file = '.audit/rasp.' + fs.readdirSync('.audit').filter((n) => /^rasp\\.\\d+\\.jsonl$/.test(n)).map((n) => Number(n.split('.')[1])).sort((a, b) => b - a)[0] + '.jsonl';
  const deadline = Date.now() + ${scaled(60_000)};
  const poll = setInterval(() => {
    const text = fs.readFileSync(file, 'utf8');
    if (!text.includes('"engine.turn.end"') && Date.now() < deadline) return;
    clearInterval(poll);
    const lines = text.split('\\n').filter(Boolean).map((l) => JSON.parse(l));
    const forged = lines.map((e) => (e.data.type === 'engine.turn.end' ? { ...e, data: { ...e.data, status: 'completed', error: null } } : e));
    fs.writeFileSync(file, forged.map((e) => JSON.stringify(e) + '\\n').join(''));
  }, 20);
});
`;
      fs.writeFileSync(path.join(sandbox.prefix, 'bin', 'codex'), script, { mode: 0o755 });
      // The defense is for an agent that can write .audit/: without filesystem containment (`off`, or a fallback).
      // FCMP was built live, so the forgery never reaches the verdict; the seal's read-back says the file was changed.
      const kept = await attempt(undefined, 'off');
      expect(kept.eventsInMemory).toBe(true);
      expect(kept.completion).toMatchObject({ state: 'failed', reason: 'AUDIT_TAMPERED' });
      expect(kept.error?.code).toBe('AUDIT_TAMPERED');
      expect(kept.fcmp.filter((e) => e.type === 'assistant.message.final')).toHaveLength(60);
      const spooled = await attempt(4 * 1024, 'off');
      expect(spooled.completion).toMatchObject({ state: 'failed', reason: 'AUDIT_TAMPERED' });
      expect(spooled.error?.code).toBe('AUDIT_TAMPERED');
      expect(spooled.fcmp.at(-1)).toMatchObject({ type: 'conversation.failed', data: { code: 'AUDIT_TAMPERED' } });
      // The forged file is not accepted later either.
      const again = await attempt(4 * 1024, 'off');
      expect(() => again.rasp).toThrow(/not what the harness wrote/);
      // Contained (where this machine can), the agent cannot write .audit/ at all: the spooled verdict is the turn's.
      const contained = await attempt(4 * 1024);
      const containedMeta = JSON.parse(fs.readFileSync(contained.audit.meta, 'utf8')) as AttemptMeta;
      if (containedMeta.isolation?.filesystem === 'mount-namespace') {
        expect(contained.completion.state).toBe('failed');
        expect(contained.completion.reason).not.toBe('AUDIT_TAMPERED');
        expect(contained.error).toBeNull();
        expect(() => contained.rasp).not.toThrow();
      }
    } finally {
      sandbox.cleanup();
    }
  });
});

describe('the budget', () => {
  it('comes from the request, else AGENT_HARNESS_EVENT_MEMORY_BYTES, else 4 MiB; anything but a byte count is CONFIG_INVALID', () => {
    expect(resolveEventMemoryBytes(undefined, {})).toBe(DEFAULT_EVENT_MEMORY_BYTES);
    expect(DEFAULT_EVENT_MEMORY_BYTES).toBe(4 * 1024 * 1024);
    expect(resolveEventMemoryBytes(undefined, { AGENT_HARNESS_EVENT_MEMORY_BYTES: ' 0 ' })).toBe(0);
    expect(resolveEventMemoryBytes(10, { AGENT_HARNESS_EVENT_MEMORY_BYTES: '0' })).toBe(10);
    for (const bad of ['-1', '1e6', '4MiB', 'lots']) {
      expect(() => resolveEventMemoryBytes(undefined, { AGENT_HARNESS_EVENT_MEMORY_BYTES: bad })).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID' }),
      );
    }
    expect(() => resolveEventMemoryBytes(-5, {})).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });

  it('the command takes it from the environment: view 2 of a spooled attempt is its fcmp.N.jsonl, line for line', () => {
    const sandbox = createCliSandbox();
    try {
      const stream = path.join(sandbox.root, 'long.stdout.jsonl');
      fs.writeFileSync(stream, longCodexStream(40));
      installFakeEngine(sandbox, 'codex', { stdoutFile: stream });
      const run = runCliProcess(sandbox, ['start', '--translate', '2', '--prompt', 'hi', 'codex'], {
        AGENT_HARNESS_EVENT_MEMORY_BYTES: '0',
      });
      expect(run.status, run.stderr).toBe(0);
      const runDir = /^run_dir: (.+)$/m.exec(run.stderr)![1]!;
      expect(run.stdout).toBe(fs.readFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), 'utf8'));
      expect(run.stdout.split('\n').length).toBeGreaterThan(40);
      const bad = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex'], {
        AGENT_HARNESS_EVENT_MEMORY_BYTES: 'lots',
      });
      expect(bad.status).not.toBe(0);
      expect(bad.stderr).toContain('CONFIG_INVALID');
      expect(bad.stderr).toContain('AGENT_HARNESS_EVENT_MEMORY_BYTES');
    } finally {
      sandbox.cleanup();
    }
  });
});

describe('sealing an orphan streams its raw logs', () => {
  it('writes the RASP (raw lines included) and FCMP the in-memory translation gives, and passes over a FIFO log', async () => {
    const sandbox = createCliSandbox();
    try {
      const stream = path.join(sandbox.root, 'long.stdout.jsonl');
      fs.writeFileSync(stream, longCodexStream(120));
      installFakeEngine(sandbox, 'codex', { stdoutFile: stream, stderrText: 'warning: something\n' });
      const started = runCliProcess(sandbox, ['start', '--prompt', 'hi', 'codex']);
      expect(started.status, started.stderr).toBe(0);
      const runDir = /^run_dir: (.+)$/m.exec(started.stderr)![1]!;
      const audit = path.join(runDir, '.audit');
      const metaFile = path.join(audit, 'meta.1.json');
      const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
      // The harness "died": meta running, owner a pid that is gone, no RASP or FCMP yet; the PTY log is a FIFO.
      fs.writeFileSync(
        metaFile,
        JSON.stringify({
          ...meta,
          status: 'running',
          completion: null,
          exit: null,
          error: null,
          owner: await deadOwner(),
        }),
      );
      for (const name of ['rasp.1.jsonl', 'fcmp.1.jsonl']) fs.rmSync(path.join(audit, name));
      expect(mkfifo(path.join(audit, 'pty-output.1.log'))).toBe(0);

      const listed = runCliProcess(sandbox, ['runs', '--json']);
      expect(listed.status, listed.stderr).toBe(0);
      const expected = translateRecorded(
        await loadEngine('codex'),
        {
          stdout: fs.readFileSync(path.join(audit, 'stdout.1.log')),
          stderr: fs.readFileSync(path.join(audit, 'stderr.1.log')),
        },
        { runId: meta.run_id, attempt: 1, launch: 'start', seqStart: 0, sessionId: meta.session_id },
      );
      const strip = (rows: unknown[]): unknown =>
        JSON.parse(JSON.stringify(rows), (key, value: unknown) => (key === 'ts' ? null : value));
      const rasp = [...readJsonlFile(path.join(audit, 'rasp.1.jsonl'))];
      expect(rasp.filter((e) => (e as { data: { type: string } }).data.type === 'raw.line').length).toBeGreaterThan(
        250,
      );
      expect(strip(rasp)).toEqual(strip(expected.rasp));
      expect(strip([...readJsonlFile(path.join(audit, 'fcmp.1.jsonl'))])).toEqual(strip(expected.fcmp));
      expect(JSON.parse(fs.readFileSync(metaFile, 'utf8'))).toMatchObject({
        status: 'finished',
        error: { code: 'HARNESS_INTERRUPTED' },
      });
    } finally {
      sandbox.cleanup();
    }
  });
});
