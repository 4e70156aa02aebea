/**
 * The harness's end of the model channel (`runtime/model-channel.cjs`, shared with the Node init): the socket a
 * split-stream attempt's init inherits, over which it carries every connection the engine opens to the model port.
 * Each stream the init opens is carried on to the model server here. No path is involved, so no process of the
 * attempt can put itself between the engine and the model.
 */
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { PACKAGE_ROOT } from '../executables.js';

/** One end of the channel (the shared implementation's surface). */
interface ModelChannelEnd {
  /** Drops every stream, as when the channel closes. */
  end(): void;
}

type ModelChannelClass = new (channel: net.Socket, options: { onOpen: (id: number) => net.Socket }) => ModelChannelEnd;

let implementation: ModelChannelClass | null = null;

/** The shared implementation, loaded once (a file of the package, beside the init). */
function loadImplementation(): ModelChannelClass {
  implementation ??= (
    createRequire(path.join(PACKAGE_ROOT, 'runtime', 'model-channel.cjs'))('./model-channel.cjs') as {
      ModelChannel: ModelChannelClass;
    }
  ).ModelChannel;
  return implementation;
}

/**
 * Serves the model channel on `channel` (the harness's end of the init's inherited socket): every stream is
 * connected to `host`:`port` on the host's loopback (the model server, or a forwarded MCP server). Returns a
 * function that drops every stream.
 */
export function serveModelChannel(channel: net.Socket, port: number, host = '127.0.0.1'): () => void {
  const ModelChannel = loadImplementation();
  // No Nagle delay towards the model server: requests and streamed replies are many small writes. Half-open: the
  // engine may end its side of a connection while the reply still comes.
  const end = new ModelChannel(channel, {
    onOpen: () => net.connect({ port, host, noDelay: true, allowHalfOpen: true }),
  });
  return () => end.end();
}
