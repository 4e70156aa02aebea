// The agent's filesystem, set up by the namespace init (namespace-init.cjs) inside the attempt's private mount
// namespace before it starts the engine. The harness made the new root's parts on the host beforehand
// (src/runtime/isolation/mount-plan.ts, writeNewRoot): an empty mount point, the skeleton (directories, empty files
// to bind files on, symlinks such as /bin -> usr/bin) and an fstab. One `sh` then carries the plan out with
// util-linux and coreutils, each step a short process of its own:
//   1. `mount -t tmpfs` on the mount point (the mount is private: the host sees an empty directory),
//   2. `cp -a` of the skeleton into it,
//   3. `mount -a -T <fstab>`: the binds (the system and the engine read-only, the workspace read-write, .audit
//      read-only), a fresh /proc, a fresh devpts,
//   4. `pivot_root . .` in the new root, and `umount -l .`: the old root, stacked on the new one, is detached;
//      nothing of the host is left underneath,
//   5. `mount -o remount,bind,ro /`: the new root itself is read-only (/tmp and /dev/shm are binds of their own).
// The engine is then started in a nested user and mount namespace (launchArgs below), where those mounts are locked.
// Plain CommonJS with Node's own modules only, like the init.
'use strict';
const { spawn } = require('node:child_process');

/** The steps (see the header), with the tools and paths as positional parameters; stops at the first that fails. */
const SETUP = [
  'mount="$1" cp="$2" pivot_root="$3" umount="$4" root="$5" skeleton="$6" fstab="$7"',
  '"$mount" -t tmpfs -o mode=0755 agent-root "$root" || exit',
  '"$cp" -a "$skeleton/." "$root/" || exit',
  '"$mount" -a -T "$fstab" || exit',
  'cd "$root" || exit',
  '"$pivot_root" . . || exit',
  '"$umount" -l . || exit',
  '"$mount" -o remount,bind,ro /',
].join('\n');

/** Hex of UTF-8, as every string of an init message. */
function unhex(text) {
  return Buffer.from(text ?? '', 'hex').toString('utf8');
}

/**
 * A "mounts" line, or null for any other line:
 * "mounts <root> <skeleton> <fstab> <required 0|1> <sh> <mount> <cp> <pivot_root> <umount> <unshare>", every string
 * as hex of its UTF-8.
 */
function parseMounts(line) {
  const fields = line.split(' ');
  if (fields.shift() !== 'mounts') return null;
  const text = () => unhex(fields.shift());
  const [root, skeleton, fstab] = [text(), text(), text()];
  const required = fields.shift() === '1';
  const [sh, mount, cp, pivotRoot, umount, unshare] = [text(), text(), text(), text(), text(), text()];
  return { root, skeleton, fstab, required, tools: { sh, mount, cp, pivotRoot, umount, unshare } };
}

/** Runs `file args` to its end; resolves with null, or with what went wrong (its stderr, else its exit). */
function runTool(file, args) {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text) => (stderr += text));
    child.once('error', (error) => resolve(error.message));
    child.once('close', (code) => resolve(code === 0 ? null : stderr.trim().split('\n').join('; ') || `exit ${code}`));
  });
}

/**
 * Carries the plan out (see the header); rejects with what failed. The caller's cwd is / afterwards. The steps run
 * without blocking the init, which sets its network up meanwhile.
 */
async function contain(plan) {
  const { tools } = plan;
  const args = [tools.mount, tools.cp, tools.pivotRoot, tools.umount, plan.root, plan.skeleton, plan.fstab];
  const why = await runTool(tools.sh, ['-c', SETUP, 'sh', ...args]);
  if (why !== null) throw new Error(`setting up the new root ${plan.root}: ${why}`);
  process.chdir('/');
}

/**
 * The command that starts the engine in a user and mount namespace of its own, nested in the attempt's (`unshare
 * --user --map-root-user --mount`, which then execs the engine: same process, same exit): every mount the init made
 * is locked there (the kernel locks mounts copied into a namespace owned by a less privileged user namespace), so the
 * engine, root of its nested namespace, can neither remount a read-only bind writable nor unmount one to uncover
 * what is under it, and has no capability in the init's namespace (no ptrace of the init). Its own tools that
 * sandbox with user namespaces (codex's bwrap) still work, as bubblewrap's nesting does.
 */
function launchArgs(unshare, file, args) {
  return { file: unshare, args: ['--user', '--map-root-user', '--mount', '--', file, ...args] };
}

module.exports = { SETUP, parseMounts, contain, launchArgs, runTool, unhex };
