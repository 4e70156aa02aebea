/**
 * `agent-harness acp <engine> [options]`: the harness as an Agent Client Protocol agent on stdio (src/acp/). An
 * editor starts it as its agent server; every prompt is an audited, isolated attempt of the engine. Stdout carries
 * JSON-RPC only: every log line goes to stderr.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { engineIds, requireEngineId } from '../engines/registry.js';
import type { EngineId, IsolationMode, ModelMode } from '../protocol/index.js';
import { resolveHarnessPaths } from '../runtime/paths.js';
import { collect, onlySkillsOf, parseIsolationMode, parseModelMode, parsePositiveInt } from './options.js';
import type { CliStreams } from './output.js';

/** Options of `acp`. */
export interface AcpCommandOptions {
  model?: ModelMode;
  script?: string;
  isolation?: IsolationMode;
  runRoot?: string;
  timeoutMs?: number;
  onlySkills?: string[];
}

/** Serves `engine` over ACP on this process's stdin/stdout until the client closes the connection. */
export async function acpCommand(
  streams: CliStreams,
  engine: string,
  options: AcpCommandOptions,
  version: string,
): Promise<number> {
  requireEngineId(engine);
  // Loaded here: `--help` must not load the SDK, the run store or the engines.
  const [{ Readable, Writable }, { ndJsonStream }, { createAcpAgent }, { loadModelScript }] = await Promise.all([
    import('node:stream'),
    import('../engines/acp/sdk.js').then(({ loadAcpSdk }) => loadAcpSdk()),
    import('../acp/agent.js'),
    import('../model/script.js'),
  ]);
  const paths = resolveHarnessPaths(options.runRoot ? { runRoot: path.resolve(options.runRoot) } : {});
  const modelMode = options.model ?? 'scripted';
  // A bad script is refused now, before an editor sees an agent.
  const script =
    modelMode === 'scripted' && options.script
      ? await loadModelScript(path.resolve(paths.projectRoot, options.script))
      : null;
  const log = (line: string): void => {
    streams.stderr.write(`agent-harness acp: ${line}\n`);
  };
  const acp = createAcpAgent({
    engine: engine as EngineId,
    paths,
    modelMode,
    script,
    version,
    log,
    ...(options.isolation ? { isolation: options.isolation } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...onlySkillsOf(options.onlySkills),
  });
  const stream = ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  log(`serving ${engine} over ACP on stdio (model ${modelMode}, run root ${paths.runRoot})`);
  const connection = acp.app.connect(stream);
  let signalled: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    signalled = signal;
    log(`${signal}: cancelling the running prompts and sealing their audits`);
    acp.cancelAll();
    connection.close();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await connection.closed.catch(() => undefined);
    // The client went away (or a signal): a running attempt is cancelled, and its audit sealed before the exit.
    acp.cancelAll();
    await acp.settled();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  log('connection closed');
  return signalled ? 130 : 0;
}

/** Registers `acp`. */
export function registerAcp(
  program: Command,
  streams: CliStreams,
  setExit: (code: number) => void,
  version: string,
): void {
  program
    .command('acp')
    .description('serve an engine to an editor as an Agent Client Protocol agent on stdio (each prompt is an attempt)')
    .argument('<engine>', `the engine: ${engineIds().join(', ')}`)
    .option(
      '--model <mode>',
      'scripted (default: the built-in model on 127.0.0.1) or live (the vendor, with your key)',
      parseModelMode,
    )
    .option('--script <file>', 'JSON model script for the scripted model (see docs/scripted-model.md)')
    .option(
      '--isolation <mode>',
      'namespaces for the engine: auto (default), require (refuse without them), off',
      parseIsolationMode,
    )
    .option('--run-root <dir>', 'where the runs go (default: AGENT_HARNESS_RUN_ROOT, else <data dir>/harness_runs)')
    .option(
      '--timeout-ms <ms>',
      'kill the engine after this many milliseconds per prompt',
      parsePositiveInt('--timeout-ms'),
    )
    .option('--only-skills <names>', 'inject only these skills (comma-separated, repeatable)', collect)
    .addHelpText(
      'after',
      `
Speaks ACP (JSON-RPC on stdin/stdout; logs on stderr). Each session/new makes a run: a fresh directory under the
run root, whose handle is the ACP session id (the editor's cwd is recorded, not used: the engine works in the run
directory). Each session/prompt is one audited, isolated attempt: the first starts the engine's session, later ones
resume it. session/cancel stops the engine and answers "cancelled"; session/load <handle> reopens a run.

Examples:
  agent-harness acp codex --script my-script.json
  agent-harness acp claude --model live --run-root /tmp/acp-runs

Zed (settings.json):
  "agent_servers": { "agent-harness codex": { "command": "npx", "args": ["agent-harness", "acp", "codex"] } }

See docs/acp.md.`,
    )
    .action(async (engine: string, options: AcpCommandOptions) => {
      setExit(await acpCommand(streams, engine, options, version));
    });
}
