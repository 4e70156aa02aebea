/**
 * The engine registry is the one list of engines, and every engine on it implements the whole contract
 * (docs/adding-an-engine.md): its adapter's members (its facts declared once), a parser that never throws, a translation
 * that loads alone, a tool table through which the scripted model server renders every intent, and a CLI command.
 * Then a throwaway sixth engine (tests/helpers/sixth-engine/: a real process speaking JSON lines) is registered at
 * run time and the CLI, `translate`, the providers and the model server pick it up, no other file touched.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram, runCli } from '../../src/cli/main.js';
import type { EngineAdapter, EngineFacts } from '../../src/engines/engine.js';
import {
  engineIds,
  isEngineId,
  loadEngine,
  loadEngineFacts,
  loadToolTable,
  loadTranslationAdapter,
  registerEngine,
} from '../../src/engines/registry.js';
import { isAgentHarnessError } from '../../src/errors/index.js';
import {
  MODEL_TURN_TYPES,
  parseModelScript,
  turns,
  useSkillCommand,
  writeFileCommand,
  type ModelTurn,
} from '../../src/model/script.js';
import { WIRE_APIS, type ModelServer } from '../../src/model/server.js';
import { startModelServer } from '../../src/engines/model-server.js';
import type { EngineToolTable, ToolCall } from '../../src/model/tool-table.js';
import type { WireApiId } from '../../src/model/wire-api.js';
import { FailureCategorySchema, ParsedEventSchema, type AgentEvent } from '../../src/protocol/index.js';
import { getProvider, providerNames } from '../../src/providers/index.js';
import { SIXTH_CLI, SIXTH_ID, sixthEntry } from '../helpers/sixth-engine/index.js';

const STREAMS_DIR = path.resolve(import.meta.dirname, '..', '..', 'fixtures', 'streams');
/** The members every adapter has (docs/adding-an-engine.md); the optional ones mark optional capabilities. */
const REQUIRED_MEMBERS = [
  'id',
  'executableName',
  'packageName',
  'liveEnvKeys',
  'stdin',
  'skillRoot',
  'tools',
  'errorPatterns',
  'modelFlag',
  'createParser',
  'prepare',
  'buildStartArgs',
] as const satisfies readonly (keyof EngineAdapter)[];
/** Every member of {@link EngineFacts} (the record makes the compiler name one added there and missing here). */
const FACT_MEMBERS = Object.keys({
  id: true,
  executableName: true,
  packageName: true,
  liveEnvKeys: true,
  stdin: true,
  skillRoot: true,
  tools: true,
  errorPatterns: true,
  modelFlag: true,
  resumeFlags: true,
  nativeResumeCommand: true,
  bookkeepingPaths: true,
  initMessage: true,
  turnScopedIds: true,
  cacheReportedApart: true,
  acpNotice: true,
  mcpStartupUnbounded: true,
  createParser: true,
} satisfies Record<keyof EngineFacts, true>) as (keyof EngineFacts)[];
/** The script's tool-call turns: the model server must render each on every engine. */
const TOOL_INTENTS = ['shell', 'write_file', 'use_skill', 'mcp_tool'];
/** The working directory the requests state (engines whose write tool takes an absolute path need it). */
const CWD = '/tmp/agent-harness-registry-cwd';
const BUILT_IN = engineIds();

/** The program's command names (the CLI, in this process). */
function cliCommands(): string[] {
  return buildProgram({ stdout: new PassThrough(), stderr: new PassThrough() }, () => undefined).commands.map(
    (command) => command.name(),
  );
}

/** Checks the whole contract of engine `id` that needs no folder: adapter, parser, translation, CLI. */
async function checkEngine(id: string): Promise<void> {
  const adapter = await loadEngine(id);
  expect(adapter.id).toBe(id);
  expect(adapter.executableName).toMatch(/^[A-Za-z0-9._-]+$/);
  expect(adapter.packageName === null || typeof adapter.packageName === 'string').toBe(true);
  // `use_skill`'s shell fallback reads `.*/skills/<name>/SKILL.md`: every skill root has that form.
  expect(adapter.skillRoot).toMatch(/^\.[A-Za-z0-9_-]+\/skills$/);
  expect(WIRE_APIS.map((wire) => wire.id)).toContain(adapter.tools.wire);
  expect(['ignore', 'pipe']).toContain(adapter.stdin);
  expect(adapter.liveEnvKeys.every((key) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(key))).toBe(true);
  for (const row of adapter.errorPatterns) {
    expect(row.pattern).toBeInstanceOf(RegExp);
    expect(FailureCategorySchema.safeParse(row.category).success, `${id}: category ${row.category}`).toBe(true);
    expect(row.code).toMatch(/^[A-Z][A-Z0-9_]+$/);
  }
  expect(adapter.modelFlag).toMatch(/^-{1,2}[a-z][a-z-]*$/);
  if (adapter.resumeFlags)
    expect(
      adapter.resumeFlags.flatMap((flag) => flag.names),
      `${id}: a resume keeps the model`,
    ).toContain(adapter.modelFlag);
  expect(typeof adapter.prepare).toBe('function');
  expect(adapter.buildStartArgs({ prompt: 'say hi', passthrough: [] })).toContain('say hi');
  expect(adapter.buildStartArgs({ prompt: null, passthrough: ['--x', 'y z'] })).toEqual(['--x', 'y z']);
  const resume = adapter.buildResumeArgs?.({ sessionId: 'S-1', message: 'next' });
  if (resume)
    expect(
      resume.some((arg) => arg.includes('S-1')) && resume.includes('next'),
      `${id}: resume argv ${JSON.stringify(resume)}`,
    ).toBe(true);
  // The tool table is the adapter's, and the registry gives the same.
  expect(adapter.tools).toEqual(await loadToolTable(id));
  expect(adapter.tools.engine).toBe(id);
  expect(adapter.tools.shell.length).toBeGreaterThan(0);
  // The translation loads alone and carries the adapter's parser and error patterns.
  const translation = await loadTranslationAdapter(id);
  expect(translation.id).toBe(id);
  expect(translation.errorPatterns).toEqual(adapter.errorPatterns);
  expect(translation.turnScopedIds).toBe(adapter.turnScopedIds);
  expect(translation.cacheReportedApart).toBe(adapter.cacheReportedApart);
  expect(translation.acpNotice).toBe(adapter.acpNotice);
  expect(typeof translation.createParser).toBe('function');
  expect(cliCommands()).toContain(id);
}

/** A line an engine might print, or garbage. */
const LINE = fc.oneof(
  fc.string(),
  fc.json(),
  fc
    .record({
      type: fc.oneof(
        fc.constantFrom(
          'session',
          'thread.started',
          'item.completed',
          'turn.completed',
          'result',
          'message',
          'tool',
          'end',
          'step_finish',
          'init',
          'assistant',
          'user',
          'error',
        ),
        fc.anything(),
      ),
      id: fc.anything(),
      text: fc.anything(),
      item: fc.anything(),
      message: fc.anything(),
      part: fc.anything(),
      status: fc.anything(),
    })
    .map((value) => JSON.stringify(value)),
  fc.constantFrom(
    '<Execution Info>',
    '</Execution Info>',
    '{"session-id": 3}',
    '{',
    '[]',
    'null',
    '\u0000',
    '{"type":',
  ),
);

/** Feeds random lines to a fresh parser of `id`: it never throws, and everything it gives is a valid event or diagnostic. */
async function checkParserNeverThrows(id: string): Promise<void> {
  const translation = await loadTranslationAdapter(id);
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(fc.constantFrom('stdout', 'stderr', 'pty') as fc.Arbitrary<'stdout' | 'stderr' | 'pty'>, LINE),
        { maxLength: 30 },
      ),
      (lines) => {
        const parser = translation.createParser();
        const outputs = [...lines.flatMap(([stream, text]) => parser.line(stream, text)), ...parser.end()];
        for (const output of outputs) {
          if (output.type === 'diagnostic') expect(typeof output.diagnostic.code).toBe('string');
          else expect(ParsedEventSchema.safeParse(output).success, `${id}: ${JSON.stringify(output)}`).toBe(true);
        }
      },
    ),
    { numRuns: 150 },
  );
}

async function post(url: string, body: unknown): Promise<Record<string, any>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Record<string, any>;
}

const USER = `Do it. Working directory: ${CWD}`;

/** For each wire the model server speaks: a first request offering `offered` tools, and the tool call answered. */
const ASK: Record<WireApiId, (server: ModelServer, offered: readonly string[]) => Promise<ToolCall>> = {
  'openai-responses': async (server, offered) => {
    const body = await post(`${server.url}/v1/responses`, {
      model: 'm',
      stream: false,
      input: [{ role: 'user', content: USER }],
      tools: offered.map((name) => ({ type: 'function', name })),
    });
    const call = body.output.find((item: { type: string }) => item.type === 'function_call');
    return { name: call.namespace ? `${call.namespace}__${call.name}` : call.name, args: JSON.parse(call.arguments) };
  },
  'openai-chat': async (server, offered) => {
    const body = await post(`${server.url}/v1/chat/completions`, {
      model: 'm',
      messages: [{ role: 'user', content: USER }],
      tools: offered.map((name) => ({ type: 'function', function: { name } })),
    });
    const call = body.choices[0].message.tool_calls[0].function;
    return { name: call.name, args: JSON.parse(call.arguments) };
  },
  'anthropic-messages': async (server, offered) => {
    const body = await post(`${server.url}/v1/messages`, {
      model: 'm',
      max_tokens: 100,
      messages: [{ role: 'user', content: USER }],
      tools: offered.map((name) => ({ name, input_schema: { type: 'object' } })),
    });
    const call = body.content.find((block: { type: string }) => block.type === 'tool_use');
    return { name: call.name, args: call.input };
  },
  gemini: async (server, offered) => {
    const body = await post(`${server.url}/v1beta/models/m:generateContent`, {
      contents: [{ role: 'user', parts: [{ text: USER }] }],
      tools: [{ functionDeclarations: offered.map((name) => ({ name })) }],
    });
    return body.candidates[0].content.parts.find((part: { functionCall?: unknown }) => part.functionCall).functionCall;
  },
};

/** The call a table's engine should get for `intent` (its own tool, else its shell tool with the intent's command). */
function expectedCall(table: EngineToolTable, intent: string): ToolCall {
  const shell = (command: string): ToolCall => {
    const tool = table.shell[0]!;
    return {
      name: tool.tool,
      args: { [tool.commandKey]: tool.argv ? [...tool.argv, command] : command, ...tool.extra },
    };
  };
  if (intent === 'shell') return shell('echo hi');
  if (intent === 'write_file') {
    if (!table.write) return shell(writeFileCommand('a.txt', 'x'));
    return {
      name: table.write.tool,
      args: { [table.write.pathKey]: table.write.absolute ? `${CWD}/a.txt` : 'a.txt', [table.write.contentKey]: 'x' },
    };
  }
  if (intent === 'use_skill')
    return table.skill
      ? { name: table.skill.tool, args: { [table.skill.nameKey]: 'demo-hello' } }
      : shell(useSkillCommand('demo-hello'));
  return { name: 'mcp__echo__echo', args: { text: 'hi' } };
}

const TURN_OF: Record<string, ModelTurn> = {
  shell: turns.shell('echo hi'),
  write_file: turns.writeFile('a.txt', 'x'),
  use_skill: turns.useSkill('demo-hello'),
  mcp_tool: turns.mcpTool('echo', 'echo', { text: 'hi' }),
};

/** Every intent, asked of a model server that was given no tables (so it serves the registry's), as engine `id` offers its tools. */
async function checkToolTable(id: string): Promise<void> {
  const table = await loadToolTable(id);
  const offered = [
    ...table.shell.map((tool) => tool.tool),
    ...(table.write ? [table.write.tool] : []),
    ...(table.skill ? [table.skill.tool] : []),
    'mcp__echo__echo',
  ];
  const server = await startModelServer();
  try {
    for (const intent of TOOL_INTENTS) {
      server.setScript(parseModelScript({ version: 1, turns: [TURN_OF[intent]] }));
      expect(await ASK[table.wire](server, offered), `${id}: ${intent}`).toEqual(expectedCall(table, intent));
    }
  } finally {
    await server.close();
  }
}

describe('every registered engine implements the whole contract', () => {
  it('the script has no tool intent the contract does not check', () => {
    // Dynamic turns (branch, if_skill_offered, follow_skill) resolve into the turns checked here (follow_skill into
    // use_skill and shell calls), so they bring no tool of their own.
    const notTools = [
      'text',
      'final',
      'error',
      'stall',
      'malformed',
      'drop',
      'branch',
      'if_skill_offered',
      'follow_skill',
    ];
    expect(MODEL_TURN_TYPES.filter((type) => !notTools.includes(type)).sort()).toEqual([...TOOL_INTENTS].sort());
  });

  it.each(BUILT_IN)(
    '%s: its adapter has every required member, its facts are its own, and recorded streams',
    async (id) => {
      const adapter = await loadEngine(id);
      const missing = REQUIRED_MEMBERS.filter((member) => adapter[member] === undefined);
      expect(missing, `the ${id} adapter lacks ${missing.join(', ')}`).toEqual([]);
      // Each fact is declared once: the facts the registry loads alone are the very values of the adapter.
      const facts = await loadEngineFacts(id);
      for (const member of FACT_MEMBERS) expect(adapter[member], `${id}: ${member}`).toBe(facts[member]);
      const notFacts = Object.keys(facts).filter((key) => !(FACT_MEMBERS as string[]).includes(key));
      expect(notFacts, `${id}: facts.ts holds what is no fact`).toEqual([]);
      // Recorded native output, which the parser, translation, golden and property tests read.
      const streams = fs.existsSync(path.join(STREAMS_DIR, id))
        ? fs.readdirSync(path.join(STREAMS_DIR, id)).filter((name) => /\.(jsonl|log)$/.test(name))
        : [];
      expect(streams.length, `fixtures/streams/${id}/ holds no recorded stream (*.jsonl, *.log)`).toBeGreaterThan(0);
    },
  );

  it.each(BUILT_IN)('%s: adapter, translation, tool table and CLI command are well-formed', async (id) => {
    await checkEngine(id);
  });

  it.each(BUILT_IN)('%s: its parser never throws on garbage', async (id) => {
    await checkParserNeverThrows(id);
  });

  it.each(BUILT_IN)('%s: the model server renders every intent with its tools', async (id) => {
    await checkToolTable(id);
  });

  it('an unknown engine is ENGINE_UNKNOWN everywhere ids come in, naming the registered ones', async () => {
    for (const load of [loadEngine, loadTranslationAdapter, loadToolTable]) {
      const error = await load('cursor').then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAgentHarnessError(error, 'ENGINE_UNKNOWN')).toBe(true);
      expect((error as Error).message).toContain(BUILT_IN.join(', '));
    }
    expect(() => getProvider('cursor')).toThrow(/Unknown provider "cursor"/);
    expect(() => registerEngine({ ...sixthEntry, id: 'codex' })).toThrow(/registered already/);
    expect(() => registerEngine({ ...sixthEntry, id: 'Not-An-Id' })).toThrow(/lower-case letters/);
  });
});

describe('a sixth engine registered at run time', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-sixth-'));
  const saved = { ...process.env };
  let unregister: () => void = () => undefined;

  beforeAll(() => {
    unregister = registerEngine(sixthEntry);
    const prefix = path.join(tmp, 'prefix');
    fs.mkdirSync(path.join(prefix, 'bin'), { recursive: true });
    fs.copyFileSync(SIXTH_CLI, path.join(prefix, 'bin', 'sixth-agent'));
    fs.chmodSync(path.join(prefix, 'bin', 'sixth-agent'), 0o755);
    Object.assign(process.env, {
      SKILL_RUNNER_DATA_DIR: path.join(tmp, 'data'),
      SKILL_RUNNER_NPM_PREFIX: prefix,
      AGENT_HARNESS_SKILL_ROOTS: path.join(tmp, 'no-skills'),
      NO_COLOR: '1',
    });
  });
  afterAll(() => {
    unregister();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** Runs the CLI in this process (where the engine is registered). */
  async function cli(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
    const out = new PassThrough();
    const err = new PassThrough();
    let stdout = '';
    let stderr = '';
    out.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    err.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const status = await runCli(args, { stdout: out, stderr: err });
    return { status, stdout, stderr };
  }

  it('the registry lists it and it implements the whole contract', async () => {
    expect(engineIds()).toEqual([...BUILT_IN, SIXTH_ID]);
    expect(isEngineId(SIXTH_ID)).toBe(true);
    await checkEngine(SIXTH_ID);
    await checkParserNeverThrows(SIXTH_ID);
    await checkToolTable(SIXTH_ID);
    expect(providerNames()).toContain(SIXTH_ID);
    expect(getProvider(SIXTH_ID).name).toBe(SIXTH_ID);
  });

  it('translate reads its recorded output', async () => {
    const stdout = path.join(tmp, 'sixth.stdout.jsonl');
    fs.writeFileSync(
      stdout,
      [
        '{"type":"session","id":"S-6"}',
        '{"type":"tool","id":"c1","name":"run","input":{"cmd":"ls"}}',
        '{"type":"result","id":"c1","exit":0,"output":""}',
        'noise',
        '{"type":"message","text":"All done."}',
        '{"type":"end","status":"completed"}',
        '',
      ].join('\n'),
    );
    const run = await cli(['translate', '--engine', SIXTH_ID, '--stdout', stdout, '--summary']);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      engine: SIXTH_ID,
      session_id: 'S-6',
      final_message: 'All done.',
      tool_calls: 1,
    });
  });

  it('the CLI starts and resumes it against the scripted model, which calls its own tools', async () => {
    const script = path.join(tmp, 'script.json');
    fs.writeFileSync(
      script,
      JSON.stringify({
        version: 1,
        turns: [
          { type: 'write_file', path: 'out.txt', content: 'hi from six' },
          { type: 'final', text: 'Wrote out.txt.' },
          { type: 'shell', command: 'cat out.txt > copy.txt' },
          { type: 'final', text: 'Copied.' },
        ],
      }),
    );
    const start = await cli(['start', '--script', script, '--prompt', 'write it', SIXTH_ID]);
    expect(start.status, start.stderr).toBe(0);
    const runDir = /^Run directory: (.+)$/m.exec(start.stderr + start.stdout)?.[1]?.trim();
    const handle = /^Run handle: (\S+)$/m.exec(start.stderr + start.stdout)?.[1];
    expect(runDir && handle, start.stderr).toBeTruthy();
    // `put` is the sixth engine's own write tool: the model server found it in the registry.
    expect(fs.readFileSync(path.join(runDir!, 'out.txt'), 'utf8')).toBe('hi from six');
    const resumed = await cli(['resume', handle!, 'copy it']);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(fs.readFileSync(path.join(runDir!, 'copy.txt'), 'utf8')).toBe('hi from six');
  });

  it('its provider runs a query, with the model picked by its own model flag', async () => {
    const runRoot = path.join(tmp, 'provider-runs');
    const events: AgentEvent[] = [];
    for await (const event of getProvider(SIXTH_ID).query({
      provider: SIXTH_ID,
      prompt: 'hi',
      model: 'six-model',
      extra: { runRoot, script: { version: 1, turns: [{ type: 'final', text: 'Hi from six.' }] } },
    }))
      events.push(event);
    expect(events.at(-1)).toMatchObject({ type: 'complete', result: { success: true } });
    expect(events.find((event) => event.type === 'session')?.sessionId).toBeTruthy();
    const [runDir] = fs.readdirSync(runRoot).filter((name) => name.includes(`-${SIXTH_ID}-`));
    const meta = JSON.parse(fs.readFileSync(path.join(runRoot, runDir!, '.audit', 'meta.1.json'), 'utf8')) as {
      command: { argv: string[] };
    };
    expect(meta.command.argv.slice(-2)).toEqual(['--model', 'six-model']);
  });

  it('unregistered, it is gone from the registry, the CLI and the providers', async () => {
    unregister();
    expect(engineIds()).toEqual(BUILT_IN);
    expect(cliCommands()).not.toContain(SIXTH_ID);
    expect(
      isAgentHarnessError(
        await loadEngine(SIXTH_ID).then(
          () => null,
          (e: unknown) => e,
        ),
        'ENGINE_UNKNOWN',
      ),
    ).toBe(true);
    expect(() => getProvider(SIXTH_ID)).toThrow(/Unknown provider/);
  });
});
