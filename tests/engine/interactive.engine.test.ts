/**
 * An interactive codex attempt: the real codex TUI on a real pseudo-terminal (the harness runs it under util-linux
 * `script`, seed 001 Decisions 6 and 7). The TUI prints no JSON events, so the harness reads the session codex
 * recorded in its own session store: the run gets its session id and completion, and `resume <handle>` continues
 * the same session. What the TUI saved into the harness's codex profile does not outlive the attempt.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pty from '@lydell/node-pty';
import stripAnsi from 'strip-ansi';
import { afterAll, describe, expect, it } from 'vitest';
import { recoverCodexSession } from '../../src/engines/codex/session-store.js';
import { resolveHarnessPaths, runHome } from '../../src/runtime/paths.js';
import { REPO } from '../helpers/cli.js';
import { scaled, waitUntil } from '../helpers/load-scaled.js';

const BIN = path.join(REPO, 'bin', 'agent-harness.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-interactive-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/**
 * Whether codex has recorded the turn of `runDir` as complete in its session store, read as the harness reads it after
 * the attempt (codex's recoverSession).
 */
async function turnRecorded(runDir: string, since: Date): Promise<boolean> {
  const agentHome = runHome(resolveHarnessPaths({ projectRoot: REPO }), path.basename(runDir)).home;
  for (const output of await recoverCodexSession({ runDir, agentHome, since }))
    if (output.type === 'engine.turn.end' && output.status === 'completed') return true;
  return false;
}

/** Runs `agent-harness <args>` on a pseudo-terminal; resolves with the screen text once it exits. */
async function runOnTerminal(args: string[], env: NodeJS.ProcessEnv, finalText: RegExp): Promise<string> {
  const started = new Date();
  const term = pty.spawn(process.execPath, [BIN, ...args], {
    cols: 120,
    rows: 40,
    cwd: REPO,
    env: env as Record<string, string>,
  });
  let screen = '';
  term.onData((data) => {
    screen += data;
  });
  let done = false;
  const exited = new Promise<void>((resolve) => term.onExit(() => resolve())).then(() => {
    done = true;
  });
  // The TUI places words with cursor moves, so spaces may be missing from the captured text: compare without them.
  const shows = (text: RegExp) => text.test(stripAnsi(screen).replace(/\s+/g, ''));
  // Bounded waits for conditions: the TUI shows the scripted final message, then Ctrl-C quits it (it asks twice). Once
  // the harness prints its end separator the TUI is gone: a Ctrl-C then would interrupt the harness itself.
  await waitUntil(() => done || shows(finalText), 120_000);
  // The TUI shows the final message before codex has recorded the turn as complete in its session store, which the
  // harness reads: a Ctrl-C in between interrupts the turn. So the record is waited for too (bounded).
  const runDir = /run_dir: (\S+)/.exec(stripAnsi(screen))?.[1];
  if (runDir) await waitUntil(async () => done || (await turnRecorded(runDir, started)), 30_000);
  const engineEnded = () => done || shows(/runtimeend-+/);
  for (let i = 0; i < 10 && !engineEnded(); i += 1) {
    term.write('\x03');
    await waitUntil(engineEnded, 2000);
  }
  await Promise.race([exited, new Promise((r) => setTimeout(r, scaled(90_000)).unref())]);
  term.kill();
  return stripAnsi(screen);
}

describe('interactive codex (TUI on a pseudo-terminal)', () => {
  it("records the session from codex's session store, judges it, and resumes it by handle", {
    timeout: scaled(360_000),
  }, async () => {
    const runRoot = path.join(tmp, 'runs');
    const script = path.join(tmp, 'script.json');
    fs.writeFileSync(
      script,
      JSON.stringify({
        version: 1,
        turns: [
          { type: 'shell', command: "printf 'hi\\n' > hello.txt" },
          { type: 'final', text: 'Wrote hello.txt.' },
          { type: 'final', text: 'Second turn done.' },
        ],
      }),
    );
    const env = { ...process.env, AGENT_HARNESS_RUN_ROOT: runRoot, NO_COLOR: '1' };
    const screen = await runOnTerminal(
      ['--script', script, 'codex', 'Write hello.txt please'],
      env,
      /Wrotehello\.txt\./,
    );
    const handle = /Run handle: ([0-9a-f]{8})/.exec(screen)?.[1];
    expect(handle, screen.slice(-2000)).toBeDefined();
    const session = /Session: ([0-9a-f-]{36})/.exec(screen)?.[1];
    expect(session, screen.slice(-2000)).toBeDefined();
    expect(screen).toContain('Completion: completed (done_marker)');
    const runDir = /Run directory: (\S+)/.exec(screen)![1]!;
    expect(fs.readFileSync(path.join(runDir, 'hello.txt'), 'utf8')).toBe('hi\n');
    const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
    expect(meta).toMatchObject({ session_id: session, command: { io: 'passthrough' } });
    const rasp = fs.readFileSync(path.join(runDir, '.audit', 'rasp.1.jsonl'), 'utf8');
    expect(rasp).toContain('SESSION_RECOVERED_FROM_STORE');

    // The TUI saved its own keys ([tui]…) into the harness profile; the attempt's cleanup took them out again.
    const profile = fs.readFileSync(
      path.join(
        runHome(resolveHarnessPaths({ projectRoot: REPO }), path.basename(runDir)).home,
        '.codex',
        'agent-harness.config.toml',
      ),
      'utf8',
    );
    expect(profile).not.toMatch(/^\[tui|^\[notice/m);

    const resumed = spawnSync(process.execPath, [BIN, 'resume', handle!, 'And now?'], {
      cwd: REPO,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: scaled(120_000),
    });
    expect(resumed.stderr).toContain('Attempt: 2');
    expect(resumed.stderr).toContain(`Session: ${session}`);
    expect(resumed.stderr).toContain('Completion: completed (done_marker)');
    expect(resumed.status).toBe(0);
  });
});
