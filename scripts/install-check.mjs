// What a user's `npm install agent-harness` gets: packs this checkout (or takes a tarball), installs it alone with
// --omit=dev into an empty project, and checks that `npm ls --omit=dev --omit=optional` there lists no optional peer
// (OpenTelemetry, the ACP SDK, the vendor SDKs); prints the size of that node_modules.
//   node scripts/install-check.mjs [--tarball agent-harness-0.1.0.tgz] [--keep]
// Needs the npm registry. Exit 1 when an optional peer is installed, 2 on a failed pack or install.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const OPTIONAL_PEER =
  /(^|\/)node_modules\/(@opentelemetry\/[^/]+|@agentclientprotocol\/sdk|openai|@anthropic-ai\/sdk)(\/|$)/;
const args = process.argv.slice(2);
const tarballArg = args.includes('--tarball') ? args[args.indexOf('--tarball') + 1] : null;
const dir = mkdtempSync(path.join(os.tmpdir(), 'ah-install-check-'));

function run(command, argv, cwd) {
  const result = spawnSync(command, argv, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0 && !(command === 'npm' && argv[0] === 'ls')) {
    console.error(
      `install-check: ${command} ${argv.join(' ')} failed (${result.status ?? result.signal}):\n${result.stderr}`,
    );
    process.exit(2);
  }
  return result.stdout;
}

let tarball = tarballArg ? path.resolve(tarballArg) : null;
if (!tarball) {
  run('npm', ['pack', '--pack-destination', dir], root);
  tarball = path.join(
    dir,
    readdirSync(dir).find((name) => name.endsWith('.tgz')),
  );
}
const project = path.join(dir, 'project');
run('mkdir', ['-p', project], dir);
writeFileSync(path.join(project, 'package.json'), '{ "name": "install-check", "private": true }\n');
run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', tarball], project);
const listed = run('npm', ['ls', '--omit=dev', '--omit=optional', '--all', '--parseable'], project)
  .split('\n')
  .filter(Boolean)
  .map((line) => path.relative(project, line));
const peers = listed.filter((line) => OPTIONAL_PEER.test(line));
const size = run('du', ['-sh', path.join(project, 'node_modules')], project).split('\t')[0];
console.log(`packages installed: ${listed.length - 1}; node_modules: ${size}`);
if (peers.length) console.log(`optional peers installed (should be none):\n  ${peers.join('\n  ')}`);
else console.log('no optional peer installed (OpenTelemetry, the ACP SDK, the vendor SDKs)');
if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
else console.log(`kept ${dir}`);
process.exitCode = peers.length ? 1 : 0;
