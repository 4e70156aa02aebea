/**
 * Fake engines for the report and view tests, in codex's `exec --json` format (see fixtures/streams/codex/): one
 * whose agent output is hostile (markup that would run if inserted as HTML, `</script>` inside output, a bidi
 * override, a 10 MB command output), and one that waits for a file before finishing (a running attempt to tail).
 */
import fs from 'node:fs';
import path from 'node:path';
import { installGatedCodex, type CliSandbox } from './cli.js';

/** Markup that runs script wherever it is inserted as HTML (each sets `window.__pwned` or opens a dialog). */
export const HOSTILE_MARKUP =
  '</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2;alert(1)"><svg onload="window.__pwned=3"></svg><!--';
/** A right-to-left override: shown as `⟦U+202E⟧`, never applied. */
export const BIDI_OVERRIDE = '\u202E';
/** Size of the hostile command output. */
export const BIG_OUTPUT_BYTES = 10 * 1024 * 1024;

function codexLines(items: unknown[]): string {
  const lines: unknown[] = [
    { type: 'thread.started', thread_id: '01a2053b-9f5a-7bc0-b066-eb965712e0ff' },
    { type: 'turn.started' },
    ...items.map((item) => ({ type: 'item.completed', item })),
    {
      type: 'turn.completed',
      usage: { input_tokens: 20, cached_input_tokens: 0, output_tokens: 10, reasoning_output_tokens: 0 },
    },
  ];
  return `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
}

/** Writes the hostile stream into the sandbox and returns its path (for installFakeEngine's `stdoutFile`). */
export function writeHostileStream(sandbox: CliSandbox): string {
  const file = path.join(sandbox.root, 'hostile.stdout.jsonl');
  const big = `${HOSTILE_MARKUP}\n${'x'.repeat(BIG_OUTPUT_BYTES)}\nEND-OF-BIG-OUTPUT`;
  fs.writeFileSync(
    file,
    codexLines([
      { id: 'item_0', type: 'reasoning', text: `thinking ${HOSTILE_MARKUP}` },
      {
        id: 'item_1',
        type: 'command_execution',
        command: `/bin/bash -lc 'cat evil${BIDI_OVERRIDE}txt.exe'`,
        aggregated_output: big,
        exit_code: 0,
        status: 'completed',
      },
      { id: 'item_2', type: 'agent_message', text: `Done ${HOSTILE_MARKUP} file: evil${BIDI_OVERRIDE}txt.exe` },
    ]),
  );
  return file;
}

/**
 * Installs a fake codex that prints a tool call, then waits until the returned gate file exists, then prints its
 * message and exits: an attempt that stays running until the test lets it finish.
 */
export function installGatedEngine(sandbox: CliSandbox): string {
  const toolCall = codexLines([
    {
      id: 'item_0',
      type: 'command_execution',
      command: "/bin/bash -lc 'echo live > live.txt'",
      aggregated_output: 'live\n',
      exit_code: 0,
      status: 'completed',
    },
  ])
    .split('\n')
    .slice(0, 3);
  const rest = [
    JSON.stringify({ type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: 'LIVE-DONE' } }),
    JSON.stringify({
      type: 'turn.completed',
      usage: { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1, reasoning_output_tokens: 0 },
    }),
  ];
  const file = path.join(sandbox.root, 'gated.stdout.jsonl');
  fs.writeFileSync(file, `${[...toolCall, ...rest].join('\n')}\n`);
  return installGatedCodex(sandbox, file, toolCall.length);
}
