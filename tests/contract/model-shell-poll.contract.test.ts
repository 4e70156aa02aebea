/**
 * A scripted shell turn runs its command to its end: when codex's `exec_command` returns while the process still
 * runs ("Process running with session ID N", codex 0.169 after its 10 s yield), the next answer is codex's own poll
 * (`write_stdin {session_id: N, chars: ""}`), not the next script turn, until the output says the process exited;
 * `wait: false` moves on at once; the polls are bounded. Requests are shaped as codex 0.169 sends them (seen in a
 * scripted `sleep 12` run's model request log). No engine is started.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { codexFacts } from '../../src/engines/codex/facts.js';
import { MAX_SHELL_POLLS, type ModelServer, type ModelTurn, parseModelScript, turns } from '../../src/model/index.js';
import { startModelServer } from '../../src/engines/model-server.js';

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

type Item = Record<string, unknown>;
const user: Item = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'run it' }] };
const running = (session: number): string =>
  `Chunk ID: 1706d4\nWall time: 10.0017 seconds\nProcess running with session ID ${session}\nOriginal token count: 0\nOutput:\n`;
const exited =
  'Chunk ID: 427791\nWall time: 2.0402 seconds\nProcess exited with code 0\nOriginal token count: 0\nOutput:\n';

async function start(script: ModelTurn[]): Promise<ModelServer> {
  server = await startModelServer({
    script: parseModelScript({ version: 1, turns: script }),
    tools: [codexFacts.tools],
  });
  return server;
}

/** The output items the server answers for a (plain, not streamed) Responses request with `input`. */
async function answer(input: Item[]): Promise<Item[]> {
  const response = await fetch(`${server!.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'scripted', input }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { output: Item[] }).output;
}

/** The history after the model answered `call` and codex sent back `output`. */
function withResult(input: Item[], call: Item, output: string): Item[] {
  return [...input, call, { type: 'function_call_output', call_id: call.call_id, output }];
}

describe('shell turns wait for their command', () => {
  it("polls a command codex reports still running with write_stdin on its session, then answers the script's next turn", async () => {
    await start([turns.shell('sleep 45; echo done > slow.txt'), turns.final('ok')]);
    const [shell] = await answer([user]);
    expect(shell).toMatchObject({ type: 'function_call', name: 'exec_command' });
    let history = withResult([user], shell!, running(67556));
    const [poll] = await answer(history);
    expect(poll).toMatchObject({ type: 'function_call', name: 'write_stdin' });
    expect(JSON.parse(String(poll!.arguments))).toEqual({ session_id: 67556, chars: '', yield_time_ms: 30000 });
    // Still running after the poll: poll again (the same session).
    history = withResult(history, poll!, running(67556));
    const [again] = await answer(history);
    expect(again).toMatchObject({ type: 'function_call', name: 'write_stdin' });
    // Exited: the polls used no script turn, so the next answer is the script's turn 2.
    history = withResult(history, again!, exited);
    const [final] = await answer(history);
    expect(final).toMatchObject({ type: 'message', role: 'assistant' });
    expect(JSON.stringify(final)).toContain('ok');
    const kinds = server!.requests.map((r) => [r.response_kind, r.turn_index]);
    expect(kinds).toEqual([
      ['shell', 0],
      ['poll', 0],
      ['poll', 0],
      ['final', 1],
    ]);
  });

  it('with wait: false answers the next turn while the command still runs (from JSON too)', async () => {
    const fromJson = parseModelScript({
      version: 1,
      turns: [
        { type: 'shell', command: 'sleep 45', wait: false },
        { type: 'final', text: 'ok' },
      ],
    });
    expect(fromJson.turns[0]).toEqual(turns.shell('sleep 45', { wait: false }));
    await start([turns.shell('sleep 45', { wait: false }), turns.final('ok')]);
    const [shell] = await answer([user]);
    const [next] = await answer(withResult([user], shell!, running(5)));
    expect(next).toMatchObject({ type: 'message', role: 'assistant' });
    expect(server!.requests.map((r) => r.response_kind)).toEqual(['shell', 'final']);
  });

  it(`stops polling after ${MAX_SHELL_POLLS} polls and answers the next turn`, async () => {
    await start([turns.shell('sleep 10000'), turns.final('gave up')]);
    const [shell] = await answer([user]);
    let history = withResult([user], shell!, running(9));
    for (let i = 0; i < MAX_SHELL_POLLS; i += 1) {
      const [poll] = await answer(history);
      expect(poll).toMatchObject({ name: 'write_stdin' });
      history = withResult(history, poll!, running(9));
    }
    const [next] = await answer(history);
    expect(next).toMatchObject({ type: 'message', role: 'assistant' });
    expect(server!.requests.filter((r) => r.response_kind === 'poll')).toHaveLength(MAX_SHELL_POLLS);
  });

  it('a finished command or a text turn gets no poll', async () => {
    await start([turns.shell('true'), turns.shell('sleep 1'), turns.final('ok')]);
    const [first] = await answer([user]);
    // The first command exited within the yield: the next answer is the script's next shell turn.
    const history = withResult([user], first!, exited);
    const [second] = await answer(history);
    expect(second).toMatchObject({ name: 'exec_command' });
    expect(JSON.parse(String(second!.arguments))).toEqual({ cmd: 'sleep 1' });
  });
});
