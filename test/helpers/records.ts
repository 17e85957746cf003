import type { FinishedRequest, RequestRecord } from '../../src/logs/index.js';
import type { RouteModule } from '../../src/server/app.js';

/** A finished request's record, with what finishing it decided: its status and cost. */
export type TappedRecord = RequestRecord & { status: number; costMicroUsd: number | null };

/**
 * Captures the record of every keyed request once the model-call path finished it (the
 * response ended, or the client went away and the route stopped), so tests can assert usage,
 * logDetail and media without depending on the log store. Pass `tap.routes` after the
 * gateway's own route modules.
 */
export class RecordTap {
  private readonly finished = new Map<string, TappedRecord>();
  private readonly waiting = new Map<string, (record: TappedRecord) => void>();

  readonly routes: RouteModule = (_app, context) => {
    context.calls.observe({
      finished: (request: FinishedRequest) => {
        const record = { ...request.record, status: request.status, costMicroUsd: request.cost.microUsd };
        this.finished.set(record.requestId, record);
        this.waiting.get(record.requestId)?.(record);
      },
    });
  };

  /** The record of a request, waiting for it to finish (streams included). */
  wait(requestId: string): Promise<TappedRecord> {
    const done = this.finished.get(requestId);
    if (done !== undefined) return Promise.resolve(done);
    return new Promise((resolve) => this.waiting.set(requestId, resolve));
  }
}
