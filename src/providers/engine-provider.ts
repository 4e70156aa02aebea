/**
 * The provider of an engine (seed 003): every `query` is one audited attempt of the real CLI — a run directory
 * with the same audit, parsers and verdict as the CLI and the Vitest fixtures — streamed as AgentEvents while the
 * engine runs. The model is the scripted one by default (`extra.script`), the vendor's with `extra.model: 'live'`, or a
 * cassette with `extra.model: 'record' | 'replay' | 'auto'` and `extra.cassette` (a file; `extra.upstream` for
 * recording elsewhere than the vendor; `extra.forkAt`, `extra.forkTo`, `extra.forkCassette` to fork a replay; `config.apiKey` is the key recording uses).
 *
 * Permission mode, tool allow/deny lists, system prompt, turn limit and MCP servers are mapped onto each engine's
 * own controls (`src/engines/<id>/agent-options.ts`); what an engine cannot do is refused with
 * ENGINE_CAPABILITY_UNAVAILABLE naming the engine and the capability before anything runs — never silently ignored.
 */
import { streamAttempt } from '../core/attempt-stream.js';
import type { AttemptRequest, AttemptTransport } from '../core/attempt-request.js';
import { resumeRequest } from '../core/session.js';
import { loadEngine } from '../engines/registry.js';
import { withCarriedFlags } from '../engines/resume-flags.js';
import { checkAgentOptions } from '../engines/agent-options.js';
import { isCassetteMode } from '../cassette/mode.js';
import { KEY_VARIABLES } from '../cassette/record.js';
import { AgentHarnessError } from '../errors/index.js';
import type { AgentEvent, AgentOptions, EngineId } from '../protocol/index.js';
import { resolveHarnessPaths } from '../runtime/paths.js';
import { parseProviderConfig, type AgentProviderConfig, type ResolvedAgentProviderConfig } from './config.js';
import { createAgentEventMapper, endEventsOf } from './events.js';
import type { AgentProvider } from './types.js';

/** The config's agent options (what each engine maps onto its own controls). */
function agentOptionsOf(config: ResolvedAgentProviderConfig): AgentOptions {
  return {
    permissionMode: config.permissionMode,
    allowedTools: config.allowedTools,
    disallowedTools: config.disallowedTools,
    systemPrompt: config.systemPrompt,
    maxTurns: config.maxTurns,
    mcpServers: config.mcpServers,
  };
}

/**
 * `extra.transport`: `native` (default) or `acp` (the engine's ACP mode, the harness as the client; docs/acp.md).
 * CONFIG_INVALID for anything else; ENGINE_CAPABILITY_UNAVAILABLE for `acp` on an engine without an ACP mode, or with
 * `model` (the ACP command takes no model flag yet).
 */
export function transportOf(engine: EngineId, config: ResolvedAgentProviderConfig): AttemptTransport {
  const transport = config.extra?.transport ?? 'native';
  if (transport !== 'native' && transport !== 'acp')
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `AgentProviderConfig.extra.transport must be 'native' or 'acp', not ${JSON.stringify(transport)}.`,
      { details: { field: 'extra.transport' } },
    );
  if (transport === 'acp' && config.model)
    throw new AgentHarnessError(
      'ENGINE_CAPABILITY_UNAVAILABLE',
      `${engine} over transport 'acp' takes no model (${JSON.stringify(config.model)}) yet; drop model, or use transport 'native'.`,
      { details: { engine, capability: 'acp.model' } },
    );
  return transport;
}

async function buildRequest(engine: EngineId, config: ResolvedAgentProviderConfig): Promise<AttemptRequest> {
  const adapter = await loadEngine(engine);
  const extra = config.extra ?? {};
  const transport = transportOf(engine, config);
  const paths = resolveHarnessPaths(typeof extra.runRoot === 'string' ? { runRoot: extra.runRoot } : {});
  const live = extra.model === 'live';
  const taped = isCassetteMode(extra.model);
  const keyVariable = live ? adapter.liveEnvKeys[0] : taped ? KEY_VARIABLES[adapter.tools.wire][0] : undefined;
  const hostEnv = config.apiKey && keyVariable ? { ...process.env, [keyVariable]: config.apiKey } : process.env;
  const common = {
    paths,
    engine,
    modelMode: live ? ('live' as const) : taped ? (extra.model as 'record' | 'replay' | 'auto') : ('scripted' as const),
    ...(taped
      ? {
          cassette: {
            path: typeof extra.cassette === 'string' ? extra.cassette : '',
            ...(typeof extra.upstream === 'string' ? { upstream: extra.upstream } : {}),
            ...(typeof extra.strict === 'boolean' ? { strict: extra.strict } : {}),
            ...(typeof extra.pace === 'number' ? { pace: extra.pace } : {}),
            ...(typeof extra.forkAt === 'number' ? { forkAt: extra.forkAt } : {}),
            // Checked where the attempt is prepared (USAGE_ERROR for another value).
            ...(typeof extra.forkTo === 'string' ? { forkTo: extra.forkTo as 'scripted' | 'live' } : {}),
            ...(typeof extra.forkCassette === 'string' ? { forkCassette: extra.forkCassette } : {}),
          },
        }
      : {}),
    hostEnv,
    agentOptions: agentOptionsOf(config),
    ...(config.isolation ? { isolation: config.isolation } : {}),
    ...(config.signal ? { signal: config.signal } : {}),
    ...(extra.script !== undefined ? { script: extra.script as AttemptRequest['script'] } : {}),
    ...(typeof extra.timeoutMs === 'number' ? { timeoutMs: extra.timeoutMs } : {}),
    ...(config.expose ? { expose: config.expose } : {}),
    ...(transport === 'acp' ? { transport } : {}),
  };
  if (config.resumeSessionId)
    return resumeRequest({ sessionId: config.resumeSessionId, engine }, config.prompt, common);
  const args = adapter.buildStartArgs({ prompt: config.prompt, passthrough: [] });
  return {
    ...common,
    launch: 'start',
    prompt: config.prompt,
    ...(config.model
      ? { passthrough: withCarriedFlags(args, [adapter.modelFlag, config.model], adapter.resumeFlags ?? []) }
      : {}),
    ...(config.cwd ? { runDir: config.cwd } : {}),
  };
}

async function* queryEngine(engine: EngineId, input: AgentProviderConfig): AsyncGenerator<AgentEvent> {
  const config = parseProviderConfig({ ...input, provider: input.provider ?? engine });
  if (config.provider !== engine)
    throw new AgentHarnessError(
      'CONFIG_INVALID',
      `AgentProviderConfig.provider: this is the ${engine} provider, not ${config.provider}.`,
      { details: { field: 'provider' } },
    );
  // What the engine cannot do is refused before any run directory exists.
  const adapter = await loadEngine(engine);
  checkAgentOptions(adapter, agentOptionsOf(config));
  const stream = streamAttempt(await buildRequest(engine, config));
  const toAgentEvents = createAgentEventMapper(adapter.initMessage);
  for await (const event of stream) yield* toAgentEvents(event);
  const result = await stream.result;
  const diagnostics = { runId: result.runId, handle: result.handle, runDir: result.runDir };
  if (result.completion.code === 'ENGINE_CANCELED') {
    yield {
      type: 'error',
      error: `the ${engine} query was aborted; its processes were killed (audit: ${result.audit.dir})`,
      diagnostics,
    };
    return;
  }
  yield* endEventsOf(result, diagnostics);
}

/** The provider of `engine`. */
export function createEngineProvider(engine: EngineId): AgentProvider {
  return { name: engine, query: (config) => queryEngine(engine, config) };
}
