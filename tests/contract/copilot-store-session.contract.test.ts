/**
 * copilot's session named from its own store while the attempt runs (copilot/session-store.ts
 * copilotSessionFromStore, engines/store-session.ts withStoreSession): copilot 1.0.102 prints its session id only in
 * its closing `result` line, but writes `session-state/<id>/workspace.yaml` before its first event, so the parser's
 * `engine.session` comes before the first line's events, once.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copilotSessionFromStore } from '../../src/engines/copilot/session-store.js';
import { createCopilotParser } from '../../src/engines/copilot/parse.js';
import { withStoreSession } from '../../src/engines/store-session.js';

const SESSION = 'db71343e-56bd-47dd-9729-777f7e1ad07e';
const OLDER = '1c5e0b6d-ce48-41e6-a488-c233ac033fd1';

let home: string;
let runDir: string;
let store: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-copilot-store-'));
  runDir = path.join(home, 'run');
  fs.mkdirSync(runDir);
  store = path.join(home, '.copilot', 'session-state');
  fs.mkdirSync(store, { recursive: true });
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

/** A session directory with copilot's `workspace.yaml` (as 1.0.102 writes it). */
function session(id: string, cwd: string, createdAt: string): void {
  fs.mkdirSync(path.join(store, id));
  fs.writeFileSync(
    path.join(store, id, 'workspace.yaml'),
    `id: ${id}\ncwd: ${cwd}\nclient_name: github/cli\nname: Hello.\nuser_named: false\ncreated_at: ${createdAt}\n`,
  );
}

const since = new Date('2026-11-29T10:49:00.000Z');

describe('copilotSessionFromStore', () => {
  it("names the newest session of the run dir created since the attempt began; another dir's or an older one is none", () => {
    const ctx = { runDir, agentHome: home, since };
    expect(copilotSessionFromStore(ctx)).toBeNull();
    session(OLDER, runDir, '2026-11-29T10:48:59.000Z');
    session('0a0a0a0a-0000-4000-8000-000000000000', path.join(home, 'elsewhere'), '2026-11-29T10:49:30.000Z');
    expect(copilotSessionFromStore(ctx)).toBeNull();
    session(SESSION, runDir, '2026-11-29T10:49:49.909Z');
    expect(copilotSessionFromStore(ctx)).toBe(SESSION);
  });

  it('takes no half-written file, and waits on no FIFO planted in the store', () => {
    fs.mkdirSync(path.join(store, SESSION));
    fs.writeFileSync(path.join(store, SESSION, 'workspace.yaml'), `cwd: ${runDir}\n`);
    fs.mkdirSync(path.join(store, OLDER));
    // A FIFO with no writer: reading it would block for good.
    execFileSync('mkfifo', [path.join(store, OLDER, 'workspace.yaml')]);
    expect(copilotSessionFromStore({ runDir, agentHome: home, since })).toBeNull();
  });
});

describe('withStoreSession', () => {
  const skillsLoaded = JSON.stringify({ type: 'session.skills_loaded', data: { skills: [] }, id: 'e1' });
  const result = JSON.stringify({ type: 'result', sessionId: SESSION, exitCode: 0 });

  it("puts the store's session before the first line's events, and drops the parser's own for the same id", () => {
    let found: string | null = null;
    const parser = withStoreSession(createCopilotParser(), () => found);
    expect(parser.line('stdout', skillsLoaded).some((o) => o.type === 'engine.session')).toBe(false);
    found = SESSION;
    const second = parser.line('stdout', skillsLoaded);
    expect(second[0]).toEqual({ type: 'engine.session', session_id: SESSION });
    const rest = [...parser.line('stdout', result), ...parser.end()];
    expect(rest.filter((o) => o.type === 'engine.session')).toEqual([]);
  });

  it("stops looking once the parser names the session itself, and keeps the engine's word", () => {
    let lookups = 0;
    const parser = withStoreSession(createCopilotParser(), () => {
      lookups += 1;
      return null;
    });
    const outputs = parser.line('stdout', result);
    expect(outputs).toContainEqual({ type: 'engine.session', session_id: SESSION });
    parser.line('stdout', skillsLoaded);
    expect(lookups).toBe(1);
  });
});
