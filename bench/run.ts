/**
 * Benchmarks: prints figures, asserts nothing (targets live here, never in tests).
 *   npm run bench                       every bench, then writes bench/RESULTS.md
 *   npm run bench -- attempt scaling    only these (names: --help)
 *   npm run bench -- --no-write         do not write bench/RESULTS.md
 * Every harness process and engine gets a throwaway data dir and HOME (this process's HOME too): nothing is
 * written to the real home; the run checks that, and that no process or temp dir is left behind.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchRow } from './figures.js';
import { EXTRA_CA_CERTS } from './util.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

/** Bench name → what it measures and how to run it. */
const BENCHES: Record<string, { about: string; run: () => Promise<BenchRow[]> }> = {
  startup: { about: 'start-up of the agent-harness command (tsx, dist/) vs node -e 0', run: async () => (await import('./cli-startup.js')).benchCliStartup() },
  attempt: { about: 'CLI attempt vs bare CLI turn, codex and claude (paired)', run: async () => (await import('./attempt.js')).benchCliAttempt() },
  inproc: { about: 'in-process runAttempt vs bare codex turn (paired)', run: async () => (await import('./attempt.js')).benchInProcessAttempt() },
  translate: { about: 'stream translation throughput (bench/translate.ts)', run: runTranslate },
  fs: { about: 'fs snapshot + diff, 1k/10k/50k files vs an empty dir; a codex attempt (runAttempt) in a run dir of 1k/10k files vs an empty one', run: runFs },
  scaling: { about: 'N = 1, 4, 16 concurrent codex attempts vs N bare turns', run: async () => (await import('./scaling.js')).benchScaling() },
  'long-attempt': { about: 'peak RSS of one attempt whose engine (a stand-in) prints 10, 100 and 200 MiB', run: async () => (await import('./long-attempt.js')).benchLongAttempt() },
  runstore: { about: 'run store calls of an attempt (createRun, updateRun) and `runs --json` with 0 to 5000 runs in the store', run: async () => (await import('./run-store.js')).benchRunStore() },
};

/** The snapshot module alone (bench/fs-snapshot.ts), then whole attempts in a run dir full of files (bench/fs-attempt.ts). */
async function runFs(): Promise<BenchRow[]> {
  const alone = await (await import('./fs-snapshot.js')).benchFsSnapshot();
  return [...alone, ...await (await import('./fs-attempt.js')).benchFsAttempt()];
}

async function runTranslate(): Promise<BenchRow[]> {
  const file = path.join(here, 'translate.ts');
  if (!fs.existsSync(file)) {
    console.log('translate: skipped (bench/translate.ts does not exist yet)');
    return [];
  }
  const module = (await import('./translate.js' as string)) as { benchTranslate?: () => Promise<BenchRow[] | void> };
  if (typeof module.benchTranslate !== 'function') {
    console.log('translate: skipped (bench/translate.ts exports no benchTranslate)');
    return [];
  }
  return (await module.benchTranslate()) ?? [];
}

function usage(): string {
  const names = Object.entries(BENCHES).map(([name, b]) => `  ${name.padEnd(10)} ${b.about}`).join('\n');
  return `usage: npm run bench -- [--no-write] [name...]\nbenches (all by default, in this order):\n${names}\n`;
}

/** Files under the real home's engine config dirs, with size and mtime, to show they are left alone. */
function homeState(home: string): Map<string, string> {
  const state = new Map<string, string>();
  const walk = (dir: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      const stat = fs.lstatSync(full);
      state.set(full, `${stat.size}:${stat.mtimeMs}`);
      if (entry.isDirectory()) walk(full);
    }
  };
  for (const name of ['.codex', '.claude', '.claude.json', '.gemini', '.config/opencode', '.local/share/opencode', '.iflow', '.agent-harness']) {
    const full = path.join(home, name);
    if (!fs.existsSync(full)) continue;
    state.set(full, 'exists');
    walk(full);
  }
  return state;
}

/** Living descendants of this process (pid → command line). */
function descendants(): Map<number, string> {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out = new Map<number, string>();
  const mine = new Set([process.pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of parents) {
      if (!mine.has(pid) && mine.has(ppid)) {
        mine.add(pid);
        grew = true;
        try {
          out.set(pid, fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim());
        } catch {
          out.set(pid, '?');
        }
      }
    }
  }
  return out;
}

function benchTemps(): Set<string> {
  return new Set(fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith('ah-bench-')));
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

function machine(): string[] {
  const cpuModel = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  let distro = `${os.type()} ${os.release()}`;
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(fs.readFileSync('/etc/os-release', 'utf8'))?.[1];
    if (pretty) distro = `${pretty}, kernel ${os.release()}`;
  } catch {
    // keep uname
  }
  const engines = [['codex', '@openai/codex'], ['claude', '@anthropic-ai/claude-code'], ['gemini', '@google/gemini-cli'], ['opencode', 'opencode-ai']]
    .map(([engine, pkg]) => `${engine} ${packageVersion(pkg!)}`).join(', ');
  return [
    `- CPU: ${cpuModel} × ${os.cpus().length}`,
    `- Memory: ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    `- OS: ${distro}`,
    `- Node: ${process.version}`,
    `- Engines (node_modules): ${engines}`,
    `- Environment: ${EXTRA_CA_CERTS ? `NODE_EXTRA_CA_CERTS=${EXTRA_CA_CERTS}, which every Node process reads as it starts (the harness command's, a bare codex's npm launcher, claude); the attempt benches also run without it` : 'no NODE_EXTRA_CA_CERTS'}`,
  ];
}

function cell(value: string | null | undefined): string {
  return (value ?? '-').replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** `1.02 / 0.80 / 0.61` (1, 5, 15 minutes). */
function load(): string {
  return os.loadavg().map((v) => v.toFixed(2)).join(' / ');
}

function writeResults(rows: readonly BenchRow[], ran: readonly string[], seconds: number, loadBefore: string, loadAfter: string): void {
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` (${ran.join(', ')}) on ${new Date().toISOString()}, in ${seconds.toFixed(0)} s. Figures are medians;`,
    'a ratio is harness / reference measured in the same run (for paired benches: the median of per-pair ratios).',
    'Nothing here is asserted: the targets are the issue\'s, for reading. Why the targets that do not hold are out of',
    'reach, step by step, and what is the engine\'s: [WHERE-THE-TIME-GOES.md](WHERE-THE-TIME-GOES.md).',
    '',
    '## Machine',
    '',
    ...machine(),
    `- Load average (1/5/15 min) before the run: ${loadBefore}; after: ${loadAfter} (the machine may be shared: wall figures`,
    '  move with it; the paired ratios and the CPU figures much less)',
    '',
    '## Figures',
    '',
    '| bench | case | harness | reference | ratio | target | note |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${cell(r.bench)} | ${cell(r.case)} | ${cell(r.harness)} | ${cell(r.reference)} | ${cell(r.ratio)} | ${cell(r.target)} | ${cell(r.note)} |`),
    '',
  ];
  fs.writeFileSync(path.join(here, 'RESULTS.md'), lines.join('\n'));
  console.log(`wrote ${path.relative(process.cwd(), path.join(here, 'RESULTS.md'))}`);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(usage());
    return 0;
  }
  const write = !args.includes('--no-write');
  const names = args.filter((a) => !a.startsWith('--'));
  const unknown = names.filter((n) => !(n in BENCHES));
  if (unknown.length > 0) {
    process.stderr.write(`unknown bench: ${unknown.join(', ')}\n${usage()}`);
    return 2;
  }
  const selected = names.length > 0 ? Object.keys(BENCHES).filter((n) => names.includes(n)) : Object.keys(BENCHES);

  // Nothing may touch the real home: this process and every child get a throwaway one.
  const realHome = os.userInfo().homedir;
  const homeBefore = homeState(realHome);
  const tempsBefore = benchTemps();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-bench-home-'));
  process.env.HOME = home;
  delete process.env.AGENT_HARNESS_RUN_ROOT;
  delete process.env.SKILL_RUNNER_DATA_DIR;

  const started = Date.now();
  const loadBefore = load();
  console.log(`load average before: ${loadBefore}`);
  const rows: BenchRow[] = [];
  let failed = false;
  try {
    for (const name of selected) {
      console.log(`\n== ${name}: ${BENCHES[name]!.about}`);
      // What an earlier bench wrote (translate: ~1 GB) goes to disk first, not during this one's fsyncs.
      execFileSync('sync');
      try {
        rows.push(...(await BENCHES[name]!.run()));
      } catch (error) {
        failed = true;
        console.log(`${name}: FAILED: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
        rows.push({ bench: name, case: 'failed', harness: '-', reference: null, ratio: null, target: null, note: error instanceof Error ? error.message.slice(0, 300) : String(error) });
      }
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(`\npeak RSS of the bench process: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB; ${seconds.toFixed(0)} s`);

  // Left behind? Processes (give exiting ones a moment), temp dirs, the real home. The namespaces the last in-process
  // attempt prepared for a next one are this process's own (they would end with it): closed first.
  await new Promise((resolve) => setTimeout(resolve, 300));
  // tsx's esbuild service is this process's own loader helper: it ends with this process.
  const left = new Map([...descendants()].filter(([, cmd]) => !/esbuild(\.exe)? --service/.test(cmd)));
  console.log(left.size === 0 ? 'left behind: no processes' : `left behind: processes ${[...left].map(([pid, cmd]) => `${pid} ${cmd}`).join('; ')}`);
  const temps = [...benchTemps()].filter((name) => !tempsBefore.has(name));
  console.log(temps.length === 0 ? 'left behind: no temp dirs' : `left behind: temp dirs ${temps.join(', ')}`);
  const homeAfter = homeState(realHome);
  const changed = [...new Set([...homeBefore.keys(), ...homeAfter.keys()])].filter((key) => homeBefore.get(key) !== homeAfter.get(key));
  console.log(changed.length === 0 ? `real home: engine config dirs unchanged (${homeBefore.size} entries under ${realHome}/.codex, .claude, …)` : `real home CHANGED: ${changed.slice(0, 20).join(', ')}`);

  const loadAfter = load();
  console.log(`load average after: ${loadAfter}`);
  if (write && !failed) writeResults(rows, selected, seconds, loadBefore, loadAfter);
  else if (write) console.log('bench/RESULTS.md not written: a bench failed');
  return failed ? 1 : 0;
}

process.exitCode = await main();
