/**
 * Providers over ACP (`extra.transport: 'acp'`), on every engine of the registry that has an ACP mode, on the scripted
 * model with isolation required: the same tool-using query gives the same AgentEvent types, tool calls, final message
 * and fs diff as the native transport; permission requests are answered from the agent options (allowed, rejected);
 * an abort in the middle of a tool call sends `session/cancel` and leaves no process; a session resumes by its id
 * (`session/load`); `translate` of an ACP run reads it with the ACP parser. Each test reports its checks in its task
 * meta (`agentHarnessAcp`): the consistency report's "ACP against native" table (src/report/acp-conformance.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { loadEngine } from '../../src/engines/registry.js';
import { type AgentEvent, AgentEventSchema, type FsDiff, type RaspEvent } from '../../src/protocol/index.js';
import { getProvider } from '../../src/providers/index.js';
import {
  ACP_META_KEY,
  type AcpConformanceEntry,
  compareTransports,
  type TransportRun,
} from '../../src/report/acp-conformance.js';
import { BIN } from '../helpers/cli.js';
import { missingReasons, registryEngines } from '../helpers/engines.js';
import { foregroundSleep, pidsWithMarker, uniqueSleepSeconds } from '../helpers/processes.js';
import { scaled } from '../helpers/load-scaled.js';

const runRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-providers-acp-'));
afterAll(() => fs.rmSync(runRoot, { recursive: true, force: true }));

const MISSING = await missingReasons();
const ACP_ENGINES = (
  await Promise.all(registryEngines().map(async (id) => ((await loadEngine(id)).acp ? id : null)))
).filter((id): id is string => id !== null);

const script = (...turns: object[]) => ({ version: 1, turns });
const WRITE = script(
  { type: 'write_file', path: 'hello.txt', content: 'hello over acp\n' },
  { type: 'final', text: 'Wrote hello.txt.' },
);
const TIMEOUT = 240_000;

interface Query {
  events: AgentEvent[];
  runDir: string;
  sessionId: string | null;
}

/** Every event of one query (schema-checked), and its run directory. */
async function query(engine: string, config: Record<string, unknown>, onEvent?: (e: AgentEvent) => void) {
  const { extra, ...rest } = config as { extra?: Record<string, unknown> };
  const events: AgentEvent[] = [];
  for await (const event of getProvider(engine).query({
    provider: engine,
    prompt: 'Do it.',
    isolation: 'require',
    ...rest,
    extra: { runRoot, timeoutMs: scaled(180_000), ...extra },
  } as never)) {
    events.push(AgentEventSchema.parse(event));
    onEvent?.(event);
  }
  const last = events.at(-1) as { diagnostics?: { runDir?: string } } | undefined;
  const runDir = last?.diagnostics?.runDir ?? '';
  const sessionId = (events.find((e) => e.type === 'session') as { sessionId?: string } | undefined)?.sessionId;
  return { events, runDir, sessionId: sessionId ?? null } satisfies Query;
}

function readJsonl<T>(file: string): T[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);
}

/** The attempt's recorded side: its RASP, fs diff and meta. */
function recorded(runDir: string, attempt = 1) {
  const audit = path.join(runDir, '.audit');
  return {
    rasp: readJsonl<RaspEvent>(path.join(audit, `rasp.${attempt}.jsonl`)),
    fsDiff: JSON.parse(fs.readFileSync(path.join(audit, `fs-diff.${attempt}.json`), 'utf8')) as FsDiff,
    meta: JSON.parse(fs.readFileSync(path.join(audit, `meta.${attempt}.json`), 'utf8')) as {
      transport?: string;
      files: Record<string, string>;
      completion: { state: string; code?: string | null } | null;
    },
    client: path.join(audit, `acp-client.${attempt}.jsonl`),
  };
}

function diagnostics(rasp: readonly RaspEvent[], code: string): string[] {
  return rasp.flatMap((e) =>
    e.data.type === 'diagnostic' && e.data.diagnostic.code === code ? [e.data.diagnostic.message] : [],
  );
}

/**
 * Reports `checks` of `engine` in the test's meta, for the consistency report's ACP table; a check is `fail` until
 * the test reports it passed.
 */
function report(task: { meta: object }, engine: string, checks: AcpConformanceEntry['checks']): void {
  const meta = task.meta as Record<string, AcpConformanceEntry | undefined>;
  const entry = meta[ACP_META_KEY] ?? { engine, checks: {} };
  Object.assign(entry.checks, checks);
  meta[ACP_META_KEY] = entry;
}

const FAILED = { status: 'fail', detail: 'the test failed (see its error)' } as const;

/** The resume test's two turns. */
const RESUMED = script({ type: 'final', text: 'First answer.' }, { type: 'final', text: 'Second answer.' });

describe.for(ACP_ENGINES)('%s provider over ACP', (engine) => {
  beforeEach(({ skip }) => {
    if (MISSING[engine]) skip(MISSING[engine]!);
  });

  it(
    'a tool-using query gives the same events, tool calls, final message and fs diff as the native transport',
    async ({ task }) => {
      const native = await query(engine, { extra: { script: WRITE } });
      // codex's shared config.toml (its trust comes as `-c`): the adapter's own codex must not write into it.
      const trust = (recorded(native.runDir).meta as { trust?: { config_path: string } | null }).trust;
      const codexConfig = engine === 'codex' && trust ? trust.config_path : null;
      const readConfig = () =>
        codexConfig && fs.existsSync(codexConfig) ? fs.readFileSync(codexConfig, 'utf8') : null;
      const configBefore = readConfig();
      const acp = await query(engine, { extra: { script: WRITE, transport: 'acp' } });
      expect(readConfig()).toBe(configBefore);
      const side = (q: Query): TransportRun => {
        const { rasp, fsDiff } = recorded(q.runDir);
        return { events: q.events, rasp, fsDiff };
      };
      const compared = compareTransports(side(native), side(acp));
      report(task, engine, compared);
      expect(compared, JSON.stringify(acp.events).slice(0, 3000)).toEqual({
        eventTypes: { status: 'pass' },
        toolCalls: { status: 'pass' },
        finalMessage: { status: 'pass' },
        fsDiff: { status: 'pass' },
      });
      expect(acp.events.at(-1)).toMatchObject({ type: 'complete', result: { success: true } });
      expect(fs.readFileSync(path.join(acp.runDir, 'hello.txt'), 'utf8')).toBe('hello over acp\n');
      // The model is called by the same version of the engine over ACP as natively (claude's adapter runs it through
      // CLAUDE_CODE_EXECUTABLE, not its SDK's own Claude Code), except codex: its adapter embeds codex 0.137.0.
      const agents = (q: Query) =>
        new Set(
          readJsonl<{ headers: Record<string, string> }>(path.join(q.runDir, '.audit', 'model-requests.1.jsonl')).map(
            (r) => /\d+\.\d+\.\d+/.exec(r.headers['user-agent'] ?? '')?.[0],
          ),
        );
      expect([...agents(acp)]).toEqual(engine === 'codex' ? ['0.137.0'] : [...agents(native)]);
      // Both directions are in the audit; the meta says the transport and lists the client's file.
      const { meta, client } = recorded(acp.runDir);
      expect(meta.transport).toBe('acp');
      expect(meta.files.acpClient).toBe('.audit/acp-client.1.jsonl');
      const sent = readJsonl<{ method?: string }>(client).map((m) => m.method ?? 'response');
      expect(sent.slice(0, 3)).toEqual(['initialize', 'session/new', 'session/prompt']);
      expect(fs.readFileSync(path.join(acp.runDir, '.audit', 'stdout.1.log'), 'utf8')).toContain('"stopReason"');
      // `translate` reads the run with the ACP parser: the same tool call and final message as the live attempt.
      const { stdout } = await execa('node', [BIN, 'translate', acp.runDir, '--summary'], {
        env: { ...process.env, AGENT_HARNESS_RUN_ROOT: runRoot },
      });
      const summary = JSON.parse(stdout) as { final_message: string | null; tool_calls: number; completed: boolean };
      expect(summary).toMatchObject({
        tool_calls: 1,
        completed: true,
        final_message: expect.stringContaining('Wrote hello.txt.'),
      });
    },
    TIMEOUT,
  );

  it(
    'permission requests are answered from the agent options: allowed when bypassing, rejected under normal',
    async ({ task }) => {
      report(task, engine, { permissionAllow: FAILED, permissionReject: FAILED });
      const allowed = await query(engine, { extra: { script: WRITE, transport: 'acp' } });
      expect(fs.existsSync(path.join(allowed.runDir, 'hello.txt'))).toBe(true);
      const allowedRasp = recorded(allowed.runDir).rasp;
      // An engine that asks (gemini) is allowed; one whose config already allows (opencode) does not ask.
      for (const answer of diagnostics(allowedRasp, 'ACP_PERMISSION_ANSWERED')) expect(answer).toMatch(/^allow /);
      report(task, engine, { permissionAllow: { status: 'pass' } });

      const rejected = await query(engine, {
        permissionMode: 'normal',
        disallowedTools: [],
        extra: { script: WRITE, transport: 'acp' },
      });
      expect(fs.existsSync(path.join(rejected.runDir, 'hello.txt'))).toBe(false);
      const answers = diagnostics(recorded(rejected.runDir).rasp, 'ACP_PERMISSION_ANSWERED');
      expect(answers.length, JSON.stringify(rejected.events).slice(0, 2000)).toBeGreaterThan(0);
      for (const answer of answers) expect(answer).toMatch(/^reject .*permissionMode normal/s);
      report(task, engine, { permissionReject: { status: 'pass' } });
    },
    TIMEOUT,
  );

  it(
    'an abort in the middle of a tool call sends session/cancel, ends canceled and leaves no process',
    async ({ task }) => {
      report(task, engine, { cancel: FAILED });
      const seconds = uniqueSleepSeconds();
      const controller = new AbortController();
      const { events, runDir } = await query(
        engine,
        {
          signal: controller.signal,
          extra: {
            script: script({ type: 'shell', command: foregroundSleep(seconds) }, { type: 'final', text: 'Slept.' }),
            transport: 'acp',
          },
        },
        (event) => {
          if (event.type === 'message' && event.content?.kind === 'tool_use') controller.abort();
        },
      );
      expect(controller.signal.aborted, JSON.stringify(events).slice(0, 2000)).toBe(true);
      expect(events.at(-1)).toMatchObject({ type: 'error', error: expect.stringContaining('aborted') });
      const { meta, client } = recorded(runDir);
      expect(meta.completion).toMatchObject({ state: 'failed' });
      expect(JSON.stringify(meta.completion)).toContain('ENGINE_CANCELED');
      expect(readJsonl<{ method?: string }>(client).map((m) => m.method)).toContain('session/cancel');
      expect(pidsWithMarker(seconds)).toEqual([]);
      expect(pidsWithMarker(runDir)).toEqual([]);
      report(task, engine, { cancel: { status: 'pass' } });
    },
    TIMEOUT,
  );

  it(
    'MCP servers go to session/new: a stdio server of the query is called over ACP',
    async () => {
      const { events, runDir } = await query(engine, {
        mcpServers: [{ name: 'echoer', command: [process.execPath, path.resolve('fixtures/mcp/echo-server.mjs')] }],
        extra: {
          transport: 'acp',
          script: script(
            { type: 'mcp_tool', server: 'echoer', tool: 'echo', arguments: { text: 'over-acp-mcp' } },
            { type: 'final', text: 'Echoed.' },
          ),
        },
      });
      expect(events.at(-1), JSON.stringify(events).slice(0, 3000)).toMatchObject({
        type: 'complete',
        result: { success: true },
      });
      const { client, rasp } = recorded(runDir);
      const opened = readJsonl<{ method?: string; params?: { mcpServers?: Array<{ name: string }> } }>(client).find(
        (m) => m.method === 'session/new',
      );
      expect(opened?.params?.mcpServers?.map((server) => server.name)).toEqual(['echoer']);
      const outputs = rasp.flatMap((e) => (e.data.type === 'engine.tool.result' ? [e.data.output ?? ''] : []));
      expect(outputs.join('\n')).toContain('over-acp-mcp');
    },
    TIMEOUT,
  );

  it(
    'a session resumes by its id over ACP (session/load, then the prompt)',
    async ({ task }) => {
      report(task, engine, { resume: FAILED });
      const first = await query(engine, { extra: { script: RESUMED, transport: 'acp' } });
      expect(first.sessionId).toEqual(expect.any(String));
      // Loaded right after it was recorded, nearly always in the same minute: gemini 0.61 would then write its new
      // chat record over the session's own file (its name is the minute's) and not find the session, unless the
      // harness set that file aside first (gemini/session-store.ts).
      const second = await query(engine, {
        prompt: 'And again.',
        resumeSessionId: first.sessionId,
        extra: { script: RESUMED, transport: 'acp' },
      });
      expect(second.runDir).toBe(first.runDir);
      const sent = readJsonl<{ method?: string }>(recorded(second.runDir, 2).client).map((m) => m.method);
      expect(sent.slice(0, 3)).toEqual(['initialize', 'session/load', 'session/prompt']);
      const outcome = second.events.at(-1);
      expect(outcome, JSON.stringify(second.events).slice(0, 2000)).toMatchObject({
        type: 'complete',
        result: { success: true },
      });
      const messages = recorded(second.runDir, 2).rasp.flatMap((e) =>
        e.data.type === 'engine.assistant.message' && e.data.final ? [e.data.text] : [],
      );
      // The replayed history of session/load is not the attempt's: only the second answer is.
      expect(messages).toHaveLength(1);
      expect(messages[0]).toContain('Second answer.');
      expect(messages[0]).not.toContain('First answer.');
      // `translate` of the attempt skips the replay as the live attempt did (the prompt's line, in the client's file).
      const { stdout } = await execa('node', [BIN, 'translate', second.runDir, '--summary'], {
        env: { ...process.env, AGENT_HARNESS_RUN_ROOT: runRoot },
      });
      const summary = JSON.parse(stdout) as { final_message: string | null };
      expect(summary.final_message).toContain('Second answer.');
      expect(summary.final_message).not.toContain('First answer.');
      // An engine that stays running once its stdin closes is stopped as soon as its own store holds the turn (codex),
      // on the new session and on the loaded one (whose store held one turn already), not after the grace; the loaded
      // session had the first turn to load, so that stop cut nothing short. claude-agent-acp stays too, but claude's
      // transcript records no turn end: the grace stops it. The others exit when their stdin closes.
      const stops = [1, 2].map((attempt) => diagnostics(recorded(first.runDir, attempt).rasp, 'ACP_ENGINE_STOPPED'));
      if ((await loadEngine(engine)).acp?.staysAfterStdinCloses)
        expect(stops).toEqual([
          [expect.stringMatching(/once its session store held the turn \(turn ends: 1\)/)],
          [expect.stringMatching(/once its session store held the turn \(turn ends: 2\)/)],
        ]);
      else if (engine === 'claude')
        expect(stops).toEqual([
          [expect.stringMatching(/it had not exited$/)],
          [expect.stringMatching(/it had not exited$/)],
        ]);
      else expect(stops).toEqual([[], []]);
      report(task, engine, { resume: { status: 'pass' } });
    },
    TIMEOUT,
  );
});
