/**
 * A secret the upstream echoes back is redacted from the audit as it is from the cassette (issue 42). A recording
 * hands the user's real key to the upstream; this hostile upstream (127.0.0.1) puts the key it was sent into its
 * answer. The fake codex asks the harness's model server twice (its second request carries the first answer back, as
 * a conversation's history does), prints the answers as codex's JSONL stream, and the key on stderr. The key must be
 * nowhere in the run's `.audit/` files (stdout and stderr logs, RASP, FCMP, the model request log, meta) nor in the
 * cassette, and the placeholder must be there instead (so the echo did reach the audit).
 */
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, createCliSandbox, type CliSandbox } from '../helpers/cli.js';
import { scaled } from '../helpers/load-scaled.js';

const KEY = 'sk-echoed-secret-5f3a9c1e7b2d4680';
const PLACEHOLDER = /<redacted:vendor-key:OPENAI_API_KEY:[0-9a-f]{8}>/;

let sandbox: CliSandbox;
let upstream: http.Server;
let upstreamUrl: string;
const seenKeys: string[] = [];

/** Every file under `dir`, as text. */
function filesUnder(dir: string): Array<{ file: string; text: string }> {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).flatMap((entry) => {
    if (!entry.isFile()) return [];
    const file = path.join(entry.parentPath, entry.name);
    return [{ file, text: fs.readFileSync(file, 'latin1') }];
  });
}

/** A codex stand-in: two model calls through the harness's model server, their answers printed as codex JSONL. */
const FAKE_CODEX = `#!/usr/bin/env node
const base = process.argv.map((a) => /base_url=(\\S+)/.exec(a)).find(Boolean)[1].replace(/^"|"$/g, '');
const ask = async (text) => {
  const response = await fetch(base + '/responses', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer engine-placeholder' },
    body: JSON.stringify({ model: 'gpt-test', stream: true, input: [{ role: 'user', content: [{ type: 'input_text', text }] }] }),
  });
  return response.text();
};
const line = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
(async () => {
  line({ type: 'thread.started', thread_id: '01a2053b-9f5a-7bc0-b066-eb965712ebee' });
  line({ type: 'turn.started' });
  const first = await ask('hi');
  const second = await ask('you said: ' + first);
  // Printed a byte at a time: a secret cut between chunks must still be found.
  const message = JSON.stringify({ type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: first + second } }) + '\\n';
  for (const byte of Buffer.from(message)) process.stdout.write(Buffer.from([byte]));
  const key = /sk-echoed-secret-[0-9a-f]+/.exec(first);
  process.stderr.write('engine saw ' + (key ? key[0] : 'nothing') + '\\n');
  line({ type: 'turn.completed', usage: { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 } });
})();
`;

beforeAll(async () => {
  sandbox = createCliSandbox();
  fs.writeFileSync(path.join(sandbox.prefix, 'bin', 'codex'), FAKE_CODEX, { mode: 0o755 });
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      seenKeys.push(key);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (value: unknown) => res.write(`data: ${JSON.stringify(value)}\n\n`);
      event({ type: 'response.output_text.delta', delta: `your key is ${key}` });
      event({ type: 'response.completed', response: { id: 'r1', status: 'completed', output: [] } });
      res.end();
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as net.AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => upstream.close(resolve));
  sandbox.cleanup();
});

describe('a key echoed by the upstream while recording', () => {
  it('is redacted from every audit file and the cassette, the placeholder in its place', async () => {
    const cassette = path.join(sandbox.root, 'echo.cassette.json');
    const result = await execa(
      process.execPath,
      [BIN, 'start', '--model', 'record', '--cassette', cassette, '--upstream', upstreamUrl, '--prompt', 'hi', 'codex'],
      {
        cwd: sandbox.root,
        env: { ...sandbox.env, OPENAI_API_KEY: KEY },
        extendEnv: false,
        reject: false,
        timeout: scaled(120_000),
      },
    );
    // The upstream was sent the real key twice and echoed it.
    expect(seenKeys, result.stderr).toEqual([KEY, KEY]);
    const runDir = /^run_dir: (.+)$/m.exec(result.stderr)?.[1];
    expect(runDir, result.stderr).toBeTruthy();
    const audit = filesUnder(path.join(runDir!, '.audit'));
    const named = (prefix: string) => audit.find(({ file }) => path.basename(file).startsWith(prefix))!;
    for (const prefix of ['stdout.1', 'stderr.1', 'rasp.1', 'fcmp.1', 'model-requests.1'])
      expect(named(prefix)?.text, `${prefix} holds the placeholder`).toMatch(PLACEHOLDER);
    for (const { file, text } of audit) expect(text.includes(KEY), `${file} holds the key`).toBe(false);
    const recorded = fs.readFileSync(cassette, 'utf8');
    expect(recorded.includes(KEY)).toBe(false);
    expect(recorded).toMatch(PLACEHOLDER);
    // What the CLI printed was the redacted stream too.
    expect(result.stdout.includes(KEY)).toBe(false);
  });
});

describe('the audit redaction of raw chunks', () => {
  it('finds a secret cut anywhere between two chunks, and gives back a held end that was no secret', async () => {
    const { auditRedactionOf } = await import('../../src/core/audit-redaction.js');
    const redaction = (await auditRedactionOf({ OPENAI_API_KEY: KEY }))!;
    const text = Buffer.from(`before ${KEY} after sk-echoed`);
    for (let cut = 0; cut <= text.length; cut += 1) {
      const chunks = redaction.chunks();
      const out = Buffer.concat([
        chunks.push('stdout', text.subarray(0, cut)),
        chunks.push('stdout', text.subarray(cut)),
        chunks.flush('stdout'),
      ]).toString();
      expect(out.includes(KEY), `cut at ${cut}`).toBe(false);
      expect(out, `cut at ${cut}`).toMatch(new RegExp(`^before ${PLACEHOLDER.source} after sk-echoed$`));
    }
    expect(await auditRedactionOf({ HOME: '/home/user' })).toBeNull();
  });
});
