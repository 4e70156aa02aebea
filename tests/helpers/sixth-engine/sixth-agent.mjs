#!/usr/bin/env node
// A throwaway sixth engine's CLI, for tests/contract/engine-registry.contract.test.ts: a real process that speaks
// OpenAI Chat Completions to the model at $SIXTH_BASE_URL (the scripted model server) and prints one JSON object per
// line. Tools it offers the model: `run {cmd}` (a shell command) and `put {path, text}` (writes a file).
//   sixth-agent run --json [--session ID] [--model M] PROMPT
// Output: {"type":"session","id"} {"type":"tool","id","name","input"} {"type":"result","id","exit","output"}
//         {"type":"message","text"} {"type":"end","status":"completed"|"failed","error"?}
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const print = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const args = process.argv.slice(2);
if (args[0] === '--version') {
  print({ type: 'version', version: '0.0.1' });
  process.exit(0);
}
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const session = flag('--session') ?? randomUUID();
const model = flag('--model') ?? 'sixth-model';
const prompt = args.filter((a) => !a.startsWith('--') && a !== 'run').at(-1) ?? '';
const base = process.env.SIXTH_BASE_URL;
const historyFile = path.join(process.env.SIXTH_HOME ?? '.', `${session}.json`);
const messages = fs.existsSync(historyFile)
  ? JSON.parse(fs.readFileSync(historyFile, 'utf8'))
  : [{ role: 'system', content: `Working directory: ${process.cwd()}` }];
messages.push({ role: 'user', content: prompt });
print({ type: 'session', id: session });

const tools = [
  {
    type: 'function',
    function: {
      name: 'run',
      description: 'run a shell command',
      parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
    },
  },
  {
    type: 'function',
    function: {
      name: 'put',
      description: 'write a file',
      parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } },
    },
  },
];

function callTool(name, input) {
  if (name === 'run') {
    const result = spawnSync('/bin/sh', ['-c', String(input.cmd)], { encoding: 'utf8' });
    return { exit: result.status ?? 1, output: `${result.stdout}${result.stderr}` };
  }
  if (name === 'put') {
    fs.writeFileSync(path.resolve(String(input.path)), String(input.text));
    return { exit: 0, output: `wrote ${input.path}` };
  }
  return { exit: 127, output: `no tool ${name}` };
}

async function main() {
  if (!base) {
    print({ type: 'message', text: `echo: ${prompt}` });
    print({ type: 'end', status: 'completed' });
    return;
  }
  for (let step = 0; step < 16; step += 1) {
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages, tools }),
    });
    const body = await response.json();
    if (!response.ok) {
      print({ type: 'end', status: 'failed', error: body?.error?.message ?? `HTTP ${response.status}` });
      process.exitCode = 1;
      return;
    }
    const message = body.choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) {
      print({ type: 'message', text: message.content ?? '' });
      print({ type: 'end', status: 'completed' });
      return;
    }
    for (const call of message.tool_calls) {
      const input = JSON.parse(call.function.arguments);
      print({ type: 'tool', id: call.id, name: call.function.name, input });
      const result = callTool(call.function.name, input);
      print({ type: 'result', id: call.id, ...result });
      messages.push({ role: 'tool', tool_call_id: call.id, content: result.output });
    }
  }
}

await main();
fs.mkdirSync(path.dirname(historyFile), { recursive: true });
fs.writeFileSync(historyFile, JSON.stringify(messages));
