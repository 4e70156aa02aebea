/**
 * The example assistant on the command line. With --script it starts the scripted model server on 127.0.0.1
 * (no key, no network); with --base-url it talks to a live endpoint with a key from the environment.
 *
 *   npx tsx examples/assistant/main.ts --script examples/assistant/demo-script.json "first message" "second message"
 *   OPENAI_API_KEY=… npx tsx examples/assistant/main.ts --base-url https://api.openai.com --config my.json "hi"
 */
import fs from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import {
  AgentHarnessError,
  isAgentHarnessError,
  loadModelScript,
  startModelServer,
  type ModelServer,
} from 'agent-harness';
import { buildAssistantConfig } from './config.js';
import { createAssistant, createWireCaller, type AssistantWire } from './factory.js';
import { formatStatistics } from './stats-table.js';

const WIRES: readonly AssistantWire[] = ['openai-chat', 'anthropic-messages'];

function parseWire(value: string): AssistantWire {
  if (!WIRES.includes(value as AssistantWire)) throw new InvalidArgumentError(`use ${WIRES.join(' or ')}`);
  return value as AssistantWire;
}

const program = new Command('assistant')
  .description('Runs the example assistant over one message per argument, then prints per-phase statistics.')
  .argument('<messages...>', 'user messages, one turn each')
  .option('--script <file>', 'scripted model script (starts the local scripted server; no key needed)')
  .option('--base-url <url>', 'live endpoint root (needs a key in OPENAI_API_KEY or ANTHROPIC_API_KEY)')
  .option('--wire <api>', 'openai-chat | anthropic-messages', parseWire, 'openai-chat' as AssistantWire)
  .option('--config <file>', 'orchestrator config JSON (models, timeouts, limits, stream) over the demo defaults')
  .option('--stream', 'stream model answers (SSE)', false)
  .option('--title', 'also ask the utility harness for a conversation title', false);

async function main(): Promise<number> {
  program.parse();
  const options = program.opts<{
    script?: string;
    baseUrl?: string;
    wire: AssistantWire;
    config?: string;
    stream: boolean;
    title: boolean;
  }>();
  if (Boolean(options.script) === Boolean(options.baseUrl))
    throw new AgentHarnessError(
      'USAGE_ERROR',
      'Give exactly one of --script <file> (scripted, local) or --base-url <url> (live).',
    );
  let overrides: object = {};
  if (options.config) {
    try {
      overrides = JSON.parse(fs.readFileSync(options.config, 'utf8')) as object;
    } catch (cause) {
      throw new AgentHarnessError(
        'CONFIG_INVALID',
        `Cannot read orchestrator config ${options.config}: ${(cause as Error).message}`,
        { cause },
      );
    }
  }
  const config = buildAssistantConfig({ ...overrides, ...(options.stream ? { stream: true } : {}) });
  let server: ModelServer | null = null;
  let baseURL: string;
  let apiKey: string;
  if (options.script) {
    server = await startModelServer({ script: await loadModelScript(options.script) });
    baseURL = server.url;
    apiKey = 'scripted-no-key';
  } else {
    const name = options.wire === 'openai-chat' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY';
    const key = process.env[name];
    if (!key) throw new AgentHarnessError('USAGE_ERROR', `--base-url needs a key in ${name}.`);
    baseURL = options.baseUrl!;
    apiKey = key;
  }
  try {
    const assistant = createAssistant(createWireCaller(options.wire, baseURL, apiKey, config), config);
    let failed = false;
    for (const message of program.args) {
      const outcome = await assistant.orchestrator.run(message);
      console.log(`> ${message}`);
      if (outcome.reply !== null) console.log(`${outcome.reply}\n`);
      if (outcome.error) {
        failed = true;
        console.error(`error ${outcome.error.code}: ${outcome.error.message}\n`);
      }
    }
    if (options.title) {
      const title = await assistant.orchestrator.runUtility({ task: 'title' });
      if (title.error) {
        failed = true;
        console.error(`error ${title.error.code}: ${title.error.message}\n`);
      } else console.log(`title: ${title.output.text}\n`);
    }
    console.log(formatStatistics(assistant.recordKeeper.statistics()));
    return failed ? 1 : 0;
  } finally {
    await server?.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(isAgentHarnessError(error) ? `error ${error.code}: ${error.message}` : String(error));
    process.exitCode = 2;
  },
);
