/**
 * One query through the AgentProvider interface, printed as one JSON line per AgentEvent:
 *
 *   npx tsx examples/providers/query.ts <engine> "<prompt>"
 *
 * The engine runs for real against the scripted model on 127.0.0.1 (no key, no network); the default script makes
 * the agent run one shell command and then answer. Exit 0 when the query completed successfully.
 */
import { getProvider } from 'agent-harness/providers';

const [engine, prompt] = process.argv.slice(2);
if (!engine || !prompt) {
  process.stderr.write('usage: npx tsx examples/providers/query.ts <codex|claude|gemini|opencode|iflow> "<prompt>"\n');
  process.exit(2);
}

const script = {
  version: 1,
  turns: [
    { type: 'shell', command: "printf 'hello from a provider\\n' > hello.txt" },
    { type: 'final', text: 'Wrote hello.txt.' },
  ],
};

let success = false;
const controller = new AbortController();
process.once('SIGINT', () => controller.abort());
for await (const event of getProvider(engine).query({
  provider: engine,
  prompt,
  signal: controller.signal,
  extra: { script },
})) {
  process.stdout.write(`${JSON.stringify(event)}\n`);
  if (event.type === 'complete') success = event.result?.success === true;
}
process.exitCode = success ? 0 : 1;
