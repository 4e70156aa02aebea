/**
 * An interactive attempt on every engine of the registry is resumed by handle. The engine's TUI runs on a real
 * pseudo-terminal (io `pty`) against the scripted model and answers a first message; it prints a screen, not JSON
 * events, so the harness reads the session from the engine's own session store (`recoverSession` of its adapter).
 * The run record then holds that session id, and the next turn, resumed by the run's handle through the session unit
 * (`resumeRequest` + `runAttempt`), continues the same session: the engine's resume argv names it, the engine
 * reports it again, and the model request of the resumed turn carries the first turn's answer as history.
 *
 * An engine whose executable the registry cannot resolve here is skipped with that reason. How each engine's TUI is
 * opened with a first message is data in {@link TUI_ARGS}; an engine that can run but has no row there fails.
 * The terminal attempt is ended by cancelling it once the answer is on its screen and the engine's session store
 * shows that turn (a condition, bounded, not a fixed settle); nothing here asserts a duration.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import stripAnsi from 'strip-ansi';
import { afterAll, describe, expect, it } from 'vitest';
import { resumeRequest } from '../../src/core/session.js';
import { type AttemptReadyInfo, runAttempt } from '../../src/core/run-attempt.js';
import type { SessionRecoveryContext } from '../../src/engines/engine.js';
import { loadEngine } from '../../src/engines/registry.js';
import { startModelServer } from '../../src/engines/model-server.js';
import type { EngineId } from '../../src/protocol/index.js';
import { resolveHarnessPaths, runHome } from '../../src/runtime/paths.js';
import { readRunRecord } from '../../src/runtime/run-store.js';
import { REPO } from '../helpers/cli.js';
import { missingReasons, registryEngines } from '../helpers/engines.js';
import { scaled, waitUntil } from '../helpers/load-scaled.js';

const ENGINES = registryEngines();
const MISSING = await missingReasons();

/** The engine's own command line that opens its TUI with `prompt` as the first message (measured on the pinned CLIs). */
const TUI_ARGS: Partial<Record<EngineId, (prompt: string) => string[]>> = {
  codex: (prompt) => [prompt],
  claude: (prompt) => [prompt],
  gemini: (prompt) => ['-i', prompt],
  opencode: (prompt) => ['--prompt', prompt],
  // `copilot --help` 1.0.102: "-i, --interactive <prompt>  Start interactive mode and automatically execute this prompt".
  copilot: (prompt) => ['-i', prompt],
  qwen: (prompt) => ['-i', prompt],
};

const FIRST = 'First answer ALPHA.';
/** The word of the first answer that nothing else on the screen says: what the screen is waited for. */
const FIRST_MARK = 'ALPHA';
/**
 * How many other characters may stand between two letters of a mark on the screen. A TUI may redraw another part of
 * the screen between two streamed parts of one line: copilot 1.0.102 drew `First`, its spinner, `answer ALPH`, its
 * status bar (about 110 characters), then `A.`.
 */
const REDRAW_SPAN = 200;

/**
 * Whether the screen shows `mark`: its letters in order, escape sequences and whitespace left out, with at most
 * {@link REDRAW_SPAN} other characters between two of them.
 */
function screenShows(screen: string, mark: string): boolean {
  const text = stripAnsi(screen).replace(/\s+/g, '');
  const letters = mark.replace(/\s+/g, '');
  // Where a match of the mark's first i letters can end; the next letter must follow within the span.
  let ends: number[] = [];
  for (let at = text.indexOf(letters[0]!); at >= 0; at = text.indexOf(letters[0]!, at + 1)) ends.push(at);
  for (const letter of letters.slice(1)) {
    const next: number[] = [];
    let i = 0;
    for (let at = text.indexOf(letter); at >= 0 && i < ends.length; at = text.indexOf(letter, at + 1)) {
      while (i < ends.length && ends[i]! + REDRAW_SPAN + 1 < at) i += 1;
      if (i < ends.length && ends[i]! < at) next.push(at);
    }
    ends = next;
  }
  return ends.length > 0;
}

const SECOND = 'Second answer BETA.';

/**
 * Whether the engine's own session store, read as the harness reads it after the attempt (`recoverSession`), already
 * shows the first turn: its answer's text, or the end of the turn (opencode's log names no text; copilot closes a turn
 * only at exit). Until it does, cancelling could cut the session short of what the resume needs.
 */
async function storeShowsTurn(engine: EngineId, ctx: SessionRecoveryContext): Promise<boolean> {
  const adapter = await loadEngine(engine);
  const events = [...(await adapter.recoverSession!(ctx))];
  return events.some((event) => event.type === 'engine.turn.end') || JSON.stringify(events).includes(FIRST);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-interactive-resume-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe.for(ENGINES)('interactive %s attempt (TUI on a pseudo-terminal)', (engine) => {
  it('records the session from the engine’s session store and is resumed by handle', {
    timeout: scaled(420_000),
  }, async ({ skip }) => {
    const missing = MISSING[engine];
    if (missing) skip(missing);
    const tuiArgs = TUI_ARGS[engine];
    if (!tuiArgs)
      throw new Error(
        `no TUI command line for ${engine}: add its row to TUI_ARGS in ${path.basename(import.meta.filename)}`,
      );
    const paths = resolveHarnessPaths({
      env: { AGENT_HARNESS_RUN_ROOT: path.join(tmp, engine) },
      projectRoot: REPO,
      skillRoots: [],
    });
    const model = await startModelServer({
      script: {
        version: 1,
        turns: [
          { type: 'final', text: FIRST, done: true },
          { type: 'final', text: SECOND, done: true },
        ],
      },
    });
    try {
      // The TUI answers; once the answer is on its screen the attempt is cancelled (a terminal user would quit).
      let screen = '';
      const shows = (text: string) => screenShows(screen, text);
      const cancel = new AbortController();
      const since = new Date();
      let ready: AttemptReadyInfo | undefined;
      const attempt = runAttempt({
        paths,
        engine,
        launch: 'start',
        rawArgs: true,
        passthrough: tuiArgs('Say hello'),
        io: 'pty',
        modelServer: model,
        timeoutMs: scaled(300_000),
        signal: cancel.signal,
        onReady: (info) => {
          ready = info;
        },
        onOutput: (_stream, chunk) => {
          screen += Buffer.from(chunk).toString('utf8');
        },
      });
      let settled = false;
      void attempt.finally(() => {
        settled = true;
      });
      await waitUntil(() => settled || shows(FIRST_MARK), 240_000);
      // The engine may draw the answer before it writes it to its session store: cancel once the store shows it (an
      // engine whose store showed it only at exit would wait out the bound, and still pass).
      await waitUntil(
        async () =>
          settled ||
          (ready !== undefined &&
            (await storeShowsTurn(engine, {
              runDir: ready.run.run_dir,
              agentHome: runHome(paths, ready.run.run_id).home,
              since,
            }))),
        30_000,
      );
      cancel.abort();
      const first = await attempt;
      expect(shows(FIRST_MARK), stripAnsi(screen).slice(-2000)).toBe(true);
      expect(first.sessionId, `no session recovered; see ${first.runDir}/.audit`).toEqual(expect.any(String));
      expect(readRunRecord(first.runDir)?.session_id).toBe(first.sessionId);
      const rasp = fs.readFileSync(path.join(first.runDir, '.audit', 'rasp.1.jsonl'), 'utf8');
      expect(rasp).toContain('SESSION_RECOVERED_FROM_STORE');
      // The store is read for this run dir only: another directory, over the same span, has no session there.
      const startedAt = new Date(
        JSON.parse(fs.readFileSync(path.join(first.runDir, '.audit', 'meta.1.json'), 'utf8')).timings.started_at,
      );
      const adapter = await loadEngine(engine);
      const elsewhere = [
        ...(await adapter.recoverSession!({
          runDir: path.join(tmp, 'elsewhere'),
          agentHome: runHome(paths, first.runId).home,
          since: startedAt,
        })),
      ];
      expect(elsewhere.filter((event) => event.type === 'engine.session')).toEqual([]);

      // The next turn, by the run's handle, through the session unit as `agent-harness resume <handle>` runs it.
      const before = model.requests.length;
      const resumed = await runAttempt(
        await resumeRequest({ selector: first.handle }, 'And now?', {
          paths,
          modelServer: model,
          timeoutMs: scaled(300_000),
        }),
      );
      expect(resumed.runDir).toBe(first.runDir);
      expect(resumed.attempt).toBe(2);
      const meta = JSON.parse(fs.readFileSync(path.join(first.runDir, '.audit', 'meta.2.json'), 'utf8'));
      // One argument names it (copilot's is the single token `--resume=<id>`).
      expect(meta.command.argv.some((arg: string) => arg.includes(first.sessionId!))).toBe(true);
      expect(resumed.sessionId).toBe(first.sessionId);
      expect(resumed.completion.state, `see ${first.runDir}/.audit`).toBe('completed');
      expect(resumed.finalMessage).toContain(SECOND);
      // The engine continued that session: its model request of the resumed turn carries the first turn's answer.
      const turnRequests = model.requests
        .slice(before)
        .filter((request) => request.wire !== null && request.response_kind !== 'side');
      expect(turnRequests.length).toBeGreaterThan(0);
      expect(JSON.stringify(turnRequests[0]!.body)).toContain(FIRST);
    } finally {
      await model.close();
    }
  });
});
