/**
 * A second process for the run store contract: `node --import tsx create-runs-child.ts <run_root> <count> <label>`
 * creates `count` runs labelled `<label> <i>`, updates each `UPDATES` times (enough for the two processes together to
 * compact the index log), and after each create checks with a lock-free `listRuns` that its run is listed. Prints the
 * run ids as a JSON array; any failure exits non-zero with the error on stderr.
 */
import { createRun, listRuns, updateRun } from '../../src/runtime/run-store.js';

const UPDATES = 3;
const [runRoot, count, label] = process.argv.slice(2);
if (!runRoot || !count || !label) throw new Error('usage: create-runs-child.ts <run_root> <count> <label>');

const ids: string[] = [];
for (let i = 0; i < Number(count); i += 1) {
  const run = await createRun(runRoot, {
    engine: 'codex',
    translateMode: 0,
    modelMode: 'scripted',
    script: null,
    label: `${label} ${i}`,
  });
  ids.push(run.run_id);
  if (!(await listRuns(runRoot)).some((listed) => listed.run_id === run.run_id))
    throw new Error(`${run.run_id} is not listed right after its createRun`);
  for (let update = 1; update <= UPDATES; update += 1)
    await updateRun(runRoot, run.run_id, { session_id: `${label} ${i} update ${update}` });
}
process.stdout.write(`${JSON.stringify(ids)}\n`);
