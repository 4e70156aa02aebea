/**
 * The bench: six figures, each measured side by side in one run, printed against its target; nothing asserted.
 *   npm run bench                         all five, then bench/RESULTS.md is written
 *   npm run bench -- cli translate        only these figures (names: --help); RESULTS.md is left alone
 *   npm run bench -- --rounds 3           fewer rounds of each, for a quick look
 *   npm run bench -- --no-write           all five, RESULTS.md left alone
 *   npm run bench -- --write library …    only these figures, and RESULTS.md written with them
 *   AH_BENCH_ENGINES=codex npm run bench  the cli figure for these engines only
 * NODE_EXTRA_CA_CERTS is unset for this process and every side (issue 44): Node reads that file at every start, so a
 * shell that sets it would add its cost to the harness and to a Node launcher, not to a native binary. The five
 * figures issue 44 names are printed together at the end, each beside its target.
 * Every harness process runs with CI=true (the path every CI job takes) and a throwaway HOME and data dir (this
 * process's HOME too): nothing is written to the real home. Model servers listen on 127.0.0.1 only. At the end the
 * run checks that the real home's engine dirs are unchanged and that no process or temp dir is left behind.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root, type Figure } from './util.js';

/** Figure name → what it measures, its default rounds, and how to run it. */
const FIGURES: Record<string, { about: string; rounds: number; run: (rounds: number) => Promise<Figure[]> }> = {
  library: {
    about: 'codex attempt through runAttempt in-process vs the bare native codex turn (≤ 1.10×)',
    // 24: the median of 12 paired rounds moved by ±20 ms from run to run on the containment figure (+55 to +95 ms on
    // one quiet afternoon); of 30, by ±3 ms.
    rounds: 24,
    run: async (n) => (await import('./library.js')).benchLibrary(n),
  },
  cli: {
    about: 'agent-harness start in a fresh process vs the bare turn, per installed engine (≤ 1.5×)',
    rounds: 8,
    run: async (n) => (await import('./cli.js')).benchCli(n),
  },
  translate: {
    about: 'translate --summary on 50/100/200 MiB codex streams (≥ 150 MB/s, ≤ 100 MB RSS)',
    rounds: 3,
    run: async (n) => (await import('./translate.js')).benchTranslate(n),
  },
  'run-dir': {
    about: 'codex attempt in a run dir of 10,000 files vs an empty one (≤ +150 ms)',
    rounds: 10,
    run: async (n) => (await import('./run-dir.js')).benchRunDir(n),
  },
  concurrency: {
    about: '16 concurrent codex attempts vs 16 × one attempt / cores (≤ 1.2×)',
    rounds: 3,
    run: async (n) => (await import('./concurrency.js')).benchConcurrency(n),
  },
  replay: {
    about: 'codex attempt replayed from a cassette vs the scripted attempt of the same conversation (≤ 1.10×)',
    rounds: 10,
    run: async (n) => (await import('./replay.js')).benchReplay(n),
  },
};

/** Issue 44's five figures, by the name each has here (before main: the module awaits main at its top level). */
const FIVE = ['library, isolation off', 'containment', 'cli codex, npm launcher', 'translate', 'run-dir'];
/**
 * Beside a figure of {@link FIVE}, the figure that tells what stops it: its floor (the least the work can cost here),
 * or for the CLI the same command with its containment left out (measured apart, as the issue has it).
 */
const BESIDE: Record<string, string> = {
  containment: 'containment floor',
  'cli codex, npm launcher': 'cli codex, npm launcher, isolation off',
  translate: 'translate floor',
  'run-dir': 'run-dir floor',
};

function usage(): string {
  const names = Object.entries(FIGURES)
    .map(([name, f]) => `  ${name.padEnd(12)} ${f.about}; ${f.rounds} rounds`)
    .join('\n');
  return `usage: npm run bench -- [--rounds N] [--no-write] [name...]\nfigures (all by default, in this order):\n${names}\n`;
}

/** Size and mtime of every file under the real home's engine dirs, to show they are left alone. */
function homeState(home: string): Map<string, string> {
  const state = new Map<string, string>();
  for (const name of [
    '.codex',
    '.claude',
    '.claude.json',
    '.gemini',
    '.config/opencode',
    '.local/share/opencode',
    '.iflow',
    '.agent-harness',
  ]) {
    const top = path.join(home, name);
    if (!fs.existsSync(top)) continue;
    const entries = fs.statSync(top).isDirectory()
      ? (fs.readdirSync(top, { recursive: true }) as string[]).map((e) => path.join(top, e))
      : [];
    for (const full of [top, ...entries]) {
      const stat = fs.lstatSync(full, { throwIfNoEntry: false });
      state.set(full, stat ? `${stat.size}:${stat.mtimeMs}` : 'gone');
    }
  }
  return state;
}

/** Living descendants of this process, as `pid command`. */
function descendants(): string[] {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const mine = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parents) if (!mine.has(pid) && mine.has(ppid)) [grew] = [true, mine.add(pid)];
  }
  mine.delete(process.pid);
  const command = (pid: number): string => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      return '?';
    }
  };
  // tsx's esbuild service is this process's own loader helper: it ends with this process.
  return [...mine].map((pid) => `${pid} ${command(pid)}`).filter((line) => !/esbuild(\.exe)? --service/.test(line));
}

const benchTemps = (): string[] => fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith('ah-bench-'));
const load = (): string =>
  os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' / ');

/** The machine, engines and commit, for RESULTS.md. */
function machine(loadBefore: string, loadAfter: string, extraCaCerts: string | undefined): string[] {
  const cpu = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  const version = (pkg: string): string => {
    try {
      return (
        JSON.parse(fs.readFileSync(path.join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }
      ).version;
    } catch {
      return 'not installed';
    }
  };
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  const dirty = git('status', '--porcelain', '--', 'src', 'bin', 'bench') ? ' (with uncommitted changes)' : '';
  const engines = [
    ['codex', '@openai/codex'],
    ['claude', '@anthropic-ai/claude-code'],
    ['gemini', '@google/gemini-cli'],
    ['opencode', 'opencode-ai'],
  ];
  return [
    `- Commit: ${git('rev-parse', '--short', 'HEAD')}${dirty} (${git('log', '-1', '--format=%s').slice(0, 100)})`,
    `- CPU: ${cpu} × ${os.availableParallelism()}; memory ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB; ${os.type()} ${os.release()}; Node ${process.version}`,
    `- Engines: ${engines.map(([e, pkg]) => `${e} ${version(pkg!)}`).join(', ')}`,
    `- Load average (1 / 5 / 15 min) at the start: ${loadBefore}; at the end: ${loadAfter}`,
    `- Environment of the harness processes and of the bare sides: CI=true, NODE_EXTRA_CA_CERTS unset${extraCaCerts ? ` (the shell had ${extraCaCerts})` : ''}`,
  ];
}

function writeResults(
  figures: readonly Figure[],
  seconds: number,
  loadBefore: string,
  loadAfter: string,
  extraCaCerts: string | undefined,
): void {
  const cell = (text: string): string => text.replace(/\|/g, '\\|');
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${new Date().toISOString()} in ${seconds.toFixed(0)} s. Each figure is a ratio or difference measured`,
    'side by side in this run (paired rounds: the median of the per-round figures), except translate (absolute). The',
    "targets are issue 29's and 44's; nothing is asserted. How each is measured: the doc comment of its file in bench/.",
    '',
    '## The five figures of issue 44',
    '',
    ...fiveFigures(figures),
    '',
    '## Machine',
    '',
    ...machine(loadBefore, loadAfter, extraCaCerts),
    '',
    '## Figures',
    '',
    '| figure | what | value | target | |',
    '| --- | --- | --- | --- | --- |',
    ...figures.map((f) => `| ${f.name} | ${cell(f.what)} | ${f.value} | ${f.target} | ${verdict(f, '**FAIL**')} |`),
    '',
    '## Details',
    '',
    ...figures.flatMap((f) => [
      `### ${f.name}: ${f.value} (${verdict(f, 'FAIL')}, target ${f.target})`,
      '',
      ...f.detail.map((d) => `- ${d}`),
      '',
    ]),
  ];
  fs.writeFileSync(path.join(root, 'bench', 'RESULTS.md'), lines.join('\n'));
  console.log('wrote bench/RESULTS.md');
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(usage());
    return 0;
  }
  const roundsAt = args.indexOf('--rounds');
  const rounds = roundsAt >= 0 ? Number(args[roundsAt + 1]) : null;
  if (rounds !== null && !(Number.isInteger(rounds) && rounds > 0)) {
    process.stderr.write(`--rounds needs a positive integer, got ${args[roundsAt + 1]}\n${usage()}`);
    return 2;
  }
  const names = args.filter((a, i) => !a.startsWith('--') && (roundsAt < 0 || i !== roundsAt + 1));
  const unknown = names.filter((n) => !(n in FIGURES));
  if (unknown.length > 0) {
    process.stderr.write(`unknown figure: ${unknown.join(', ')}\n${usage()}`);
    return 2;
  }
  const selected = names.length > 0 ? Object.keys(FIGURES).filter((n) => names.includes(n)) : Object.keys(FIGURES);

  // Nothing may touch the real home: this process (the in-process figures' harness) and every child get a throwaway one.
  const realHome = os.userInfo().homedir;
  const [homeBefore, tempsBefore] = [homeState(realHome), new Set(benchTemps())];
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-bench-home-'));
  Object.assign(process.env, { HOME: home, CI: 'true' });
  const extraCaCerts = process.env.NODE_EXTRA_CA_CERTS;
  delete process.env.NODE_EXTRA_CA_CERTS;
  const started = Date.now();
  const loadBefore = load();
  console.log(`load average at the start: ${loadBefore}`);
  const figures: Figure[] = [];
  let failed = false;
  try {
    for (const name of selected) {
      const figure = FIGURES[name]!;
      console.log(`\n== ${name}: ${figure.about}, ${rounds ?? figure.rounds} rounds`);
      execFileSync('sync');
      try {
        for (const f of await figure.run(rounds ?? figure.rounds)) {
          figures.push(f);
          console.log(
            `${f.name}: ${f.value} (target ${f.target}: ${verdict(f, 'FAIL')})\n${f.detail.map((d) => `  ${d}`).join('\n')}`,
          );
        }
      } catch (error) {
        failed = true;
        console.log(`${name}: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
  const seconds = (Date.now() - started) / 1000;
  const loadAfter = load();
  console.log(`\nload average at the end: ${loadAfter}; ${seconds.toFixed(0)} s`);

  await new Promise((resolve) => setTimeout(resolve, 300));
  const left = descendants();
  console.log(left.length === 0 ? 'left behind: no processes' : `left behind: processes ${left.join('; ')}`);
  const temps = benchTemps().filter((name) => !tempsBefore.has(name));
  console.log(temps.length === 0 ? 'left behind: no temp dirs' : `left behind: temp dirs ${temps.join(', ')}`);
  const homeAfter = homeState(realHome);
  const changed = [...new Set([...homeBefore.keys(), ...homeAfter.keys()])].filter(
    (key) => homeBefore.get(key) !== homeAfter.get(key),
  );
  console.log(
    changed.length === 0
      ? `real home: engine dirs unchanged (${homeBefore.size} entries)`
      : `real home CHANGED: ${changed.slice(0, 20).join(', ')}`,
  );

  console.log(`\nthe five figures of issue 44:\n${fiveFigures(figures).join('\n')}`);
  const write = args.includes('--write') || (!args.includes('--no-write') && names.length === 0);
  if (write && !failed) writeResults(figures, seconds, loadBefore, loadAfter, extraCaCerts);
  return failed || left.length > 0 || temps.length > 0 || changed.length > 0 ? 1 : 0;
}

process.exitCode = await main();

/** A figure's verdict as printed: pass, `fail`, or a dash for a figure with no target. */
function verdict(figure: Figure, fail: string): string {
  return figure.pass === null ? '—' : figure.pass ? 'pass' : fail;
}

/** Issue 44's five figures side by side, as a Markdown table (a figure not measured in this run says so). */
function fiveFigures(figures: readonly Figure[]): string[] {
  const beside = (name: string): string => {
    const other = BESIDE[name] ? figures.find((f) => f.name === BESIDE[name]) : undefined;
    return other ? `${other.name}: ${other.value}` : '';
  };
  return [
    '| figure | value | target | | beside it |',
    '| --- | --- | --- | --- | --- |',
    ...FIVE.map((name) => {
      const figure = figures.find((f) => f.name === name);
      return figure
        ? `| ${name} | ${figure.value} | ${figure.target} | ${verdict(figure, '**FAIL**')} | ${beside(name)} |`
        : `| ${name} | not measured in this run | | | |`;
    }),
  ];
}
