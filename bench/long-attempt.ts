/**
 * Peak memory of one attempt as its output grows (issue 13: "never hold all RASP/FCMP events in memory … for a long
 * live attempt"): `agent-harness start --prompt hi codex` whose engine prints a codex `exec --json` stream of 10, 100
 * and 200 MiB (the synthetic stream of the translate bench). The engine here is a stand-in, a shell script that
 * `cat`s the stream, and it says so in every row: what is measured is the harness process (raw logs, parsing, the RASP
 * and FCMP spools, the translation after the exit, the sealing), and a real codex turn of 100 MiB would take the
 * scripted model thousands of tool calls. Peak RSS is the command's (its children, the stand-in and the namespaces'
 * init, are far smaller), from `/usr/bin/time -f %M` or VmHWM as in the translate bench.
 *   node --import tsx -e "const {benchLongAttempt}=await import('./bench/long-attempt.ts'); console.log(await benchLongAttempt())"
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchRow } from './figures.js';
import { measure, writeSyntheticCodexStream } from './translate.js';
import { distIsCurrent, harnessEnv } from './util.js';

const MIB = 1024 * 1024;

/** Prints and returns the peak RSS of an attempt of 10, 100 and 200 MiB of engine output. */
export async function benchLongAttempt(sizesMiB: readonly number[] = [10, 100, 200]): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-bench-long-'));
  const rows: BenchRow[] = [];
  const runner = (await distIsCurrent()) ? 'dist/' : 'src/ through tsx: dist/ is not the build of src/ (npm run build)';
  try {
    const project = path.join(dir, 'project');
    const prefix = path.join(dir, 'prefix');
    const home = path.join(dir, 'home');
    for (const d of [project, path.join(prefix, 'bin'), home]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(project, 'package.json'), '{"name":"bench-long","private":true}\n');
    const stream = path.join(dir, 'codex.stdout.jsonl');
    fs.writeFileSync(path.join(prefix, 'bin', 'codex'), `#!/bin/sh\nexec cat ${JSON.stringify(stream)}\n`, { mode: 0o755 });
    const env = { ...harnessEnv(path.join(dir, 'data'), home), SKILL_RUNNER_NPM_PREFIX: prefix, AGENT_HARNESS_SKILL_ROOTS: path.join(dir, 'no-skills') };
    for (const mib of sizesMiB) {
      const { bytes, turns } = writeSyntheticCodexStream(stream, mib * MIB);
      const run = await measure(['start', '--prompt', 'hi', 'codex'], '/dev/null', { cwd: project, env });
      const runs = path.join(dir, 'data', 'harness_runs');
      const audit = fs.readdirSync(runs).filter((name) => !name.startsWith('.') && !name.endsWith('.jsonl')).map((name) => path.join(runs, name, '.audit')).filter((d) => fs.existsSync(path.join(d, 'rasp.1.jsonl')));
      const sizes = audit.map((d) => fs.statSync(path.join(d, 'rasp.1.jsonl')).size + fs.statSync(path.join(d, 'fcmp.1.jsonl')).size);
      const meta = JSON.parse(fs.readFileSync(path.join(audit[0]!, 'meta.1.json'), 'utf8')) as { completion: { state: string } };
      console.log(`long attempt ${mib} MiB of output: peak RSS ${run.peakRssMiB.toFixed(0)} MiB, ${run.seconds.toFixed(2)} s (${turns} turns, ${((sizes[0] ?? 0) / MIB).toFixed(0)} MiB of RASP + FCMP written, completion ${meta.completion.state})`);
      rows.push({
        bench: 'long-attempt',
        case: `codex stand-in, ${mib} MiB of output`,
        harness: `peak RSS ${run.peakRssMiB.toFixed(0)} MiB`,
        reference: null,
        ratio: null,
        target: 'flat as the output grows',
        note: `one \`start\` (${runner}) whose engine is a stand-in printing a ${mib} MiB codex stream (${turns} turns): ${run.seconds.toFixed(2)} s, ${((sizes[0] ?? 0) / MIB).toFixed(0)} MiB of RASP and FCMP written, completion ${meta.completion.state}`,
      });
      fs.rmSync(path.join(dir, 'data'), { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
