/**
 * Rooms that fit in a hand (issue 44): no file in src/ over 20 KB and no function over 100 lines, except those named
 * with their reason in docs/architecture.md ("Rooms that fit in a hand"). Measured with the TypeScript compiler's
 * parser, so a new long function or a grown file fails here, and an allowance no longer needed is dropped from the
 * page (the list cannot silently outlive its reason).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allowList, measureFunctions, sourceFiles } from '../helpers/house-size.js';

const root = path.resolve('.');
/** The largest file, in bytes. */
const FILE_LIMIT = 20 * 1024;
/** The longest function, in lines from its first to its last. */
const FUNCTION_LIMIT = 100;

const files = sourceFiles(root, 'src');
const allowed = allowList(root);

describe('house size', () => {
  it('measures real functions (the parser sees nested and arrow functions)', () => {
    const measured = measureFunctions(root, 'src/core/run-attempt.ts').map((f) => f.key);
    expect(measured).toContain('src/core/run-attempt.ts#runAttempt');
    expect(files.length).toBeGreaterThan(100);
  });

  it(`has no file over ${FILE_LIMIT} bytes but those allowed`, () => {
    const large = files
      .filter((file) => fs.statSync(path.join(root, file)).size > FILE_LIMIT)
      .filter((file) => !allowed.has(file));
    expect(large, 'split these files, or name them with their reason in docs/architecture.md').toEqual([]);
  });

  it(`has no function over ${FUNCTION_LIMIT} lines but those allowed`, () => {
    const long = files
      .flatMap((file) => measureFunctions(root, file))
      .filter((fn) => fn.lines > FUNCTION_LIMIT && !allowed.has(fn.key))
      .map((fn) => `${fn.key} (${fn.lines} lines)`);
    expect(long, 'split these into named sub-steps, or name them with their reason in docs/architecture.md').toEqual(
      [],
    );
  });

  it('allows nothing that is no longer over its limit (or no longer exists)', () => {
    const over = new Set([
      ...files.filter((file) => fs.statSync(path.join(root, file)).size > FILE_LIMIT),
      ...files
        .flatMap((file) => measureFunctions(root, file))
        .filter((fn) => fn.lines > FUNCTION_LIMIT)
        .map((fn) => fn.key),
    ]);
    expect([...allowed].filter((key) => !over.has(key))).toEqual([]);
  });
});
