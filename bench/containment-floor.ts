/**
 * The floor of containment: what the namespaces an attempt gets cost with standard tools alone, no Node init and no
 * model forward. One `sh`, started by `unshare` in new user, network, PID and mount namespaces as the init is, brings
 * the loopback up and sets up the agent's filesystem with the init's own setup script (`namespace-mounts.cjs`,
 * `SETUP`) and the first attempt's mount plan, then execs `/bin/true` in the nested user namespace an engine gets.
 * Timed against `/bin/true` alone. What is left above this floor (the init's Node start, its lifeline, the forward)
 * is what the isolation module adds to it.
 */
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { unshareFlags } from '../src/runtime/isolation/init-scripts.js';
import type { MountPlan } from '../src/runtime/isolation/mount-plan.js';
import { writeNewRoot } from '../src/runtime/isolation/new-root.js';
import { findNamespaceTools } from '../src/runtime/isolation/probe.js';
import { measure, root, runProcess, type Scratch, type Side } from './util.js';

const { SETUP, launchArgs } = createRequire(import.meta.url)(path.join(root, 'runtime', 'namespace-mounts.cjs')) as {
  SETUP: string;
  launchArgs: (unshare: string, file: string, args: string[]) => { file: string; args: string[] };
};

/**
 * The script: `ip` (1) and the engine's nested command (2, split on spaces), then the init's setup with the rest of
 * the parameters as the init gives them, the loopback, and the nested exec.
 */
const FLOOR = `setup() {\n${SETUP}\n}\nip="$1"; run="$2"; shift 2\nsetup "$@" || exit\n"$ip" link set lo up || exit\nexec $run`;

/** `/bin/true`, or where this machine has it. */
function trueBinary(): string {
  return fs.existsSync('/usr/bin/true') ? '/usr/bin/true' : '/bin/true';
}

/** The two sides: `true` alone, and `true` in the contained namespaces set up by standard tools alone. */
export function containmentFloorSides(plan: MountPlan, scratch: Scratch): Side[] {
  const tools = findNamespaceTools();
  const mountTools = tools.filesystem.tools;
  if (!tools.unshare || !tools.ip || !mountTools)
    throw new Error(`bench: no namespace tools here (${tools.filesystem.reason ?? 'unshare or ip missing'})`);
  const { unshare, ip } = tools;
  const env = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };
  const trueFile = trueBinary();
  const contained = async () => {
    const dir = scratch.dir('floor');
    try {
      const parts = writeNewRoot(plan, dir);
      const { sh, mount, cp, pivotRoot, umount } = mountTools;
      const nested = launchArgs(unshare, trueFile, []);
      const setup = [mount, cp, pivotRoot, umount, parts.root, parts.skeleton, parts.fstab, parts.scratchFstab];
      const args = [ip, [nested.file, ...nested.args].join(' '), ...setup, ...parts.scratchTops];
      return { timing: (await measure(() => runContained(unshare, sh, args, env))).timing };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  return [
    {
      name: 'true',
      run: async () => ({ timing: (await measure(() => runProcess(trueFile, [], { env, cwd: '/' }))).timing }),
    },
    { name: 'floor', run: contained },
  ];
}

/** Runs the floor script once in new namespaces, as the init is started. */
function runContained(unshare: string, sh: string, args: string[], env: NodeJS.ProcessEnv) {
  return runProcess(unshare, [...unshareFlags(true), sh, '-c', FLOOR, 'sh', ...args], { env, cwd: '/' });
}
