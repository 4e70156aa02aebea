// Keeps the `prepare` script out of the packed package.json, as pinst does for postinstall:
//   node scripts/pack-manifest.mjs disable   (prepack, after the build) renames scripts.prepare to scripts._prepare
//   node scripts/pack-manifest.mjs enable    (postpack) renames it back
// (a third argument names another package.json: the contract test works on a copy)
// `prepare` builds dist/ in a checkout (npm ci, a git dependency); the tarball ships dist/ and not scripts/, so there
// it would name a file that is not there, and npm lists it as an install script to approve at every install.
// `enable` also repairs a checkout a failed pack left with `_prepare`.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const file = process.argv[3] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'package.json');
const [from, to] = process.argv[2] === 'disable' ? ['prepare', '_prepare'] : ['_prepare', 'prepare'];
if (!['disable', 'enable'].includes(process.argv[2] ?? '')) {
  console.error(`usage: node scripts/pack-manifest.mjs disable|enable (got ${JSON.stringify(process.argv[2])})`);
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(file, 'utf8'));
if (manifest.scripts && from in manifest.scripts) {
  // Rebuilt in the same key order, so that package.json reads the same after a round trip.
  manifest.scripts = Object.fromEntries(Object.entries(manifest.scripts).map(([k, v]) => [k === from ? to : k, v]));
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
}
