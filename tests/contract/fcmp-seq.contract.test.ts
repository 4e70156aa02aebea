/**
 * The seq an attempt's FCMP continues from is read from the end of the earlier attempts' fcmp.N.jsonl
 * (`lastSeqInFcmp`): the same answer as reading the whole file, for lines of any size, torn lines and lines
 * without a seq; and a FIFO in place of the file is not read.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lastFcmpSeq, lastSeqInFcmp } from '../../src/core/audit-files.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-fcmp-seq-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** What reading the whole file gives: the seq of the last complete line that parses and has one. */
function wholeFileSeq(text: string): number | null {
  const lines = text.trim().split('\n').filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    try {
      const seq = (JSON.parse(lines[i]!) as { seq?: unknown }).seq;
      if (typeof seq === 'number') return seq;
    } catch {
      // torn
    }
  }
  return null;
}

describe('lastSeqInFcmp', () => {
  it('gives what a whole read gives, for lines of any size, torn lines and lines without a seq', () => {
    // Sizes around the 64 KiB first look and its fourfold growth, so a line often straddles a window's start.
    const padding = fc.oneof(
      fc.integer({ min: 0, max: 200 }),
      fc.integer({ min: 60_000, max: 70_000 }),
      fc.integer({ min: 250_000, max: 270_000 }),
    );
    const line = fc.oneof(
      fc
        .record({ seq: fc.nat(), pad: padding })
        .map(({ seq, pad }) =>
          JSON.stringify({ seq, type: 'assistant.message.final', data: { text: 'x'.repeat(pad) } }),
        ),
      padding.map((pad) => JSON.stringify({ type: 'no.seq', data: 'y'.repeat(pad) })),
      padding.map((pad) => `{"seq": 7, "torn": "${'z'.repeat(pad)}`),
      fc.constant(''),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), fc.boolean(), (lines, trailingNewline) => {
        const text = lines.join('\n') + (trailingNewline && lines.length > 0 ? '\n' : '');
        const file = path.join(dir, 'fcmp.1.jsonl');
        fs.writeFileSync(file, text);
        expect(lastSeqInFcmp(file)).toBe(wholeFileSeq(text));
      }),
      { numRuns: 150 },
    );
  });

  it('a missing file or a FIFO gives null, and lastFcmpSeq looks at the attempt before', () => {
    const audit = path.join(dir, '.audit');
    fs.mkdirSync(audit);
    fs.writeFileSync(
      path.join(audit, 'fcmp.1.jsonl'),
      `${JSON.stringify({ seq: 41 })}\n${JSON.stringify({ seq: 42 })}\n`,
    );
    execFileSync('mkfifo', [path.join(audit, 'fcmp.2.jsonl')]);
    expect(lastSeqInFcmp(path.join(audit, 'fcmp.2.jsonl'))).toBeNull();
    expect(lastSeqInFcmp(path.join(audit, 'fcmp.3.jsonl'))).toBeNull();
    expect(lastFcmpSeq(dir, 4)).toBe(42);
    expect(lastFcmpSeq(dir, 1)).toBe(0);
  });
});
