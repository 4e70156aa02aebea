/**
 * The namespaces' init (the first process inside an attempt's namespaces; see `runtime/namespace-init.cjs`): where it
 * is, and its command line and messages. It sits at the package root, in a checkout and in the published package
 * alike.
 */
import path from 'node:path';
import { PACKAGE_ROOT } from '../executables.js';
import type { NewRoot } from './new-root.js';
import type { MountTools } from './probe.js';

/** The init, a plain CommonJS file run by this process's Node. */
export const NAMESPACE_INIT = path.join(PACKAGE_ROOT, 'runtime', 'namespace-init.cjs');

/**
 * The environment an init starts with when it waits for its engine command (which brings the engine's own), and
 * the probe's trial: nothing of the host's (no NODE_OPTIONS to make a trial pass that the init fails).
 */
export const INIT_ENV: Readonly<Record<string, string>> = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' };

/** How an init reaches the harness: a Unix socket's path, or a descriptor it inherited (`fd:N`). */
export type InitChannel = string;

/** The channel argument for a descriptor the init inherits at `fd`. */
export function passedFd(fd: number): InitChannel {
  return `fd:${fd}`;
}

/** What an init is told about its namespaces on its command line. */
export interface InitSetup {
  /** The lifeline: a path (the init connects, then greets with the token) or a passed descriptor. */
  lifeline: InitChannel;
  /** What the init sends first on the lifeline (`hello <token>`): the harness takes no other connection for it. */
  token: string;
  /** Null: the loopback stays down (no network namespace of its own). Else the init brings it up with this `ip`. */
  loopback: string | null;
  /**
   * Each port forwarded into the network namespace, and where its connections go: a path (the init connects to it
   * for each), or a passed descriptor that carries them all (the model channel, `runtime/model-channel.cjs`). A port
   * of 0: the init waits for it on the lifeline ({@link portsLine}).
   */
  forwards: ReadonlyArray<{ port: number; socket: InitChannel }>;
}

/** The init's arguments: lifeline, token, loopback, forward count, then port and channel each. */
export function initArgs(setup: InitSetup): string[] {
  return [
    setup.lifeline,
    setup.token,
    setup.loopback ?? '-',
    String(setup.forwards.length),
    ...setup.forwards.flatMap((forward) => [String(forward.port), forward.socket]),
  ];
}

/** The `unshare` flags an attempt's namespaces are made with; `--net` only when the engine gets a network of its own. */
export function unshareFlags(ownNetwork: boolean): string[] {
  return ['--map-root-user', ...(ownNetwork ? ['--net'] : []), '--pid', '--fork', '--kill-child', '--mount-proc'];
}

/** The command that starts an init in new namespaces: `unshare <flags> node namespace-init.cjs <args>`. */
export function initCommandLine(unshare: string, ownNetwork: boolean, setup: InitSetup): string[] {
  return [unshare, ...unshareFlags(ownNetwork), process.execPath, NAMESPACE_INIT, ...initArgs(setup)];
}

/**
 * The ports message for an init started before the model server listened (its forwards given as port 0 on its
 * command line): one port per forward, in order.
 */
export function portsLine(ports: readonly number[]): string {
  return ['ports', ...ports.map(String)].join(' ');
}

function hex(text: string): string {
  return Buffer.from(text, 'utf8').toString('hex');
}

/**
 * The launch message for an init: one line, every string as the hex of its UTF-8, since an argument or a variable may
 * hold spaces and newlines.
 */
export function launchLine(command: {
  file: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd: string;
}): string {
  const env = Object.entries(command.env).map(([name, value]) => hex(`${name}=${value}`));
  return [
    'launch',
    hex(command.file),
    hex(command.cwd),
    String(command.args.length),
    ...command.args.map(hex),
    String(env.length),
    ...env,
  ].join(' ');
}

/**
 * The mount message for an init (`runtime/namespace-mounts.cjs`): the new root's parts on the host ({@link NewRoot}),
 * the tools, and the skeleton's entries to copy into the scratch tmpfs, every string as the hex of its UTF-8. A plan
 * the init cannot carry out ends the attempt (fails closed): it never starts the engine on the host's filesystem.
 */
export function mountsLine(newRoot: NewRoot, tools: MountTools): string {
  return [
    'mounts',
    ...[newRoot.root, newRoot.skeleton, newRoot.fstab, newRoot.scratchFstab].map(hex),
    ...[tools.sh, tools.mount, tools.cp, tools.pivotRoot, tools.umount, tools.unshare].map(hex),
    String(newRoot.scratchTops.length),
    ...newRoot.scratchTops.map(hex),
  ].join(' ');
}
