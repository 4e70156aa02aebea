/**
 * Model scripts: the JSON format, the builders, validation errors and the stateless turn selection.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAgentHarnessError } from '../../src/errors/index.js';
import { thrownBy as thrown } from '../helpers/errors.js';
import {
  DEFAULT_REPLY,
  DONE_MARKER,
  exhaustedMessage,
  finalText,
  loadModelScript,
  parseModelScript,
  selectTurn,
  turns,
} from '../../src/model/index.js';

describe('model script format', () => {
  it('accepts every turn type and defaults final.done to true', () => {
    const script = parseModelScript({
      version: 1,
      description: 'all turn types',
      turns: [
        { type: 'text', text: 'hi', reasoning: 'thinking' },
        { type: 'shell', command: 'echo hi > out.txt' },
        { type: 'final', text: 'x' },
        { type: 'final', text: 'y', done: false },
        { type: 'error', status: 429, message: 'slow down' },
      ],
    });
    expect(script.turns.map((t) => t.type)).toEqual(['text', 'shell', 'final', 'final', 'error']);
    expect(script.turns[2]).toEqual({ type: 'final', text: 'x', done: true });
  });

  it('builders produce valid turns', () => {
    const built = [
      turns.text('a'),
      turns.text('b', { reasoning: 'r' }),
      turns.shell('ls'),
      turns.final('c'),
      turns.final('d', { done: false }),
      turns.error(500, 'boom'),
    ];
    expect(parseModelScript({ version: 1, turns: built }).turns).toEqual(built);
    expect(built[3]).toEqual({ type: 'final', text: 'c', done: true });
  });

  it('rejects invalid scripts with MODEL_SCRIPT_INVALID naming the source and the issue path', () => {
    const cases: Array<[unknown, string]> = [
      [{ version: 1, turns: [{ type: 'shell' }] }, 'turns.0.command'],
      [{ version: 2, turns: [] }, 'version'],
      [
        { version: 1, turns: [turns.text('ok'), { type: 'error', status: 200, message: 'not an error' }] },
        'turns.1.status',
      ],
      [{ version: 1, turns: [], extra: true }, '(root)'],
      [[], '(root)'],
    ];
    for (const [value, where] of cases) {
      const error = thrown(() => parseModelScript(value, 'my-script.json'));
      expect(isAgentHarnessError(error, 'MODEL_SCRIPT_INVALID')).toBe(true);
      expect((error as Error).message).toContain('my-script.json');
      expect((error as Error).message).toContain(`at ${where}`);
    }
  });

  it('loadModelScript reads a file and reports missing, non-JSON and invalid files with their path', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-script-'));
    try {
      const notJson = path.join(dir, 'not-json.json');
      fs.writeFileSync(notJson, '{"version": 1, "turns": [');
      const invalid = path.join(dir, 'invalid.json');
      fs.writeFileSync(invalid, JSON.stringify({ version: 1, turns: [{ type: 'nope' }] }));
      for (const file of [notJson, invalid, path.join(dir, 'missing.json')]) {
        const error = await loadModelScript(file).then(
          () => null,
          (e: unknown) => e,
        );
        expect(isAgentHarnessError(error, 'MODEL_SCRIPT_INVALID')).toBe(true);
        expect((error as Error).message).toContain(file);
      }
      const invalidError = await loadModelScript(invalid).catch((e: unknown) => e);
      expect((invalidError as Error).message).toContain('turns.0');
      const good = path.join(dir, 'good.json');
      fs.writeFileSync(good, JSON.stringify({ version: 1, turns: [{ type: 'text', text: 'hi' }] }));
      expect((await loadModelScript(good)).turns).toEqual([{ type: 'text', text: 'hi' }]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('turn selection', () => {
  it('selects by the number of model outputs in the history and reports exhaustion', () => {
    const script = { version: 1 as const, turns: [turns.shell('true'), turns.final('done')] };
    expect(selectTurn(script, 0)).toEqual({ kind: 'turn', index: 0, turn: turns.shell('true') });
    expect(selectTurn(script, 1)).toEqual({ kind: 'turn', index: 1, turn: turns.final('done') });
    expect(selectTurn(script, 2)).toEqual({ kind: 'exhausted', index: 2, total: 2 });
    expect(exhaustedMessage(2, 2)).toMatch(
      /^script exhausted: request needs turn 3 but the script has 2 turns\. Turns are numbered across the whole session/,
    );
    expect(exhaustedMessage(2, 2)).toContain('run.resume(message, { turns })');
  });

  it('the default script (null) never runs out', () => {
    for (const n of [0, 1, 50])
      expect(selectTurn(null, n)).toEqual({ kind: 'turn', index: n, turn: { type: 'text', text: DEFAULT_REPLY } });
    expect(DEFAULT_REPLY).toBe('Hello from the agent-harness scripted model.');
  });

  it('appends the done marker line once, only when done', () => {
    expect(DONE_MARKER).toBe('__SKILL_DONE__');
    expect(finalText({ type: 'final', text: 'ok', done: true })).toBe(`ok\n${DONE_MARKER}`);
    expect(finalText({ type: 'final', text: `ok\n${DONE_MARKER}`, done: true })).toBe(`ok\n${DONE_MARKER}`);
    expect(finalText({ type: 'final', text: 'ok', done: false })).toBe('ok');
  });
});

describe('script errors name the turn type and the missing field', () => {
  it.for([
    [{ type: 'write_file', path: 'a' }, /at turns\.1\.content: write_file turn needs "content"/],
    [{ type: 'shell' }, /at turns\.1\.command: shell turn needs "command"/],
    [
      { type: 'nope' },
      /unknown turn type "nope"; turn types: text, shell, final, error, stall, malformed, drop, write_file, use_skill/,
    ],
    [{ text: 'no type' }, /missing "type"; turn types: /],
    [{ version: 1, seed: 3, turns: [] }, /a whole script \(it has "turns"\), not a turn: pass it to model\.setScript/],
  ] as const)('%o', ([turn, message]) => {
    expect(() => parseModelScript({ version: 1, turns: [{ type: 'text', text: 'ok' }, turn] })).toThrow(message);
  });
});
