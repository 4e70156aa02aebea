/**
 * What the attempt daemon shares with the command's client (`bin/daemon-client.js`, loaded by the bin before any of
 * the harness): where a user's daemons listen, their names, the frames they speak. Loaded from the package's file,
 * so the two ends cannot drift apart.
 */
import { createRequire } from 'node:module';
import type net from 'node:net';
import path from 'node:path';
import { PACKAGE_ROOT } from '../runtime/executables.js';

/** A frame read from a daemon connection. */
export interface DaemonFrame {
  type: number;
  payload: Buffer;
}

/** The surface of bin/daemon-client.js the harness uses. */
export interface DaemonShared {
  ATTEMPT_COMMANDS: readonly string[];
  CI_VARIABLES: readonly string[];
  DAEMON_ENV: string;
  DAEMON_DIR_ENV: string;
  DAEMON_IDLE_ENV: string;
  FRAME: { stdout: number; stderr: number; exit: number; accepted: number; refused: number; reply: number };
  FrameReader: new () => { push(chunk: Buffer): DaemonFrame[] };
  HINTS: Record<string, string>;
  MAX_REQUEST_BYTES: number;
  PROTOCOL: number;
  DaemonSettingError: new (code: string, message: string) => Error & { code: string };
  checkDaemonDirectory(dir: string): string | null;
  ciVariable(env?: NodeJS.ProcessEnv): string | null;
  connect(socketPath: string): Promise<net.Socket>;
  daemonByDefault(env?: NodeJS.ProcessEnv): boolean;
  daemonDirectory(env?: NodeJS.ProcessEnv): string;
  daemonEnabled(env?: NodeJS.ProcessEnv): boolean;
  daemonIdleMs(env?: NodeJS.ProcessEnv): number;
  encodeFrame(type: number, payload: Buffer | string | object): Buffer;
  logPathFor(socketPath: string): string;
  startingPathFor(socketPath: string): string;
}

let shared: DaemonShared | null = null;

/** bin/daemon-client.js, loaded once. */
export function daemonShared(): DaemonShared {
  shared ??= createRequire(path.join(PACKAGE_ROOT, 'bin', 'daemon-client.js'))('./daemon-client.js') as DaemonShared;
  return shared;
}
