/**
 * Live progress of the attempts tests run, from the workers to the reporter. Vitest hands a reporter a test's meta
 * only when the test ends, so the `agent` fixture sends its attempts' progress over a side channel instead: a Unix
 * socket the plugin opens in the main process (its path is provided to tests with the config), one JSON line per
 * change (an attempt started, a turn began, a tool was called, the attempt ended). Best-effort both ways: a worker
 * that cannot reach the socket runs its tests the same, without progress.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createAttemptProgress } from '../core/attempt-progress.js';
import type { RaspEvent } from '../protocol/index.js';

/** One progress message of a running attempt. */
export interface ProgressMessage {
  /** Unique per attempt. */
  id: string;
  engine: string;
  /** The test's full name. */
  label: string;
  state: 'running' | 'ended';
  turn: number;
  toolCalls: number;
}

/** The main process's end: receives the messages. */
export interface ProgressHub {
  /** The socket path tests connect to. */
  readonly address: string;
  /** The attempts running now, by id, with the time their first message arrived. */
  readonly running: ReadonlyMap<string, ProgressMessage & { since: number }>;
  /** Stops listening (the socket file is removed). */
  close(): void;
}

const MAX_LINE = 64 * 1024;

/** Opens a hub on a fresh Unix socket in the temp directory. The server never keeps the process alive. */
export function openProgressHub(): ProgressHub {
  const address = path.join(
    os.tmpdir(),
    `agent-harness-progress-${process.pid}-${randomBytes(4).toString('hex')}.sock`,
  );
  const running = new Map<string, ProgressMessage & { since: number }>();
  const take = (line: string): void => {
    let message: ProgressMessage;
    try {
      message = JSON.parse(line) as ProgressMessage;
    } catch {
      return;
    }
    if (typeof message?.id !== 'string') return;
    if (message.state === 'ended') running.delete(message.id);
    else running.set(message.id, { ...message, since: running.get(message.id)?.since ?? Date.now() });
  };
  const server = net.createServer((socket) => {
    socket.unref();
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
        take(buffered.slice(0, at));
        buffered = buffered.slice(at + 1);
      }
      if (buffered.length > MAX_LINE) buffered = '';
    });
    socket.on('error', () => undefined);
  });
  server.on('error', () => undefined);
  server.listen(address);
  server.unref();
  // The socket file goes with the process, whichever way Vitest ends.
  const removeSocket = (): void => fs.rmSync(address, { force: true });
  process.once('exit', removeSocket);
  return {
    address,
    running,
    close() {
      process.off('exit', removeSocket);
      if (server.listening) {
        server.close();
        removeSocket();
      }
      // Closed before it was listening: close once it is, so no socket file is left behind.
      else
        server.once('listening', () => {
          server.close();
          removeSocket();
        });
    },
  };
}

/** A worker's end: sends messages to the hub at `address` (connected on first use, errors ignored). */
export interface ProgressSender {
  send(message: ProgressMessage): void;
}

const senders = new Map<string, ProgressSender>();

/** The sender for `address` (one connection per worker). */
export function progressSender(address: string): ProgressSender {
  const existing = senders.get(address);
  if (existing) return existing;
  let socket: net.Socket | null = null;
  let broken = false;
  const sender: ProgressSender = {
    send(message) {
      if (broken) return;
      if (!socket) {
        socket = net.createConnection(address);
        socket.on('error', () => {
          broken = true;
        });
        socket.unref();
      }
      socket.write(`${JSON.stringify(message)}\n`);
    },
  };
  senders.set(address, sender);
  return sender;
}

/** Sends the progress of one attempt: `onRaspEvent` for the attempt request, `end()` once it is over. */
export function trackAttemptProgress(
  sender: ProgressSender | null,
  engine: string,
  label: string,
): { onRaspEvent?: (event: RaspEvent) => void; end(): void } {
  if (!sender) return { end: () => undefined };
  const id = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const progress = createAttemptProgress(engine, label);
  let last = '';
  const send = (state: ProgressMessage['state']): void => {
    const { turn, toolCalls } = progress.snapshot();
    const key = `${state}:${turn}:${toolCalls}`;
    if (key === last) return;
    last = key;
    sender.send({ id, engine, label, state, turn, toolCalls });
  };
  send('running');
  return {
    onRaspEvent(event) {
      progress.observe(event);
      send('running');
    },
    end: () => send('ended'),
  };
}
