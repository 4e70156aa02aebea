/**
 * Benchmarks: prints figures, asserts nothing (targets live here, never in tests).
 *   npm run bench
 * - codex stream → line splitter → RASP → FCMP throughput on a synthetic long stream
 * - peak RSS after the run
 * - start-up of the `agent-harness` command from tsx and from dist/ (bench/cli-startup.ts)
 */
import { performance } from 'node:perf_hooks';
import { createCodexParser } from '../src/engines/codex/parse.js';
import { codexErrorPatterns } from '../src/engines/codex/errors.js';
import { createLineSplitter, createRaspBuilder, translateRaspToFcmp } from '../src/translate/index.js';
import { benchCliStartup } from './cli-startup.js';
import { benchFsSnapshot } from './fs-snapshot.js';

function syntheticStream(turns: number): Buffer {
  const lines: string[] = ['{"type":"thread.started","thread_id":"01a2053b-9f5a-7bc0-b066-eb965712ebee"}'];
  for (let t = 0; t < turns; t += 1) {
    lines.push('{"type":"turn.started"}');
    lines.push(`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"echo ${t}","aggregated_output":"","exit_code":null,"status":"in_progress"}}`);
    lines.push(`{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"echo ${t}","aggregated_output":"${'x'.repeat(200)}","exit_code":0,"status":"completed"}}`);
    lines.push(`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"turn ${t} done ${'y'.repeat(100)}"}}`);
    lines.push('{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}');
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

function benchTranslate(turns: number, chunkSize: number): void {
  const stream = syntheticStream(turns);
  const started = performance.now();
  const splitter = createLineSplitter();
  const builder = createRaspBuilder({ runId: 'bench', attempt: 1, engine: 'codex', parser: createCodexParser() });
  builder.started({ launch: 'start', argv: ['codex'], cwd: '/tmp', pid: null, io: 'split' });
  for (let offset = 0; offset < stream.length; offset += chunkSize) {
    const chunk = stream.subarray(offset, offset + chunkSize);
    for (const line of splitter.push('stdout', chunk, offset)) builder.line('stdout', line.text, { stream: 'stdout', from: line.from, to: line.to });
  }
  builder.exited({ exit_code: 0, signal: null, timed_out: false, canceled: false, duration_ms: 1 });
  const fcmp = translateRaspToFcmp(builder.events, { runId: 'bench', engine: 'codex', attempt: 1, seqStart: 0, launch: 'start', errorPatterns: codexErrorPatterns });
  const ms = performance.now() - started;
  const mb = stream.length / 1024 / 1024;
  console.log(`translate codex: ${turns} turns, ${mb.toFixed(1)} MiB in ${chunkSize}-byte chunks → ${builder.events.length} RASP, ${fcmp.length} FCMP in ${ms.toFixed(0)} ms (${(mb / (ms / 1000)).toFixed(1)} MiB/s)`);
}

benchTranslate(2_000, 65_536);
benchTranslate(2_000, 512);
await benchFsSnapshot();
console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
await benchCliStartup();
