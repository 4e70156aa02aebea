// The agent's filesystem, set up by the namespace init (namespace-init.cjs) inside the attempt's private mount
// namespace before it starts the engine. The harness made the new root's parts on the host beforehand
// (src/runtime/isolation/new-root.ts, writeNewRoot): an empty mount point, the skeleton (directories, empty files
// to bind files on, symlinks such as /bin -> usr/bin) and two fstabs. One `sh` then carries the plan out with
// util-linux and coreutils, each step a short process of its own:
//   1. `mount -a -T <fstab>`: the skeleton bound read-only on the mount point (the agent's `/`, read-only from the
//      start; the mount is private: the host sees an empty directory), fresh tmpfs mounts on its /tmp and /dev/shm,
//      a fresh /proc, a fresh devpts, and the binds (the system and the engine read-only, the workspace read-write,
//      .audit read-only) that are not under /tmp or /dev/shm,
//   2. only when something is bound under /tmp or /dev/shm (a run root in the host's /tmp): `cp -a` of the skeleton's
//      entries there into the fresh tmpfs, then `mount -a -T <fstab-scratch>` of those binds,
//   3. `pivot_root . .` in the new root, and `umount -l .`: the old root, stacked on the new one, is detached;
//      nothing of the host is left underneath.
// The engine is then started in a nested user and mount namespace (launchArgs below), where those mounts are locked.
// Plain CommonJS with Node's own modules only, like the init.
'use strict';
const { spawn } = require('node:child_process');

/**
 * The steps (see the header), with the tools and paths as positional parameters; stops at the first that fails, and
 * names it on stderr's last line (`@step <name>`), so a failure says which step, not only what the tool printed.
 */
const SETUP = [
  'mount="$1" cp="$2" pivot_root="$3" umount="$4" root="$5" skeleton="$6" fstab="$7" scratch="$8"',
  'shift 8',
  'failed() { echo "@step $1" >&2; exit 1; }',
  '"$mount" -a -T "$fstab" || failed binds',
  'if [ "$#" -gt 0 ]; then',
  '  for top do "$cp" -a "$skeleton$top" "$root$top" || failed scratch; done',
  '  "$mount" -a -T "$scratch" || failed binds',
  'fi',
  'cd "$root" || failed pivot_root',
  '"$pivot_root" . . || failed pivot_root',
  '"$umount" -l . || failed detach',
].join('\n');

/** Hex of UTF-8, as every string of an init message. */
function unhex(text) {
  return Buffer.from(text ?? '', 'hex').toString('utf8');
}

/**
 * A "mounts" line, or null for any other line: "mounts <root> <skeleton> <fstab> <fstab-scratch> <sh> <mount> <cp>
 * <pivot_root> <umount> <unshare> <top count> <top>...", every string as hex of its UTF-8 (the tops: the skeleton's
 * entries under /tmp and /dev/shm). A plan that cannot be carried out fails the attempt: there is no fallback to the
 * host's filesystem once one was sent (only the harness's probe, before the run, may choose the host).
 */
function parseMounts(line) {
  const fields = line.split(' ');
  if (fields.shift() !== 'mounts') return null;
  const text = () => unhex(fields.shift());
  const [root, skeleton, fstab, scratchFstab] = [text(), text(), text(), text()];
  const [sh, mount, cp, pivotRoot, umount, unshare] = [text(), text(), text(), text(), text(), text()];
  const scratchTops = Array.from({ length: Number(fields.shift() ?? 0) }, text);
  const tools = { sh, mount, cp, pivotRoot, umount, unshare };
  return { type: 'mounts', root, skeleton, fstab, scratchFstab, scratchTops, tools };
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
 * Carries the plan out (see the header); rejects with what failed: an Error whose `step` names the step (`binds`,
 * `scratch`, `pivot_root`, `detach`) and whose message says why, with the new root's and the skeleton's
 * host paths taken out of the paths the tools name (a bind's target is then the path the agent would have seen). The
 * caller's cwd is / afterwards. The steps run without blocking the init, which sets its network up meanwhile.
 */
async function contain(plan) {
  const { tools } = plan;
  const args = [
    ...[tools.mount, tools.cp, tools.pivotRoot, tools.umount],
    ...[plan.root, plan.skeleton, plan.fstab, plan.scratchFstab, ...plan.scratchTops],
  ];
  const why = await runTool(tools.sh, ['-c', SETUP, 'sh', ...args]);
  if (why !== null) {
    const parts = why.split('; ');
    const marker = parts.length > 0 && parts[parts.length - 1].startsWith('@step ') ? parts.pop() : null;
    const step = marker ? marker.slice('@step '.length) : 'setup';
    const said =
      parts.join('; ').split(plan.root).join('').split(plan.skeleton).join('') || 'the step failed without a message';
    throw Object.assign(new Error(`${step}: ${said}`), { step, code: 'ISOLATION_SETUP_FAILED' });
  }
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
