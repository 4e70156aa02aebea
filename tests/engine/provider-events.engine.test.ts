/**
 * The provider's events as seed 003 maps them, over every engine of the registry on the scripted model: a failed turn
 * yields an `error` event (then the `complete` with `success: false`), and the engine's init message, where its
 * stream has one (`EngineAdapter.initMessage`), comes as the `session` event's `system_init` content.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { loadEngine } from '../../src/engines/registry.js';
import { type AgentEvent, AgentEventSchema } from '../../src/protocol/index.js';
import { getProvider } from '../../src/providers/index.js';
import { missingReasons, registryEngines } from '../helpers/engines.js';

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-provider-events-'));
afterAll(() => fs.rmSync(runRoot, { recursive: true, force: true }));

const script = (...turns: object[]) => ({ version: 1, turns });
const MISSING = await missingReasons();

/** Every event of one query, each checked against the AgentEvent schema. */
async function collect(query: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of query) events.push(AgentEventSchema.parse(event));
  return events;
}

// Every engine of the registry; one whose executable is not found here (iflow) is skipped with that reason.
describe.for(registryEngines())('%s provider events', (engine) => {
  const missing = MISSING[engine];
  beforeEach(({ skip }) => {
    if (missing) skip(missing);
  });

  it('a failed turn yields an error event naming the failure, then complete with success false', async () => {
    // A 400, which no engine retries: a 429 or a 5xx is retried with a backoff by some (qwen waits about 80 s before
    // it reports one), and how each engine gives up on those is the engine matrix's rate-limit case.
    const message = 'Bad request for the scripted model';
    const events = await collect(
      getProvider(engine).query({
        provider: engine,
        prompt: 'Hello.',
        extra: { runRoot, script: script({ type: 'error', status: 400, message }) },
      }),
    );
    const types = events.map((e) => e.type);
    expect(
      types.filter((t) => t === 'error'),
      JSON.stringify(events).slice(0, 2000),
    ).toHaveLength(1);
    expect(types.slice(-2)).toEqual(['error', 'complete']);
    const error = events.at(-2)!;
    const complete = events.at(-1)!;
    expect(error.error).toEqual(expect.any(String));
    expect(error.error!.length).toBeGreaterThan(0);
    expect(complete.result).toMatchObject({ success: false, errors: [error.error] });
    const diagnostics = error.diagnostics as { runDir: string; runId: string; completion: { state: string } };
    expect(diagnostics.completion.state).toBe('failed');
    expect(diagnostics.runDir).toBe(path.join(runRoot, diagnostics.runId));
    expect(fs.existsSync(path.join(diagnostics.runDir, '.audit'))).toBe(true);
  });

  it("the session event carries the engine's init message as system_init where the engine prints one", async () => {
    const { initMessage } = await loadEngine(engine);
    const events = await collect(
      getProvider(engine).query({
        provider: engine,
        prompt: 'Hello.',
        extra: { runRoot, script: script({ type: 'final', text: 'Hi.' }) },
      }),
    );
    expect(events.at(-1)).toMatchObject({ type: 'complete', result: { success: true } });
    expect(events.some((e) => e.type === 'error')).toBe(false);
    const session = events[0]!;
    expect(session.type).toBe('session');
    const inits = events.filter((e) => e.content?.kind === 'system_init');
    if (!initMessage) {
      // codex (`thread.started` holds a thread id only) and opencode print no init message.
      expect(inits).toEqual([]);
      return;
    }
    expect(inits).toEqual([session]);
    expect(session.content!.raw).toMatchObject(initMessage);
    expect(session.content!.raw).toMatchObject({ session_id: session.sessionId });
  });
});
