/**
 * The shapes of an attempt's isolation: what opening it takes, what wrapping a command takes and gives, and the
 * isolation an attempt holds (attempt-isolation.ts opens it).
 */
import type net from 'node:net';
import type { IsolationMode, IsolationRecord } from '../../protocol/index.js';
import type { ProcessResult } from '../process-result.js';
import type { SpawnedSplit, SpawnSplitOptions } from '../process.js';
import type { EarlyInit } from './early-init.js';
import type { MountPlan } from './mount-plan.js';
import type { NamespaceSupport } from './probe.js';

/** What {@link openIsolation} needs. */
export interface OpenIsolationOptions {
  mode: IsolationMode;
  /** The model server's URL (scripted mode), or null (live mode: the host network is kept on purpose). */
  modelUrl: string | null;
  /**
   * More host-loopback URLs the engine must reach inside the network namespace (HTTP MCP servers): each port is
   * forwarded like the model server's, to the same host. A URL not on loopback, or on the model's port, is skipped.
   */
  forwardUrls?: readonly string[];
  /**
   * Probe result to use instead of probing (tests), or a probe under way (an attempt starts one first, so the trial
   * runs while its run directory is made).
   */
  support?: NamespaceSupport | Promise<NamespaceSupport>;
  /**
   * Starts the init at once ({@link AttemptIsolation.prestart} with this stdin), without waiting for the probe's
   * verdict: the trial and the init's start-up (a Node start) then run side by side. When the verdict is that
   * namespaces are unavailable, the init is killed before it was sent anything, and the isolation is the fallback
   * (or ISOLATION_UNAVAILABLE in mode `require`), as without this option.
   */
  prestart?: SpawnSplitOptions['stdin'];
  /**
   * An init started before the attempt (`early-init.ts`): prestarting adopts it instead of starting one, and sends it
   * the model's port, when it fits (a network namespace, the model's port the one forward, stdin closed). Whatever
   * does not adopt it kills it before this returns.
   */
  early?: EarlyInit | null;
  /**
   * The attempt will contain its filesystem ({@link AttemptIsolation.contain}): where that is unavailable, mode
   * `require` refuses (ISOLATION_UNAVAILABLE) and `auto` records why.
   */
  filesystem?: boolean;
  /**
   * Where {@link AttemptIsolation.contain} makes the new root's parts (`ah-root-<pid>-*`) and the close sweeps stale
   * ones: by default `newRootBase()` (stale-dirs.ts: `/dev/shm` when it is a tmpfs this process may write, else the
   * temp dir).
   */
  newRootBase?: string;
}

/** How {@link AttemptIsolation.wrap} wires the init. */
export interface WrapOptions {
  /**
   * The caller can pass the init sockets as its descriptors 3, 4, … (a `script` attempt: util-linux `script` hands
   * its descriptors on to its child): the init then reaches no path of the harness at all, and the caller gives
   * this process's ends to {@link WrappedCommand.attach} once it has started the command.
   */
  passing?: boolean;
}

/** What {@link AttemptIsolation.wrap} returns: the command to start, and the environment it starts with. */
export interface WrappedCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** With `passing` and namespaces: how many sockets to pass as descriptors 3, 4, …; else 0. */
  passSockets: number;
  /** With `passing` and namespaces: takes this process's ends of the passed sockets, in order. */
  attach?: (sockets: readonly net.Socket[]) => void;
}

/** An attempt's isolation, ready to wrap the engine command. */
export interface AttemptIsolation {
  record: IsolationRecord;
  /**
   * The command to start in a terminal (PTY, `script`) that runs `command` inside the namespaces: the init, with the
   * environment it starts with; the engine's command, environment and directory follow over its lifeline once it
   * is connected. Without namespaces, `command` itself. Once per isolation, and not with {@link prestart}.
   */
  wrap(
    command: { file: string; args: readonly string[]; env: Record<string, string>; cwd: string },
    options?: WrapOptions,
  ): WrappedCommand;
  /**
   * The Unix sockets a wrapped init connects to, and the token it greets with (null when the isolation was opened
   * to be prestarted, or has no namespaces). They are removed once the init is connected.
   */
  paths: { lifeline: string; model: string | null; token: string } | null;
  /**
   * Starts the namespaces and their init now, with split pipes, before the engine command is known (the harness
   * is still writing its config): {@link launch} then only sends the command. Does nothing without namespaces.
   */
  prestart(stdin: SpawnSplitOptions['stdin']): void;
  /**
   * Has the prestarted init run `file args` with exactly `env` in `cwd`, and returns the child to supervise (the
   * engine's output comes out of its pipes); null when nothing was prestarted.
   */
  launch(command: {
    file: string;
    args: readonly string[];
    env: Record<string, string>;
    cwd: string;
  }): SpawnedSplit | null;
  /**
   * The engine's own exit (not init's 128+n), or the spawn error init reported. Waits (briefly) for the init's
   * lifeline to close, so its last report is in.
   */
  settle(result: ProcessResult): Promise<ProcessResult>;
  /** Stops the forwarders and removes their sockets. */
  close(): Promise<void>;
  /**
   * Has the init build the agent's filesystem from `plan` and pivot into it before the engine starts (sent now to
   * a prestarted init, which sets it up while the harness writes the engine's config; with the launch otherwise).
   * Records `filesystem: 'mount-namespace'` and what is exposed; does nothing where filesystem containment is
   * unavailable (the record then says `host`, and why). Once, before the launch.
   */
  contain(plan: MountPlan): void;
  /**
   * Resolves once the init has reported its filesystem set up (true) or failed (false: the record says `host` and
   * why; in mode `require` the attempt then fails at its launch). False at once when nothing was contained.
   */
  contained(): Promise<boolean>;
}
