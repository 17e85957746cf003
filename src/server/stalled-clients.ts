import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Closes the connections of clients that stopped taking their responses. Node keeps the unsent
 * part of a response in memory for as long as the connection stays open, and has no timeout
 * for a client that sent its request and then reads nothing: a few such clients asking for
 * large answers (images, embeddings, audio) hold megabytes each, for good, and their requests
 * are never logged (a response that never finishes never reaches the request log). Streams
 * are covered the same way: a stream whose client takes nothing holds its provider call open.
 *
 * A connection counts as stalled while bytes wait to be sent and none of them leave: the
 * socket's buffer (`writableLength`, which includes a write libuv has not finished) and
 * libuv's queue (`writeQueueSize`: a large write in progress shrinks there as the client
 * reads) both stay the same. A slow client that keeps reading is never cut off, as with
 * nginx's send_timeout. Connections are looked at every quarter of the timeout (at most every
 * second), from one timer: nothing runs per request.
 */
export class StalledClientWatch {
  private readonly sockets = new Set<Socket>();
  /** Sockets with unsent bytes, with what was unsent when it last changed. */
  private readonly pending = new Map<Socket, { buffered: number; queued: number; since: number }>();
  private readonly cutOff = new WeakSet<Socket>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    server: Server,
    readonly stallMs: number,
  ) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => {
        this.sockets.delete(socket);
        this.pending.delete(socket);
      });
    });
    this.timer = setInterval(() => this.sweep(), Math.min(1_000, Math.max(10, stallMs / 4)));
    this.timer.unref();
  }

  /** Whether the watch closed this connection (the request log says why). */
  closedForStalling(socket: Socket | null): boolean {
    return socket !== null && this.cutOff.has(socket);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sweep(): void {
    const now = Date.now();
    for (const socket of this.sockets) {
      const buffered = socket.writableLength;
      if (buffered === 0 || socket.destroyed) {
        this.pending.delete(socket);
        continue;
      }
      const queued = writeQueueSizeOf(socket);
      const seen = this.pending.get(socket);
      if (seen === undefined || seen.buffered !== buffered || seen.queued !== queued) {
        this.pending.set(socket, { buffered, queued, since: now });
      } else if (now - seen.since >= this.stallMs) {
        this.cutOff.add(socket);
        this.pending.delete(socket);
        // A reset, not a close: the kernel would otherwise keep trying to deliver the unsent
        // bytes to a peer that takes none (nginx's reset_timedout_connection).
        socket.resetAndDestroy();
      }
    }
  }
}

/**
 * Bytes libuv still has to hand to the kernel for this socket. Not a documented property, but
 * the only view of a large write's progress (`writableLength` moves only when a whole write
 * completes); Node's own net module reads it. 0 when the handle is gone.
 */
function writeQueueSizeOf(socket: Socket): number {
  const handle = (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle;
  return handle?.writeQueueSize ?? 0;
}
