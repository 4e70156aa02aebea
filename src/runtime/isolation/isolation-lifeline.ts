/**
 * An attempt's lifeline to its namespace init: the init greets it (`hello <token>`), reports over it (started, exit,
 * errors, its filesystem), and dies with the whole namespace when it closes (the harness exited). Moved out of
 * attempt-isolation.ts whole (issue 44: one room per wiring).
 */
import net from 'node:net';
import { StringDecoder } from 'node:string_decoder';

/** What the init reported over the lifeline. */
export type InitReport =
  | { type: 'started'; pid: number }
  | { type: 'exit'; code: number | null; signal: string | null }
  | { type: 'error'; stage: string; message: string; code: string | null }
  | { type: 'filesystem'; contained: boolean; message?: string };

/** Longest first line a connection to the init's sockets may send before it is refused: `hello <token>`. */
export const HELLO_MAX = 256;

/**
 * Waits for `hello <token>` as the first line on `connection`. If it comes while `free()` still holds (no other
 * connection took the place), `onGreeted` gets what followed the line, with the connection paused for it to read
 * on. Otherwise (another first line, one too long, the place taken) the connection is destroyed: nothing more of it
 * is read, and it is sent nothing.
 */
export function awaitGreeting(
  connection: net.Socket,
  token: string,
  free: () => boolean,
  onGreeted: (rest: Buffer) => void,
): void {
  let buffered = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    buffered = Buffer.concat([buffered, chunk]);
    const newline = buffered.indexOf(10);
    if (newline < 0) {
      if (buffered.length > HELLO_MAX) connection.destroy();
      return;
    }
    connection.off('data', onData);
    if (!free() || buffered.subarray(0, newline).toString('utf8') !== `hello ${token}`) {
      connection.destroy();
      return;
    }
    connection.pause();
    onGreeted(buffered.subarray(newline + 1));
  };
  connection.on('data', onData);
}

/**
 * The harness's end of the init's lifeline; the init's newline-delimited reports go to `onReport`. The lifeline is
 * the first connection given to {@link Lifeline.accept} that opens with `hello <token>`: the socket the init
 * inherited (split-stream attempts, reachable by no other process), or a connection to a path socket (PTY and
 * `script` attempts). That path is on the host's filesystem, which the agent can reach (and read on its PID 1's
 * command line), so any other connection is closed, nothing it sends is read as a report, and it is sent nothing: no
 * process can forge the init's reports (the engine's exit, a spawn error) or read the launch message (the engine's
 * environment). The token is on the init's command line, which no other attempt's processes can see.
 */
export function createLifeline(token: string, onReport: (report: InitReport) => void): Lifeline {
  /** Every open connection (the init's and any refused one not yet gone), so that close reaches them. */
  const sockets = new Set<net.Socket>();
  let init: net.Socket | null = null;
  /** A passed socket, written to before its greeting: only the init holds its other end (it inherited it). */
  let passed: net.Socket | null = null;
  let outbox: string | null = null;
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  let markAccepted: () => void = () => undefined;
  const accepted = new Promise<void>((resolve) => {
    markAccepted = resolve;
  });
  const accept = (connection: net.Socket, inherited = false): void => {
    sockets.add(connection);
    connection.on('error', () => undefined);
    connection.on('close', () => sockets.delete(connection));
    if (init || (inherited && passed)) {
      connection.destroy();
      return;
    }
    if (inherited) {
      // What was sent so far goes at once, so a mount plan written while the init starts is there when its first
      // lines run (it begins the setup then); reports are still read only after the greeting.
      passed = connection;
      // Its end is the init's, greeted or not: an init that dies before its greeting has closed its lifeline too.
      connection.on('close', markClosed);
      if (outbox !== null) connection.write(outbox);
    }
    awaitGreeting(
      connection,
      token,
      () => init === null,
      (rest) => {
        init = connection;
        if (connection !== passed) connection.on('close', markClosed);
        markAccepted();
        const decoder = new StringDecoder('utf8');
        let buffered = '';
        const read = (chunk: Buffer): void => {
          buffered += decoder.write(chunk);
          for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
            const line = buffered.slice(0, newline);
            buffered = buffered.slice(newline + 1);
            try {
              onReport(JSON.parse(line) as InitReport);
            } catch {
              // not a report
            }
          }
          if (buffered.length > 65_536) buffered = '';
        };
        read(rest);
        connection.on('data', read);
        connection.resume();
        if (outbox !== null && connection !== passed) connection.write(outbox);
      },
    );
  };
  return {
    sockets,
    closed,
    accepted,
    accept,
    send: (line) => {
      outbox = `${outbox ?? ''}${line}\n`;
      (init ?? passed)?.write(`${line}\n`);
    },
  };
}

/** Listens on a path socket whose every connection goes to `lifeline` (the init connects there in wrap mode). */
export async function listenLifeline(socket: string, lifeline: Lifeline): Promise<net.Server> {
  const server = net.createServer(lifeline.accept);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  return server;
}

/** The harness's end of the init's lifeline. */
export interface Lifeline {
  /** Open connections: the init's, and refused ones not yet gone. */
  sockets: Set<net.Socket>;
  /** Resolves when the init's connection closed (the init exited). */
  closed: Promise<void>;
  /** Resolves when the init's connection is taken (it greeted with the token). */
  accepted: Promise<void>;
  /**
   * Takes a connection: the init's if it is the first to greet with the token, else closed. `inherited`: the
   * harness's end of a socket passed to the init, whose other end only the init holds: lines are sent on it at once,
   * before the greeting.
   */
  accept(connection: net.Socket, inherited?: boolean): void;
  /** Sends one line to the init, now or as soon as it connects. */
  send(line: string): void;
}

/** How long to wait for the init's last report after `unshare` exited. */
export const LIFELINE_DRAIN_MS = 1000;

export function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
