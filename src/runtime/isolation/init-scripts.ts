/**
 * The two implementations of the namespaces' init (the first process inside an attempt's namespaces; see
 * `runtime/namespace-init.cjs`): the Perl one, used where the probe's trial ran it, and the Node one. Same command
 * line, same messages. Both sit at the package root, in a checkout and in the published package alike.
 */
import path from 'node:path';
import { PACKAGE_ROOT } from '../executables.js';

/**
 * The environment variable that picks the init: `auto` (default: the Perl init where the probe's trial ran it, else
 * the Node one) or `node` (always the Node init).
 */
export const NAMESPACE_INIT_ENV = 'AGENT_HARNESS_NAMESPACE_INIT';

/** The value of `AGENT_HARNESS_NAMESPACE_INIT` in `env`, trimmed, `auto` when unset or empty (checked by mode.ts). */
export function namespaceInitSetting(env: NodeJS.ProcessEnv = process.env): string {
  return env[NAMESPACE_INIT_ENV]?.trim() || 'auto';
}

/** The Node init. */
export const NAMESPACE_INIT = path.join(PACKAGE_ROOT, 'runtime', 'namespace-init.cjs');

/** The Perl init (Debian's `perl-base` only). */
export const NAMESPACE_INIT_PERL = path.join(PACKAGE_ROOT, 'runtime', 'namespace-init.pl');

/**
 * The environment an init starts with when it waits for its engine command (which brings the engine's own), and
 * the probe's trials: nothing of the host's (no PERL5LIB or NODE_OPTIONS to make a trial pass that the init fails).
 */
export const INIT_ENV: Readonly<Record<string, string>> = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' };

/**
 * The syscall numbers the Perl init hardens itself with on this architecture (`prctl`, `unshare`), as its command
 * line takes them: `"<prctl>,<unshare>"`. Null where they are not known here: the init then runs without (the
 * engine in the init's own user namespace, the init traceable by it), and `doctor` says so.
 */
export function hardeningSyscalls(arch: string = process.arch): string | null {
  // x86-64's own table; arm64, riscv64 and loongarch64 share the generic one (asm-generic/unistd.h).
  if (arch === 'x64') return '157,272';
  if (arch === 'arm64' || arch === 'riscv64' || arch === 'loong64') return '167,97';
  return null;
}

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
  /**
   * Null: the loopback stays down (no network namespace of its own). Else it is brought up: the Node init runs this
   * `ip`, the Perl init does it itself and ignores the value.
   */
  loopback: string | null;
  /** {@link hardeningSyscalls}, where the probe's trial hardened the Perl init; null: not hardened. */
  harden: string | null;
  /**
   * Each port forwarded into the network namespace, and where its connections go: a path (the init connects to it
   * for each), or a passed descriptor that carries them all (the model channel, `runtime/model-channel.cjs`).
   */
  forwards: ReadonlyArray<{ port: number; socket: InitChannel }>;
}

/**
 * The init's arguments before the engine command: lifeline, token, loopback, harden, forward count, then port and
 * channel each.
 */
export function initArgs(setup: InitSetup): string[] {
  return [setup.lifeline, setup.token, setup.loopback ?? '-', setup.harden ?? '-', String(setup.forwards.length), ...setup.forwards.flatMap((forward) => [String(forward.port), forward.socket])];
}

function hex(text: string): string {
  return Buffer.from(text, 'utf8').toString('hex');
}

/**
 * The launch message for a prestarted init: one line, every string as the hex of its UTF-8, since an argument or a
 * variable may hold spaces and newlines and the Perl init has no JSON parser.
 */
export function launchLine(command: { file: string; args: readonly string[]; env: Record<string, string>; cwd: string }): string {
  const env = Object.entries(command.env).map(([name, value]) => hex(`${name}=${value}`));
  return ['launch', hex(command.file), hex(command.cwd), String(command.args.length), ...command.args.map(hex), String(env.length), ...env].join(' ');
}
