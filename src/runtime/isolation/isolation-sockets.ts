/**
 * The sockets an attempt's namespaces are wired by: the forwarded loopback targets (the model server's port, HTTP MCP
 * servers on the host's loopback), the short-path socket directory, and a model channel listened on by path (a PTY's
 * init connects to it once). Moved out of attempt-isolation.ts whole (issue 44: one room per wiring).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { awaitGreeting } from './isolation-lifeline.js';
import { serveModelChannel } from './model-channel.js';
import { ownedDirPrefix } from './stale-dirs.js';

/** A loopback port the engine must reach inside the namespace (the model server's, an MCP server's). */
export function loopbackPort(url: string): number | null {
  return loopbackTarget(url)?.port ?? null;
}

/** The host loopback address and port `url` names, or null when it is not on loopback (or not a URL). */
export function loopbackTarget(url: string): ForwardTarget | null {
  try {
    const parsed = new URL(url);
    const host = { '127.0.0.1': '127.0.0.1', localhost: 'localhost', '[::1]': '::1' }[parsed.hostname];
    if (!host) return null;
    return { host, port: Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80)) };
  } catch {
    return null;
  }
}

/** Where a forwarded port's connections go on the host. */
export interface ForwardTarget {
  host: string;
  port: number;
}

/**
 * The ports forwarded into the namespace: the model server's first, then each of `urls` on loopback, one per port
 * (the model's port is the model's: both are on the host's loopback, so another server cannot hold it).
 */
export function forwardTargets(modelPort: number | null, urls: readonly string[]): ForwardTarget[] {
  const targets: ForwardTarget[] = modelPort === null ? [] : [{ host: '127.0.0.1', port: modelPort }];
  for (const url of urls) {
    const target = loopbackTarget(url);
    if (target && !targets.some((t) => t.port === target.port)) targets.push(target);
  }
  return targets;
}

/** Where the socket directories are made: a short path. */
export function socketBase(): string {
  return os.tmpdir().length <= 60 ? os.tmpdir() : '/tmp';
}

/** A short private directory for the sockets (a Unix socket path must stay under ~107 bytes). */
export function socketDir(): string {
  return fs.mkdtempSync(ownedDirPrefix(socketBase(), 'ah-ns-'));
}

/**
 * Listens on a Unix socket for the init's model channel (wrap mode): the first connection that opens with
 * `hello <token>` is served as the channel (its streams carried to `target`); any other is closed unread.
 * `accepted` resolves when the channel is taken.
 */
export async function listenChannel(
  socket: string,
  token: string,
  target: ForwardTarget,
): Promise<{ server: net.Server; accepted: Promise<void>; stop: () => void }> {
  let taken = false;
  /** Every open connection (the channel and refused ones not yet gone), destroyed by stop(). */
  const connections = new Set<net.Socket>();
  let stopChannel: (() => void) | null = null;
  let markAccepted: () => void = () => undefined;
  const accepted = new Promise<void>((resolve) => {
    markAccepted = resolve;
  });
  const server = net.createServer((connection) => {
    connections.add(connection);
    connection.on('close', () => connections.delete(connection));
    connection.on('error', () => undefined);
    if (taken) {
      connection.destroy();
      return;
    }
    awaitGreeting(
      connection,
      token,
      () => !taken,
      (rest) => {
        taken = true;
        if (rest.length > 0) connection.unshift(rest);
        stopChannel = serveModelChannel(connection, target.port, target.host);
        connection.resume();
        markAccepted();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  return {
    server,
    accepted,
    stop: () => {
      stopChannel?.();
      for (const connection of connections) connection.destroy();
    },
  };
}
