/**
 * Figure 3, `translate`: `agent-harness translate --engine codex --stdout F --summary` (dist/, a fresh process,
 * CI=true) on synthetic codex `exec --json` streams of 50, 100 and 200 MiB, written to a temp file in 1 MiB chunks.
 * Throughput is MB/s (10^6 bytes per second of wall time); peak RSS is the kernel's maxrss of the process
 * (`/usr/bin/time`), in MB (10^6 bytes); MB per CPU second (user + system) is printed beside, as load moves it
 * less. Each size runs `rounds` times; the figure is the slowest size's median throughput and the largest peak RSS
 * of every run: both must hold at every size (flat as the input grows).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { bin, median, requireCurrentDist, root, Scratch, type Figure } from './util.js';

const MIB = 1024 * 1024;
const SESSION = '01a2053b-9f5a-7bc0-b066-eb965712ebee';

/** The agent message that ends turn `t`. */
function finalMessageOf(t: number): string {
  return `turn ${t} done ${'y'.repeat(200 + (t % 400))}`;
}

/** The lines of turn `t` of a synthetic codex stream: tool calls, messages and sizes vary from turn to turn. */
function turnLines(t: number): string[] {
  const lines = ['{"type":"turn.started"}'];
  const calls = t % 3;
  for (let c = 0; c < calls; c += 1) {
    const command = JSON.stringify(`/bin/bash -lc 'echo ${t}.${c} && ls -la src/${c}'`);
    lines.push(
      `{"type":"item.started","item":{"id":"item_${c}","type":"command_execution","command":${command},"aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
    );
    const output = JSON.stringify(`${'x'.repeat(800 + ((t * 37 + c * 11) % 1600))}\nline two of ${t}`);
    const code = (t + c) % 7 === 0 ? 1 : 0;
    lines.push(
      `{"type":"item.completed","item":{"id":"item_${c}","type":"command_execution","command":${command},"aggregated_output":${output},"exit_code":${code},"status":"${code === 0 ? 'completed' : 'failed'}"}}`,
    );
  }
  if (t % 5 === 0)
    lines.push(
      `{"type":"item.completed","item":{"id":"item_${calls}","type":"reasoning","text":"thinking about turn ${t} ${'r'.repeat(60)}"}}`,
    );
  if (t % 11 === 0)
    lines.push(
      `{"type":"item.completed","item":{"id":"item_${calls + 1}","type":"file_change","changes":[{"path":"src/f${t}.ts","kind":"update"}],"status":"completed"}}`,
    );
  lines.push(
    `{"type":"item.completed","item":{"id":"item_${calls + 2}","type":"agent_message","text":"${finalMessageOf(t)}"}}`,
  );
  lines.push(
    `{"type":"turn.completed","usage":{"input_tokens":${20 + t},"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}`,
  );
  return lines;
}

/**
 * Writes a synthetic codex stream of at least `bytes` bytes to `file`, one 1 MiB-ish chunk at a time (never the
 * whole stream in memory); returns its size, its number of turns and of tool calls, and the last turn's message.
 */
export function writeSyntheticCodexStream(
  file: string,
  bytes: number,
): { bytes: number; turns: number; toolCalls: number; finalMessage: string } {
  const fd = fs.openSync(file, 'w');
  try {
    let written = 0;
    let turns = 0;
    let toolCalls = 0;
    let chunk = `{"type":"thread.started","thread_id":"${SESSION}"}\n`;
    while (written + chunk.length < bytes) {
      chunk += `${turnLines(turns).join('\n')}\n`;
      toolCalls += (turns % 3) + (turns % 11 === 0 ? 1 : 0);
      turns += 1;
      if (chunk.length >= MIB) {
        written += fs.writeSync(fd, chunk);
        chunk = '';
      }
    }
    written += fs.writeSync(fd, chunk);
    return { bytes: written, turns, toolCalls, finalMessage: finalMessageOf(turns - 1) };
  } finally {
    fs.closeSync(fd);
  }
}

/** The floor's script: reads, splits and JSON.parses every line, nothing else (its doc comment). */
const FLOOR = path.join(root, 'bench', 'json-parse-floor.mjs');

/** One timed run of a fresh process. */
interface TimedRun {
  seconds: number;
  cpuSeconds: number;
  peakBytes: number;
  summary: string;
}

/** Runs `translate --summary` on `file` once: wall and CPU seconds, and the kernel's peak RSS in bytes. */
function translateOnce(file: string, env: NodeJS.ProcessEnv, timeFile: string): Promise<TimedRun> {
  return timedRun(['translate', '--engine', 'codex', '--stdout', file, '--summary'], bin, env, timeFile);
}

/** Runs the floor (`json-parse-floor.mjs`) on `file` once. */
function floorOnce(file: string, env: NodeJS.ProcessEnv, timeFile: string): Promise<TimedRun> {
  return timedRun([file], FLOOR, env, timeFile);
}

/** Runs `node script ...args` under /usr/bin/time: wall and CPU seconds, the kernel's peak RSS in bytes, stdout. */
async function timedRun(
  scriptArgs: readonly string[],
  script: string,
  env: NodeJS.ProcessEnv,
  timeFile: string,
): Promise<TimedRun> {
  const started = performance.now();
  const args = ['-f', '%U %S %M', '-o', timeFile, process.execPath, script, ...scriptArgs];
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      const child = spawn('/usr/bin/time', args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let [out, err] = ['', ''];
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('close', (status) => resolve({ code: status, stdout: out, stderr: err }));
    },
  );
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`bench: ${path.basename(script)} exited ${code}: ${stderr.slice(-2000)}`);
  const [user, system, kib] = fs.readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  return { seconds, cpuSeconds: user! + system!, peakBytes: kib! * 1024, summary: stdout };
}

/** Measures figure 3: `rounds` runs at each of `sizesMiB`. */
export async function benchTranslate(rounds: number, sizesMiB: readonly number[] = [50, 100, 200]): Promise<Figure[]> {
  requireCurrentDist();
  if (!fs.existsSync('/usr/bin/time'))
    throw new Error(
      'bench: /usr/bin/time (GNU time) is needed for the peak RSS of translate; install the `time` package',
    );
  const scratch = new Scratch('translate');
  const env: NodeJS.ProcessEnv = { ...process.env, CI: 'true' };
  try {
    const file = path.join(scratch.root, 'codex.stdout.jsonl');
    const sizes: string[] = [];
    const floors: string[] = [];
    let [slowest, peak, floorSlowest] = [Infinity, 0, Infinity];
    for (const mib of sizesMiB) {
      const { bytes, turns } = writeSyntheticCodexStream(file, mib * MIB);
      const runs: TimedRun[] = [];
      const floorRuns: TimedRun[] = [];
      const timeFile = path.join(scratch.root, 'time.txt');
      // Side by side: each round runs the floor right after translate, on the same file.
      for (let i = 0; i < rounds; i += 1) {
        runs.push(await translateOnce(file, env, timeFile));
        floorRuns.push(await floorOnce(file, env, timeFile));
      }
      const toolCalls = (JSON.parse(runs[0]!.summary) as { tool_calls: number }).tool_calls;
      const mbps = median(runs.map((r) => bytes / 1e6 / r.seconds));
      const rss = Math.max(...runs.map((r) => r.peakBytes)) / 1e6;
      [slowest, peak] = [Math.min(slowest, mbps), Math.max(peak, rss)];
      const perCpu = median(runs.map((r) => bytes / 1e6 / r.cpuSeconds));
      sizes.push(
        `${mib} MiB: ${mbps.toFixed(0)} MB/s (median of ${rounds}; best ${Math.max(...runs.map((r) => bytes / 1e6 / r.seconds)).toFixed(0)}; ${perCpu.toFixed(0)} MB per CPU second), peak RSS ${rss.toFixed(0)} MB (${turns} turns, ${toolCalls} tool calls)`,
      );
      console.log(`  ${sizes.at(-1)}`);
      const floorMbps = median(floorRuns.map((r) => bytes / 1e6 / r.seconds));
      floorSlowest = Math.min(floorSlowest, floorMbps);
      floors.push(
        `${mib} MiB: ${floorMbps.toFixed(0)} MB/s (median of ${rounds}; ${median(floorRuns.map((r) => bytes / 1e6 / r.cpuSeconds)).toFixed(0)} MB per CPU second), peak RSS ${(Math.max(...floorRuns.map((r) => r.peakBytes)) / 1e6).toFixed(0)} MB`,
      );
      console.log(`  floor ${floors.at(-1)}`);
    }
    return [
      {
        name: 'translate',
        what: `agent-harness translate --summary on codex streams of ${sizesMiB.join(' / ')} MiB`,
        value: `${slowest.toFixed(0)} MB/s, ${peak.toFixed(0)} MB RSS`,
        target: '≥ 150 MB/s, ≤ 100 MB RSS',
        pass: slowest >= 150 && peak <= 100,
        detail: [...sizes, `its floor (translate floor below): ${floorSlowest.toFixed(0)} MB/s`],
      },
      {
        name: 'translate floor',
        what: 'a fresh Node process that only reads the same streams, splits their lines and JSON.parses each (bench/json-parse-floor.mjs): the least translate can cost with Node',
        value: `${floorSlowest.toFixed(0)} MB/s`,
        target: '—',
        pass: null,
        detail: floors,
      },
    ];
  } finally {
    scratch.dispose();
  }
}
