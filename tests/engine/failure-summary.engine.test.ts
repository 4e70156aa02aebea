/**
 * How a failed attempt ends on the command line, with the real claude (the quickest engine to fail): a replay of an
 * empty cassette is one CASSETTE_MISS, said once in the FCMP (its `conversation.failed`, category `model`: no
 * duplicate diagnostic, the engine's echo one line without the diff) and once on stderr, with the cassette's counts
 * and no resume line; a script that runs out is MODEL_SCRIPT_EXHAUSTED (category `model`), not an unknown failure,
 * and its resume line asks for a script with more turns.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FcmpEvent } from '../../src/protocol/index.js';
import { createCliSandbox, runCliProcess, type CliSandbox } from '../helpers/cli.js';
import { missingReasons } from '../helpers/engines.js';
import { scaled } from '../helpers/load-scaled.js';

const missing = await missingReasons();
const sandboxes: CliSandbox[] = [];
afterEach(() => {
  for (const sandbox of sandboxes.splice(0)) sandbox.cleanup();
});

function fcmpOf(stdout: string): FcmpEvent[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as FcmpEvent);
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe.skipIf(Boolean(missing.claude))('a failed attempt, summed up once', () => {
  it('an empty cassette: one CASSETTE_MISS with its category, the counts, no resume line', {
    timeout: scaled(180_000),
  }, () => {
    const sandbox = createCliSandbox();
    sandboxes.push(sandbox);
    const cassette = path.join(sandbox.root, 'empty.json');
    fs.writeFileSync(
      cassette,
      JSON.stringify({
        format: 'agent-harness.cassette/1',
        created_at: '',
        engine: 'claude',
        upstream: null,
        redactions: [],
        interactions: [],
      }),
    );
    const run = runCliProcess(sandbox, [
      'start',
      '--model',
      'replay',
      '--cassette',
      cassette,
      '--translate',
      '2',
      '--prompt',
      'hi',
      'claude',
    ]);
    expect(run.status, run.stderr).toBe(1);
    const fcmp = fcmpOf(run.stdout);
    const failed = fcmp.filter((e) => e.type === 'conversation.failed');
    expect(failed.map((e) => e.data)).toEqual([
      expect.objectContaining({
        code: 'CASSETTE_MISS',
        category: 'model',
        message: expect.stringMatching(/^The cassette is empty: /),
      }),
    ]);
    // The whole message once in the FCMP: no CASSETTE_MISS diagnostic beside the failure, the engine's echo short.
    expect(count(run.stdout, 'Re-record it')).toBe(1);
    expect(fcmp.filter((e) => e.type === 'diagnostic.warning' && e.data.code === 'CASSETTE_MISS')).toEqual([]);
    // Once on stderr, after a summary that names the category and the cassette's counts.
    expect(count(run.stderr, 'Re-record it')).toBe(1);
    expect(run.stderr).toContain('Completion: failed (CASSETTE_MISS, category model)');
    // Every request missed (claude 2.1.197 sends one; 2.1.332 answers a 400 by sending it again in other shapes).
    expect(run.stderr).toMatch(
      new RegExp(
        `Cassette: replayed ${cassette.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: 0 exact, 0 divergent, [1-9]\\d* missed, 0 unused of 0`,
      ),
    );
    expect(run.stderr).not.toContain('To continue this session');
  });

  it('a script that runs out: MODEL_SCRIPT_EXHAUSTED, category model; resume with more turns', {
    timeout: scaled(180_000),
  }, () => {
    const sandbox = createCliSandbox();
    sandboxes.push(sandbox);
    const script = path.join(sandbox.root, 'script.json');
    fs.writeFileSync(script, JSON.stringify({ version: 1, turns: [{ type: 'shell', command: 'echo hi' }] }));
    const run = runCliProcess(sandbox, ['start', '--script', script, '--translate', '2', '--prompt', 'hi', 'claude']);
    expect(run.status, run.stderr).not.toBe(0);
    const failed = fcmpOf(run.stdout).filter((e) => e.type === 'conversation.failed');
    expect(failed.map((e) => e.data)).toEqual([
      expect.objectContaining({ code: 'MODEL_SCRIPT_EXHAUSTED', category: 'model' }),
    ]);
    expect(run.stderr).toContain('Completion: failed (turn_failed: MODEL_SCRIPT_EXHAUSTED, category model)');
    expect(run.stderr).toMatch(/To continue this session, run: agent-harness resume --script FILE \S+ <message>/);
  });
});
