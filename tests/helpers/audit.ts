/**
 * Test helpers: validate every audit file of an attempt against its schema.
 */
import fs from 'node:fs';
import { expect } from 'vitest';
import type { AttemptAuditPaths } from '../../src/core/audit-files.js';
import { BEFORE_HASH_LIMIT } from '../../src/core/run-attempt.js';
import {
  AttemptMetaSchema,
  ConformanceReportSchema,
  FcmpEventSchema,
  FsDiffSchema,
  FsSnapshotSchema,
  RaspEventSchema,
  type AttemptMeta,
} from '../../src/protocol/index.js';

function jsonl(file: string): unknown[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Asserts that every audit file of the attempt exists and matches its schema; returns the parsed meta. */
export function expectCompleteAudit(
  audit: AttemptAuditPaths,
  io: 'split' | 'pty' = 'split',
  expected: { terminal?: number } = {},
): AttemptMeta {
  const required = [
    audit.conformance,
    audit.meta,
    audit.stdin,
    audit.modelRequests,
    audit.fsBefore,
    audit.fsAfter,
    audit.fsDiff,
    audit.rasp,
    audit.fcmp,
    ...(io === 'split' ? [audit.stdout, audit.stderr] : [audit.ptyOutput, audit.ptyTiming]),
  ];
  for (const file of required) expect(fs.existsSync(file), `${file} exists`).toBe(true);
  // The seal writes the meta unchecked (issue 44): here it must pass the schema and be what the schema gives back
  // (no key the schema would drop, no default it would fill).
  const written: unknown = JSON.parse(fs.readFileSync(audit.meta, 'utf8'));
  const meta = AttemptMetaSchema.parse(written);
  expect(meta, 'meta.N.json as the schema parses it').toStrictEqual(written);
  expect(meta.status).toBe('finished');
  const before = FsSnapshotSchema.parse(JSON.parse(fs.readFileSync(audit.fsBefore, 'utf8')));
  FsSnapshotSchema.parse(JSON.parse(fs.readFileSync(audit.fsAfter, 'utf8')));
  const diff = FsDiffSchema.parse(JSON.parse(fs.readFileSync(audit.fsDiff, 'utf8')));
  // The before-snapshot is hashed while the engine runs and written once it is: a file the attempt left alone has its
  // hash (up to BEFORE_HASH_LIMIT files to hash; past it none is read, cli.contract's test).
  const changed = new Set([...diff.modified, ...diff.deleted, ...diff.engine_bookkeeping]);
  const unhashed = before.entries.filter(
    (entry) =>
      entry.type === 'file' && entry.size <= 8 * 1024 * 1024 && entry.sha256 === null && !changed.has(entry.path),
  );
  if (before.entries.length <= BEFORE_HASH_LIMIT)
    expect(
      unhashed.map((entry) => entry.path),
      'unchanged files without a hash in fs-before',
    ).toEqual([]);
  const rasp = jsonl(audit.rasp).map((row) => RaspEventSchema.parse(row));
  expect(rasp.length).toBeGreaterThan(0);
  const fcmp = jsonl(audit.fcmp).map((row) => FcmpEventSchema.parse(row));
  const terminal = fcmp.filter((e) =>
    ['conversation.completed', 'conversation.failed', 'user.input.required'].includes(e.type),
  );
  // One terminal event per attempt; none for a call that started no session.
  expect(terminal).toHaveLength(expected.terminal ?? 1);
  for (let i = 1; i < fcmp.length; i += 1) expect(fcmp[i]!.seq).toBeGreaterThan(fcmp[i - 1]!.seq);
  const conformance = ConformanceReportSchema.parse(JSON.parse(fs.readFileSync(audit.conformance, 'utf8')));
  expect(conformance.attempt).toBe(meta.attempt);
  expect(conformance.completion).toEqual(meta.completion);
  expect(Object.values(conformance.fcmp_counts).reduce((a, b) => a + (b ?? 0), 0)).toBe(fcmp.length);
  return meta;
}

/** Asserts the attempt ran in all its namespaces (`auto` mode, no fallback), its run directory its read-write workspace. */
export function expectFullIsolation(meta: AttemptMeta, runDir: string): void {
  expect(meta.isolation).toEqual({
    mode: 'auto',
    network: 'namespace',
    processes: 'pid-namespace',
    reason: null,
    filesystem: 'mount-namespace',
    exposed: expect.arrayContaining([{ path: runDir, access: 'rw', why: 'workspace' }]),
  });
}
