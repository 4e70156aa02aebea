// The agent's filesystem, set up by the namespace init (namespace-init.cjs) inside the attempt's private mount
// namespace before it starts the engine: a plan built by the harness (src/runtime/isolation/mount-plan.ts) is
// carried out with util-linux only, five short processes:
//   1. `mount -t tmpfs` on the plan's root (an empty host directory; the mount is private, the host sees nothing),
//   2. the skeleton is made in it (directories, empty files to bind files on, symlinks such as /bin -> usr/bin),
//   3. `mount -a -T <fstab>`: the binds (the system and the engine read-only, the workspace read-write, .audit
//      read-only), a fresh /proc, a fresh devpts; the fstab is written under <root>/proc, where the proc mount of
//      this same run hides it,
//   4. `pivot_root` into the new root, and `umount -l` of the old one: nothing of the host is left underneath,
//   5. `mount -o remount,bind,ro /`: the new root itself is read-only (/tmp and /dev/shm are binds of their own).
// The engine is then started in a nested user and mount namespace (launchArgs below), where those mounts are locked.
// Plain CommonJS with Node's own modules only, like the init.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

/** Hex of UTF-8, as every string of an init message. */
function unhex(text) {
  return Buffer.from(text ?? '', 'hex').toString('utf8');
}

/**
 * A "mounts" line, or null for any other line:
 * "mounts <root> <required 0|1> <mount> <pivot_root> <umount> <unshare> <fstab> <skeleton count>
 *  [<dir|file|link> <path> <target>]...", every string as hex of its UTF-8.
 */
function parseMounts(line) {
  const fields = line.split(' ');
  if (fields.shift() !== 'mounts') return null;
  const text = () => unhex(fields.shift());
  const plan = {
    root: text(),
    required: fields.shift() === '1',
    tools: { mount: text(), pivotRoot: text(), umount: text(), unshare: text() },
    fstab: text(),
    skeleton: [],
  };
  const count = Number(fields.shift() ?? 0);
  for (let i = 0; i < count; i++) plan.skeleton.push({ type: fields.shift(), path: text(), target: text() });
  return plan;
}

/** Runs `file args`; resolves once it exited 0, rejects with what went wrong otherwise. */
function run(file, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text) => (stderr += text));
    const failed = (why) => reject(new Error(`${path.basename(file)} ${args.join(' ')}: ${why}`));
    child.once('error', (error) => failed(error.message));
    child.once('close', (code) => {
      if (code === 0) resolve();
      else failed(stderr.trim().split('\n')[0] || `exit ${code}`);
    });
  });
}

/**
 * Carries the plan out (see the header); rejects with what failed. The caller's cwd is / afterwards. The tools run
 * without blocking the init, which sets its network up meanwhile.
 */
async function contain(plan) {
  const { root, tools } = plan;
  await run(tools.mount, ['-t', 'tmpfs', '-o', 'mode=0755', 'agent-root', root]);
  for (const entry of plan.skeleton) {
    const at = path.join(root, entry.path);
    if (entry.type === 'dir') {
      fs.mkdirSync(at, { recursive: true });
      if (entry.target) fs.chmodSync(at, parseInt(entry.target, 8));
    } else if (entry.type === 'file') fs.writeFileSync(at, '', { flag: 'a' });
    else if (entry.type === 'link') fs.symlinkSync(entry.target, at);
  }
  const fstab = path.join(root, 'proc', '.fstab');
  fs.writeFileSync(fstab, plan.fstab);
  await run(tools.mount, ['-a', '-T', fstab]);
  const old = path.join(root, '.old-root');
  fs.mkdirSync(old);
  await run(tools.pivotRoot, [root, old]);
  process.chdir('/');
  await run(tools.umount, ['-l', '/.old-root']);
  fs.rmdirSync('/.old-root');
  await run(tools.mount, ['-o', 'remount,bind,ro', '/']);
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

module.exports = { parseMounts, contain, launchArgs };
