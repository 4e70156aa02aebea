// Catches engine drift on purpose: `npm run test:engines -- --latest` installs the newest release of each engine
// (`npm view <package> version`) into a temporary npm prefix (never the pins in package.json, never a run directory or
// the managed agent home), points the engine lookup at it (AGENT_HARNESS_ENGINE_PREFIX), runs the same probe case
// with the pinned and the newest release and the whole engine project (narrowed to that engine) with the newest, and
// writes a drift report: what changed in the normalized stream (FCMP), the tool names, the flags the CLI accepts, the
// unknown events it now prints, and whether the engine project passed (the pins to move). docs/engines.md#catching-drift
// describes it.
//
// Options: --latest (required: the newest release of each engine), --engines a,b (default: every engine with an npm
// package), --prefix DIR (where releases are installed; default $TMPDIR/agent-harness-latest), --out DIR (the report;
// default $TMPDIR/agent-harness-drift-<time>), --no-matrix (the probe only, not the engine project), --all (also
// engines already at the newest).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { engineIds, loadEngine } = await tsImport('../src/engines/registry.ts', import.meta.url);
const { compareDriftCase, helpFlags, unknownEvents } = await tsImport('../src/report/engine-drift.ts', import.meta.url);

function parseArgs(argv) {
  const options = { latest: false, engines: null, prefix: null, out: null, matrix: true, all: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--latest') options.latest = true;
    else if (arg === '--no-matrix') options.matrix = false;
    else if (arg === '--all') options.all = true;
    else if (arg === '--engines') options.engines = argv[++i]?.split(',').filter(Boolean) ?? [];
    else if (arg === '--prefix') options.prefix = path.resolve(argv[++i] ?? '');
    else if (arg === '--out') options.out = path.resolve(argv[++i] ?? '');
    else throw new Error(`Unknown option ${JSON.stringify(arg)}; see the header of scripts/engines-latest.mjs.`);
  }
  if (!options.latest)
    throw new Error('Say which releases to test: --latest (the newest release of each engine on the npm registry).');
  return options;
}

function run(file, args, { env = {}, cwd = ROOT, timeout = 30 * 60_000 } = {}) {
  const result = spawnSync(file, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout,
    maxBuffer: 256 * 1024 * 1024,
  });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

function installedVersion(prefix, pkg) {
  try {
    return JSON.parse(fs.readFileSync(path.join(prefix, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

/** The probe case: a shell call, a file written through the engine's own tool, a final answer with the done marker. */
const PROBE_SCRIPT = {
  version: 1,
  description: 'engine drift probe (scripts/engines-latest.mjs)',
  turns: [
    { type: 'shell', command: 'echo drift-probe > probe.txt' },
    { type: 'write_file', path: 'written.txt', content: 'written by the drift probe\n' },
    { type: 'final', text: 'Probe done.', done: true },
  ],
};

/** One probe attempt through the CLI; its run's audit (FCMP, RASP, meta), or why there is none. */
function probe(engine, label, out, env) {
  const runRoot = path.join(out, 'runs', `${engine}-${label}`);
  const scriptFile = path.join(out, 'probe-script.json');
  const result = run(
    process.execPath,
    [
      path.join(ROOT, 'scripts', 'run-source.mjs'),
      'start',
      '--script',
      scriptFile,
      '--prompt',
      'Run the drift probe.',
      engine,
    ],
    { env: { ...env, AGENT_HARNESS_RUN_ROOT: runRoot }, timeout: 15 * 60_000 },
  );
  const runs = fs.existsSync(runRoot) ? fs.readdirSync(runRoot).filter((name) => name.includes(`-${engine}-`)) : [];
  if (runs.length === 0) return { exit: result.status, error: result.stderr.slice(-2000) || 'no run was written' };
  const audit = path.join(runRoot, runs.sort().at(-1), '.audit');
  const lines = (file) =>
    fs.existsSync(path.join(audit, file))
      ? fs
          .readFileSync(path.join(audit, file), 'utf8')
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l))
      : [];
  const meta = fs.existsSync(path.join(audit, 'meta.1.json'))
    ? JSON.parse(fs.readFileSync(path.join(audit, 'meta.1.json'), 'utf8'))
    : {};
  return { exit: result.status, audit, fcmp: lines('fcmp.1.jsonl'), rasp: lines('rasp.1.jsonl'), meta };
}

/** The flags `executable --help` (and its headless subcommand's help) lists. */
function flagsOf(executable, engine) {
  const helps = [
    ['--help'],
    ...(engine === 'codex' ? [['exec', '--help']] : []),
    ...(engine === 'opencode' ? [['run', '--help']] : []),
  ];
  return [...new Set(helps.flatMap((args) => helpFlags(run(executable, args, { timeout: 120_000 }).stdout)))].sort();
}

/**
 * The whole engine project against the newest release, narrowed to this engine (`AGENT_HARNESS_ENGINES`: the tests
 * over every engine run its rows only, and a test that starts another engine through the plugin skips): counts and the
 * failed test names. The engine matrix alone passed where eight other engine tests failed (claude 2.1.332).
 */
function engineProject(engine, out, env) {
  const file = path.join(out, `engine-project-${engine}.json`);
  run('npx', ['vitest', 'run', '--project', 'engine', '--reporter=json', `--outputFile=${file}`], {
    env: { ...env, AGENT_HARNESS_ENGINES: engine },
    timeout: 90 * 60_000,
  });
  try {
    const report = JSON.parse(fs.readFileSync(file, 'utf8'));
    const tests = report.testResults.flatMap((f) => f.assertionResults);
    const of = (status) => tests.filter((t) => t.status === status);
    return {
      passed: of('passed').length,
      failed: of('failed').length,
      skipped: of('skipped').length + of('pending').length,
      failures: of('failed').map((t) => ({ test: t.fullName, message: (t.failureMessages[0] ?? '').slice(0, 600) })),
    };
  } catch (error) {
    return { passed: 0, failed: 0, skipped: 0, failures: [], error: `no engine project report: ${error.message}` };
  }
}

function markdown(report) {
  const lines = [`# Engine drift report`, '', `Made ${report.made_at} by \`npm run test:engines -- --latest\`.`, ''];
  for (const row of report.engines) {
    lines.push(`## ${row.engine} (${row.package})`, '');
    lines.push(
      `- pinned ${row.pinned}, newest ${row.latest}${row.status === 'current' ? ' (the pin is the newest)' : ''}`,
    );
    if (row.status === 'current') {
      lines.push('');
      continue;
    }
    if (row.install_error) lines.push(`- install failed: ${row.install_error}`);
    if (row.probe) {
      const p = row.probe;
      lines.push(
        `- probe verdict: pinned ${p.pinned.verdict}, newest ${p.latest.verdict} (engine_version ${p.latest.engine_version})`,
      );
      lines.push(
        `- tool names: pinned ${p.pinned.tools.join(', ') || '-'}; newest ${p.latest.tools.join(', ') || '-'}`,
      );
      lines.push(`- FCMP: ${p.fcmp_changes.length === 0 ? 'unchanged' : `${p.fcmp_changes.length} change(s)`}`);
      for (const change of p.fcmp_changes.slice(0, 30)) lines.push(`  - ${change}`);
      lines.push(`- unknown events the newest prints: ${p.latest.unknown.length === 0 ? 'none' : ''}`);
      for (const unknown of p.latest.unknown.slice(0, 30)) lines.push(`  - ${unknown}`);
    }
    if (row.flags) {
      lines.push(`- flags the newest no longer lists: ${row.flags.removed.join(' ') || 'none'}`);
      lines.push(`- flags the newest adds: ${row.flags.added.join(' ') || 'none'}`);
      lines.push(
        `- resume flags of the adapter the newest does not list: ${row.flags.adapter_missing.join(' ') || 'none'}`,
      );
    }
    if (row.matrix) {
      const m = row.matrix;
      lines.push(
        `- engine project on the newest: ${m.passed} passed, ${m.failed} failed, ${m.skipped} skipped${m.error ? ` (${m.error})` : ''}`,
      );
      for (const failure of m.failures) lines.push(`  - FAILED ${failure.test}`);
    }
    lines.push(`- pin: ${row.move_pin ? `move ${row.package} to ${row.latest}` : 'keep'}`, '');
  }
  return `${lines.join('\n')}\n`;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  const prefixRoot = options.prefix ?? path.join(os.tmpdir(), 'agent-harness-latest');
  const out = options.out ?? path.join(os.tmpdir(), `agent-harness-drift-${stamp}`);
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'probe-script.json'), `${JSON.stringify(PROBE_SCRIPT, null, 2)}\n`);
  const report = {
    version: 'agent-harness.drift/1',
    made_at: new Date().toISOString(),
    prefix: prefixRoot,
    engines: [],
  };
  for (const id of options.engines ?? engineIds()) {
    const adapter = await loadEngine(id);
    if (!adapter.packageName) continue;
    const pkg = adapter.packageName;
    const pinned = installedVersion(ROOT, pkg);
    const view = run('npm', ['view', pkg, 'version'], { timeout: 120_000 });
    const latest = view.stdout.trim().split('\n').at(-1) || null;
    const row = { engine: id, package: pkg, pinned, latest, status: 'drifted', move_pin: false };
    report.engines.push(row);
    process.stderr.write(`${id}: pinned ${pinned}, newest ${latest}\n`);
    if (!latest) {
      row.status = 'unknown';
      row.install_error = `npm view ${pkg} version failed: ${view.stderr.slice(-500)}`;
      continue;
    }
    if (latest === pinned && !options.all) {
      row.status = 'current';
      continue;
    }
    const prefix = path.join(prefixRoot, id);
    if (installedVersion(prefix, pkg) !== latest) {
      fs.mkdirSync(prefix, { recursive: true });
      if (!fs.existsSync(path.join(prefix, 'package.json')))
        fs.writeFileSync(path.join(prefix, 'package.json'), '{"private":true}\n');
      const install = run('npm', ['install', '--no-audit', '--no-fund', '--prefix', prefix, `${pkg}@${latest}`], {
        timeout: 30 * 60_000,
      });
      if (installedVersion(prefix, pkg) !== latest) {
        row.install_error = install.stderr.slice(-1000) || `npm install exited ${install.status}`;
        continue;
      }
    }
    const latestEnv = { AGENT_HARNESS_ENGINE_PREFIX: prefix };
    const pinnedProbe = probe(id, `pinned-${pinned}`, out, {});
    const latestProbe = probe(id, `latest-${latest}`, out, latestEnv);
    row.probe = compareDriftCase(pinnedProbe, latestProbe);
    const pinnedBin = path.join(ROOT, 'node_modules', '.bin', adapter.executableName);
    const latestBin = path.join(prefix, 'node_modules', '.bin', adapter.executableName);
    const before = flagsOf(pinnedBin, id);
    const after = flagsOf(latestBin, id);
    row.flags = {
      removed: before.filter((f) => !after.includes(f)),
      added: after.filter((f) => !before.includes(f)),
      adapter_missing: adapter.resumeFlags
        .flatMap((flag) => flag.names)
        .filter((name) => name.startsWith('--') && after.length > 0 && !after.includes(name)),
    };
    row.unknown_events = unknownEvents(latestProbe.rasp ?? []);
    if (options.matrix) row.matrix = engineProject(id, out, latestEnv);
    row.move_pin =
      row.probe.latest.verdict === 'completed' && (!row.matrix || (row.matrix.failed === 0 && row.matrix.passed > 0));
    fs.writeFileSync(path.join(out, 'drift-report.json'), `${JSON.stringify(report, null, 2)}\n`);
  }
  fs.writeFileSync(path.join(out, 'drift-report.json'), `${JSON.stringify(report, null, 2)}\n`);
  fs.writeFileSync(path.join(out, 'drift-report.md'), markdown(report));
  process.stdout.write(
    `${markdown(report)}\nDrift report: ${path.join(out, 'drift-report.md')} (and drift-report.json)\n`,
  );
}

main().catch((error) => {
  process.stderr.write(`engines-latest: ${error.message}\n`);
  process.exitCode = 1;
});
