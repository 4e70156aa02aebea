// The floor of the run-dir figure: a fresh Node process that lists a directory tree the least an attempt's two
// snapshots can (before and after the engine): twice, each a recursive readdir plus an lstat of every entry, keeping
// nothing. bench/run-dir.ts runs it on the same 10,000-file run directory. Plain JavaScript, Node's modules only.
//   node bench/walk-floor.mjs DIR   prints the milliseconds the two walks took, and the entries of one
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

/** Entries under `dir`, each lstat-ed; `.audit` is left out, as the snapshots leave it out. */
function walk(dir) {
  let entries = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop();
    for (const name of fs.readdirSync(current)) {
      if (current === dir && name === '.audit') continue;
      const full = path.join(current, name);
      const stat = fs.lstatSync(full);
      entries += 1;
      if (stat.isDirectory()) pending.push(full);
    }
  }
  return entries;
}

const started = performance.now();
walk(process.argv[2]);
const entries = walk(process.argv[2]);
console.log(`${(performance.now() - started).toFixed(1)} ${entries}`);
