/**
 * gemini's chat store before an ACP `session/load` (gemini/session-store.ts, setAsideChatNames): the loaded session's
 * chat files are moved off the names gemini 0.61 gives new chats (`session-<minute>-<8 chars>.jsonl`), so that its
 * new record of the loaded session cannot land in the session's own file; nothing else in the store moves.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setAsideChatNames } from '../../src/engines/gemini/session-store.js';

const SESSION = '5d698944-1a8b-44ab-8bb4-b33f82db2161';
/** Another session whose id starts with the same 8 characters. */
const LOOKALIKE = '5d698944-ffff-44ab-8bb4-b33f82db2161';
const OTHER = 'cf509c7b-0000-4000-8000-000000000000';

let home: string;
let runDir: string;
let chats: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-gemini-store-'));
  runDir = path.join(home, 'run');
  fs.mkdirSync(runDir);
  const project = path.join(home, '.gemini', 'tmp', 'run-project');
  chats = path.join(project, 'chats');
  fs.mkdirSync(chats, { recursive: true });
  fs.writeFileSync(path.join(project, '.project_root'), `${runDir}\n`);
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

/** A chat file opening with `sessionId`'s first record. */
function chat(name: string, sessionId: string, dir = chats): void {
  fs.writeFileSync(path.join(dir, name), `${JSON.stringify({ sessionId, kind: 'main' })}\n{"type":"user"}\n`);
}

describe('setAsideChatNames', () => {
  it("renames the loaded session's gemini-named chats, keeping their minute and 8-character suffix, and nothing else", () => {
    chat('session-2026-11-26T22-24-5d698944.jsonl', SESSION);
    chat('session-2026-11-26T22-20-5d698944.jsonl', SESSION);
    chat('session-2026-11-26T22-24-h1-5d698944.jsonl', SESSION); // set aside by an earlier load
    chat('session-2026-11-26T22-23-5d698944.jsonl', LOOKALIKE);
    chat('session-2026-11-26T22-24-cf509c7b.jsonl', OTHER);
    setAsideChatNames({ runDir, agentHome: home, sessionId: SESSION });
    expect(fs.readdirSync(chats).sort()).toEqual([
      'session-2026-11-26T22-20-h1-5d698944.jsonl',
      'session-2026-11-26T22-23-5d698944.jsonl',
      'session-2026-11-26T22-24-cf509c7b.jsonl',
      'session-2026-11-26T22-24-h1-5d698944.jsonl',
      'session-2026-11-26T22-24-h2-5d698944.jsonl',
    ]);
    // The earlier set-aside file kept its content: a new name never replaces one.
    expect(fs.readFileSync(path.join(chats, 'session-2026-11-26T22-24-h2-5d698944.jsonl'), 'utf8')).toContain(SESSION);
  });

  it('leaves the chats of another run directory, and does nothing without a store', () => {
    const elsewhere = path.join(home, '.gemini', 'tmp', 'other-project', 'chats');
    fs.mkdirSync(elsewhere, { recursive: true });
    fs.writeFileSync(path.join(path.dirname(elsewhere), '.project_root'), '/somewhere/else\n');
    chat('session-2026-11-26T22-24-5d698944.jsonl', SESSION, elsewhere);
    setAsideChatNames({ runDir, agentHome: home, sessionId: SESSION });
    expect(fs.readdirSync(elsewhere)).toEqual(['session-2026-11-26T22-24-5d698944.jsonl']);
    expect(() => setAsideChatNames({ runDir, agentHome: path.join(home, 'none'), sessionId: SESSION })).not.toThrow();
  });
});
