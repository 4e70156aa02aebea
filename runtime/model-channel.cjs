// The model channel: byte streams (the engine's connections to the model port) carried over one socket that the
// harness hands the namespaces' init when it starts it (an inherited file descriptor, a socketpair). The init
// used to connect to a Unix socket of the harness by path for each connection; the agent can reach that path (the
// namespaces hold processes and network, not files), so it could put its own listener there and answer for the
// model. A descriptor inherited before the engine exists is reachable by no process of the attempt but the init
// (it keeps it close-on-exec; see docs/isolation.md on what an engine of the same uid could still do to the init).
//
// Used by the harness (src/runtime/isolation/model-channel.ts) and the init. Plain CommonJS with Node's own modules only, like the init.
//
// Frames, both ways: type (1 byte), stream id (4 bytes, big-endian), payload length (4 bytes, big-endian), payload.
//   OPEN   (1) init -> harness: a new stream (the init numbers them 1, 2, …; an id is never reused)
//   DATA   (2) bytes of the stream, never more than the receiver's credit allows
//   EOF    (3) the sender's direction ended (a half-close: the other direction goes on)
//   CLOSE  (4) the sender dropped the stream (a reset, an error); the receiver drops it too and ignores what follows
//   CREDIT (5) payload: 4 bytes, how many more bytes the receiver has passed on and so takes again
// Each direction of a stream starts with WINDOW bytes of credit: no side ever holds more than that of a stream, so
// one slow stream never stops the channel for the others. A stream is done once EOF went both ways.
'use strict';

const OPEN = 1;
const DATA = 2;
const EOF = 3;
const CLOSE = 4;
const CREDIT = 5;
const HEADER = 9;
/** Bytes a direction of a stream may have in flight. */
const WINDOW = 256 * 1024;
/** Largest DATA payload. */
const MAX_DATA = 64 * 1024;

function frame(type, id, payload) {
  const header = Buffer.allocUnsafe(HEADER);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(id, 1);
  header.writeUInt32BE(payload ? payload.length : 0, 5);
  return payload && payload.length > 0 ? Buffer.concat([header, payload]) : header;
}

/**
 * One end of the channel. `onOpen(id)`, on the harness's end, returns the socket an OPEN stream is carried to (a
 * connection to the model server); the init's end attaches the connections it accepts with `attach(socket)`.
 * `onEnd` is called once when the channel itself closes (the other end is gone): every stream is dropped.
 */
class ModelChannel {
  constructor(channel, { onOpen = null, onEnd = () => undefined } = {}) {
    this.channel = channel;
    this.onOpen = onOpen;
    this.onEnd = onEnd;
    this.streams = new Map();
    this.nextId = 1;
    this.partial = null;
    this.ended = false;
    channel.on('data', (chunk) => this.receive(chunk));
    channel.on('error', () => this.end());
    channel.on('close', () => this.end());
  }

  /** Carries `socket` as a stream: a new one (the init's end), or the one OPEN named (the harness's). */
  attach(socket, id = this.nextId++) {
    const stream = {
      socket,
      credit: WINDOW,
      held: [],
      readEnded: false,
      eofSent: false,
      eofReceived: false,
      done: false,
    };
    this.streams.set(id, stream);
    if (id >= this.nextId) this.nextId = id + 1;
    if (this.onOpen === null) this.send(OPEN, id);
    socket.on('data', (chunk) => {
      stream.held.push(chunk);
      this.flush(id, stream);
    });
    socket.on('end', () => {
      stream.readEnded = true;
      this.flush(id, stream);
    });
    socket.on('error', () => this.drop(id, stream, true));
    // Closed after its end was read: what it read may still wait for credit, and goes on. Closed otherwise: dropped.
    socket.on('close', (hadError) => {
      if (hadError || !stream.readEnded) this.drop(id, stream, true);
    });
    return id;
  }

  /** Sends what the stream's socket read, as far as the credit goes; its EOF once all of it is sent. */
  flush(id, stream) {
    if (stream.done) return;
    while (stream.held.length > 0 && stream.credit > 0) {
      let chunk = stream.held[0];
      const size = Math.min(chunk.length, stream.credit, MAX_DATA);
      if (size < chunk.length) {
        stream.held[0] = chunk.subarray(size);
        chunk = chunk.subarray(0, size);
      } else stream.held.shift();
      stream.credit -= size;
      this.send(DATA, id, chunk);
    }
    if (stream.held.length > 0) {
      stream.socket.pause();
      return;
    }
    stream.socket.resume();
    if (stream.readEnded && !stream.eofSent) {
      stream.eofSent = true;
      this.send(EOF, id);
      this.settle(id, stream);
    }
  }

  /** A stream whose EOF went both ways is done: its socket closes by itself, nothing more is said of it. */
  settle(id, stream) {
    if (stream.eofSent && stream.eofReceived) {
      stream.done = true;
      this.streams.delete(id);
    }
  }

  /** Drops a stream: its socket is destroyed and, unless the other end dropped it first, the other end is told. */
  drop(id, stream, tell) {
    if (stream.done) return;
    stream.done = true;
    this.streams.delete(id);
    if (tell) this.send(CLOSE, id);
    stream.socket.destroy();
  }

  send(type, id, payload) {
    if (!this.ended && !this.channel.destroyed) this.channel.write(frame(type, id, payload));
  }

  receive(chunk) {
    if (this.ended) return;
    const data = this.partial ? Buffer.concat([this.partial, chunk]) : chunk;
    let at = 0;
    while (data.length - at >= HEADER) {
      const length = data.readUInt32BE(at + 5);
      if (data.length - at < HEADER + length) break;
      const type = data.readUInt8(at);
      const id = data.readUInt32BE(at + 1);
      this.handle(type, id, data.subarray(at + HEADER, at + HEADER + length));
      at += HEADER + length;
    }
    this.partial = at < data.length ? Buffer.from(data.subarray(at)) : null;
  }

  handle(type, id, payload) {
    if (type === OPEN) {
      if (this.onOpen && !this.streams.has(id)) this.attach(this.onOpen(id), id);
      return;
    }
    const stream = this.streams.get(id);
    if (!stream) return;
    if (type === DATA) {
      const size = payload.length;
      // Copied: the frame's buffer is the channel's read buffer.
      stream.socket.write(Buffer.from(payload), (error) => {
        if (!error && !stream.done) this.send(CREDIT, id, uint32(size));
      });
    } else if (type === EOF) {
      stream.eofReceived = true;
      stream.socket.end();
      this.settle(id, stream);
    } else if (type === CLOSE) {
      this.drop(id, stream, false);
    } else if (type === CREDIT && payload.length === 4) {
      stream.credit += payload.readUInt32BE(0);
      this.flush(id, stream);
    }
  }

  /** The channel closed: every stream is dropped. */
  end() {
    if (this.ended) return;
    this.ended = true;
    for (const [id, stream] of this.streams) this.drop(id, stream, false);
    this.onEnd();
  }
}

function uint32(value) {
  const buffer = Buffer.allocUnsafe(4);
  buffer.writeUInt32BE(value, 0);
  return buffer;
}

module.exports = { ModelChannel };
