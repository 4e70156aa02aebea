/**
 * Cassettes behind the real CLIs, from the command line, for every engine: a keyed local "vendor" (a scripted server on
 * another loopback port that checks the key) is recorded with `start --model record --upstream URL --cassette C.json`;
 * with the vendor stopped, `--model replay` gives the same final message, tool calls and files, offline; the key is
 * nowhere in the cassette; a changed prompt exits non-zero with CASSETTE_MISS and a diff.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KEY_VARIABLES } from '../../src/cassette/record.js';
import { turns } from '../../src/model/index.js';
import type { AgentEvent, EngineId, FcmpEvent, FsDiff } from '../../src/protocol/index.js';
import { REPO } from '../helpers/cli.js';
import { engineWireApi, missingReasons, registryEngines } from '../helpers/engines.js';
import { startKeyedVendor } from '../helpers/keyed-vendor.js';
import { scaled } from '../helpers/load-scaled.js';

const KEY = 'sk-test-SECRET-cassette-9f8e7d6c5b4a';
const missing = await missingReasons();
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-cassette-engine-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** Runs the CLI without blocking this process (the vendor answers from here). */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(REPO, 'bin', 'agent-harness.js'), ...args], {
      cwd: REPO,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

/** The cassette counts of each attempt read by {@link outcome} (its meta's `model.cassette`), in order. */
const cassettes: Array<Record<string, unknown> | undefined> = [];

/** The CASSETTE_DIVERGENCE messages of each attempt read by {@link outcome}, in order. */
const divergences: string[][] = [];

/** What an attempt did, from its audit: the final message, the tool calls' commands, the files changed. */
function outcome(stderr: string) {
  const runDir = /Run directory: (\S+)/.exec(stderr)?.[1];
  if (!runDir) throw new Error(`no run directory in:\n${stderr}`);
  const fcmp = fs
    .readFileSync(path.join(runDir, '.audit', 'fcmp.1.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FcmpEvent);
  const diff = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'fs-diff.1.json'), 'utf8')) as FsDiff;
  const meta = JSON.parse(fs.readFileSync(path.join(runDir, '.audit', 'meta.1.json'), 'utf8'));
  cassettes.push(meta.model.cassette);
  divergences.push(
    fcmp.flatMap((e) =>
      e.type === 'diagnostic.warning' && e.data.code === 'CASSETTE_DIVERGENCE' ? [e.data.message] : [],
    ),
  );
  return {
    final: fcmp.filter((e) => e.type === 'assistant.message.final').at(-1)?.data.text ?? null,
    tools: fcmp.flatMap((e) => (e.type === 'tool.call' ? [e.data.command ?? e.data.name] : [])),
    files: { created: diff.created, modified: diff.modified, deleted: diff.deleted },
    content: fs.existsSync(path.join(runDir, 'a.txt')) ? fs.readFileSync(path.join(runDir, 'a.txt'), 'utf8') : null,
  };
}

describe('cassettes from the CLI', () => {
  it.for(registryEngines())(
    '%s: record against a keyed local vendor, replay offline, a changed prompt is CASSETTE_MISS',
    { timeout: scaled(300_000) },
    async (engine: EngineId, { skip }) => {
      if (missing[engine]) skip(missing[engine] ?? undefined);
      const wire = await engineWireApi(engine);
      const keyVariable = KEY_VARIABLES[wire][0]!;
      const vendor = await startKeyedVendor(KEY, {
        version: 1,
        turns: [turns.writeFile('a.txt', 'recorded from the vendor\n'), turns.final('Wrote a.txt.')],
      });
      const cassette = path.join(root, `${engine}.json`);
      const env = { ...process.env, AGENT_HARNESS_RUN_ROOT: path.join(root, 'runs', engine) };
      const args = (mode: string, prompt: string, more: string[] = []) => [
        'start',
        '--model',
        mode,
        '--cassette',
        cassette,
        ...more,
        '--prompt',
        prompt,
        engine,
      ];
      let recorded: ReturnType<typeof outcome>;
      try {
        const record = await cli(args('record', 'Write a.txt', ['--upstream', vendor.url]), {
          ...env,
          [keyVariable]: KEY,
        });
        expect(record.stderr).toContain('Completion: completed');
        expect(record.status).toBe(0);
        expect(vendor.refused).toBe(0);
        expect(vendor.accepted).toBeGreaterThanOrEqual(2);
        recorded = outcome(record.stderr);
        expect(recorded.content).toBe('recorded from the vendor\n');
        expect(recorded.final).toContain('Wrote a.txt.');
      } finally {
        await vendor.close();
      }
      const file = fs.readFileSync(cassette, 'utf8');
      expect(file).not.toContain(KEY);
      expect(file).toContain('"format": "agent-harness.cassette/1"');

      // The vendor is gone and no key is set: the replay is offline.
      const replay = await cli(args('replay', 'Write a.txt'), env);
      expect(replay.stderr).toContain('Completion: completed');
      expect(replay.status).toBe(0);
      expect(replay.stderr).not.toContain('CASSETTE_');
      expect(outcome(replay.stderr)).toEqual(recorded);
      // Every recorded call served exactly, none divergent, missed or left over (the divergences, if any, are shown).
      expect(divergences.at(-1)).toEqual([]);
      expect(cassettes.at(-1)).toMatchObject({ mode: 'replay', divergent: 0, missed: 0, unused: 0 });
      expect((cassettes.at(-1) as { exact: number }).exact).toBeGreaterThanOrEqual(2);

      const changed = await cli(args('replay', 'Write b.txt'), env);
      expect(changed.status).not.toBe(0);
      expect(changed.stderr).toContain('CASSETTE_MISS');
      expect(changed.stderr).toContain('Differences:');
      expect(changed.stderr).toContain('Write b.txt');
    },
  );
});

describe('cassettes through a provider', () => {
  it.skipIf(missing.claude)(
    'claude: extra.model record with apiKey, then replay offline: the same messages, success and file; extra.forkAt forks it',
    { timeout: scaled(300_000) },
    async () => {
      const { getProvider } = await import('../../src/providers/index.js');
      const cassette = path.join(root, 'provider-claude.json');
      /** Each query's events, as JSON. */
      const texts: string[] = [];
      const runRoot = path.join(root, 'runs', 'provider');
      const query = async (extra: Record<string, unknown>, apiKey?: string) => {
        const events: AgentEvent[] = [];
        const stream = getProvider('claude').query({
          provider: 'claude',
          prompt: 'Write a.txt',
          ...(apiKey ? { apiKey } : {}),
          extra: { runRoot, cassette, ...extra },
        });
        for await (const event of stream) events.push(event);
        const done = events.find((e) => e.type === 'complete');
        const runDir = (done?.diagnostics as { runDir?: string } | undefined)?.runDir ?? '';
        texts.push(JSON.stringify(events));
        return {
          kinds: events.filter((e) => e.type === 'message').map((e) => e.content?.kind),
          success: done?.result?.success ?? null,
          file: fs.existsSync(path.join(runDir, 'a.txt')) ? fs.readFileSync(path.join(runDir, 'a.txt'), 'utf8') : null,
        };
      };
      const vendor = await startKeyedVendor(KEY, {
        version: 1,
        turns: [turns.writeFile('a.txt', 'from the provider vendor\n'), turns.final('Wrote a.txt.')],
      });
      let recorded: Awaited<ReturnType<typeof query>>;
      try {
        recorded = await query({ model: 'record', upstream: vendor.url }, KEY);
        expect(vendor.refused).toBe(0);
      } finally {
        await vendor.close();
      }
      expect(recorded).toMatchObject({ success: true, file: 'from the provider vendor\n' });
      expect(recorded.kinds).toContain('tool_use');
      expect(fs.readFileSync(cassette, 'utf8')).not.toContain(KEY);
      expect(await query({ model: 'replay' })).toEqual(recorded);
      // extra.forkAt: the first model turn from the cassette, then the script.
      const script = { version: 1, turns: [turns.final('never served'), turns.final('Forked by the provider.')] };
      expect(await query({ model: 'replay', forkAt: 1, script })).toMatchObject({
        success: true,
        file: 'from the provider vendor\n',
      });
      expect(texts.at(-1)).toContain('Forked by the provider.');
      expect(texts.at(-2)).not.toContain('Forked by the provider.');
    },
  );
});

/** Every file under `dir` (recursively) whose content holds `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (fs.readFileSync(file).includes(needle)) found.push(file);
  }
  return found;
}

describe('forking a cassette', () => {
  it.for(registryEngines())(
    '%s: --fork-at 1 replays the first model turn, then the scripted model or the live vendor ends the conversation',
    { timeout: scaled(600_000) },
    async (engine: EngineId, { skip }) => {
      if (missing[engine]) skip(missing[engine] ?? undefined);
      const keyVariable = KEY_VARIABLES[await engineWireApi(engine)][0]!;
      const vendor = await startKeyedVendor(KEY, {
        version: 1,
        turns: [turns.writeFile('a.txt', 'recorded from the vendor\n'), turns.final('Wrote a.txt.')],
      });
      const cassette = path.join(root, `fork-${engine}.json`);
      const forkCassette = path.join(root, `fork-${engine}.live.json`);
      const script = path.join(root, `fork-${engine}.script.json`);
      fs.writeFileSync(
        script,
        JSON.stringify({ version: 1, turns: [turns.final('never served'), turns.final('Forked ending.')] }),
      );
      const runRoot = path.join(root, 'runs', `fork-${engine}`);
      const env = { ...process.env, AGENT_HARNESS_RUN_ROOT: runRoot };
      const start = (more: string[]) => [...more, '--prompt', 'Write a.txt', engine];
      try {
        const record = await cli(
          start(['start', '--model', 'record', '--cassette', cassette, '--upstream', vendor.url]),
          { ...env, [keyVariable]: KEY },
        );
        expect(record.stderr).toContain('Completion: completed');
      } finally {
        await vendor.close();
      }

      // Onto the scripted model: turn 1 comes from the script.
      const fork = await cli(
        start(['start', '--model', 'replay', '--cassette', cassette, '--fork-at', '1', '--script', script]),
        env,
      );
      expect(fork.stderr).toContain('Completion: completed');
      const forked = outcome(fork.stderr);
      expect(forked.content).toBe('recorded from the vendor\n');
      expect(forked.final).toContain('Forked ending.');
      expect(cassettes.at(-1)).toMatchObject({
        mode: 'replay',
        missed: 0,
        unused: 0,
        fork: { at: 1, to: 'scripted', recorded: null },
      });

      // Onto the live model: the vendor, which now answers turn 1 otherwise, ends the conversation; its turn 0 is
      // never asked for (the cassette served it), and the forked conversation is recorded into a new cassette.
      const live = await startKeyedVendor(KEY, {
        version: 1,
        turns: [turns.writeFile('a.txt', 'never served by the live vendor\n'), turns.final('Live ending.')],
      });
      let liveFork: Awaited<ReturnType<typeof cli>>;
      try {
        liveFork = await cli(
          start([
            'start',
            '--model',
            'replay',
            '--cassette',
            cassette,
            '--fork-at',
            '1',
            '--fork-to',
            'live',
            '--upstream',
            live.url,
            '--fork-cassette',
            forkCassette,
          ]),
          { ...env, [keyVariable]: KEY },
        );
        expect(liveFork.stderr).toContain('Completion: completed');
        expect(live.refused).toBe(0);
        expect(live.accepted).toBeGreaterThanOrEqual(1);
        const served = live.model.requests.filter((r) => r.wire !== null && r.turn_index !== null);
        expect(served.length).toBeGreaterThanOrEqual(1);
        expect(served.every((r) => (r.turn_index ?? 0) >= 1)).toBe(true);
      } finally {
        await live.close();
      }
      const liveOutcome = outcome(liveFork.stderr);
      expect(liveOutcome.content).toBe('recorded from the vendor\n');
      expect(liveOutcome.final).toContain('Live ending.');
      expect(liveOutcome.final).not.toContain('Wrote a.txt.');
      expect(cassettes.at(-1)).toMatchObject({
        mode: 'replay',
        missed: 0,
        unused: 0,
        fork: { at: 1, to: 'live', recorded: forkCassette },
      });

      // The forked cassette replays on its own, offline and keyless: the replayed turn, then the live one.
      const written = fs.readFileSync(forkCassette, 'utf8');
      expect(written).toContain('Live ending.');
      const again = await cli(start(['start', '--model', 'replay', '--cassette', forkCassette]), env);
      expect(again.stderr).toContain('Completion: completed');
      expect(again.stderr).not.toContain('CASSETTE_MISS');
      expect(outcome(again.stderr)).toEqual(liveOutcome);
      expect(cassettes.at(-1)).toMatchObject({ mode: 'replay', missed: 0, unused: 0 });

      // The key is nowhere: not in either cassette, not in any run directory.
      expect(filesHolding(root, KEY)).toEqual([]);
    },
  );
});
