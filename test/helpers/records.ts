import type { RequestRecord } from '../../src/logs/types.js';
import type { RouteModule } from '../../src/server/app.js';

/**
 * Captures the request record of every keyed request once its response has closed (ended,
 * or the client went away), so tests can assert usage, logDetail and media without depending
 * on the log store. Pass `tap.routes` after the gateway's own route modules.
 */
export class RecordTap {
  private readonly finished = new Map<string, RequestRecord>();
  private readonly waiting = new Map<string, (record: RequestRecord) => void>();

  readonly routes: RouteModule = (app) => {
    app.addHook('onRequest', async (request, reply) => {
      // The response's 'close' fires after 'finish', and also when the client disconnected
      // (Fastify's onRequestAbort does not fire once a POST body has been read).
      reply.raw.once('close', () => {
        const record = request.record as RequestRecord | null;
        if (record === null || record === undefined) return;
        this.finished.set(record.requestId, record);
        this.waiting.get(record.requestId)?.(record);
      });
    });
  };

  /** The record of a request, waiting for its response to close (streams included). */
  wait(requestId: string): Promise<RequestRecord> {
    const done = this.finished.get(requestId);
    if (done !== undefined) return Promise.resolve(done);
    return new Promise((resolve) => this.waiting.set(requestId, resolve));
  }
}
