import type { FinishedRequest } from './log-entry.js';

export interface RefusalSummaryOptions {
  /** Length of one summary interval; 0 writes every refusal as its own record. */
  intervalMs: number;
  /** Addresses tracked per interval; refusals from further addresses are summarised together. */
  maxAddresses: number;
}

/** The address the refusals past `maxAddresses` are summarised under. */
export const OTHER_ADDRESSES = 'other';

interface AddressRefusals {
  /** Refusals after the first, not written yet. */
  count: number;
  /** Start time of the first of them. */
  firstAt: number;
  /** The latest of them, without payloads: the summary record is written from it. */
  latest: FinishedRequest | null;
}

/**
 * Refused unauthenticated requests (no key, or a key the gateway does not know), one record
 * per client address per interval: the first refusal is written as usual, the ones after it
 * in the same interval become one summary record written when the interval ends, carrying
 * their count. A flood of bad keys (hundreds of refusals a second) then costs a few rows a
 * minute instead of one row each, and the log keeps what an operator needs: who, how often,
 * since when. Requests that name one of the gateway's keys are not summarised.
 */
export class RefusalSummary {
  private addresses = new Map<string, AddressRefusals>();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (finished: FinishedRequest) => void,
    private readonly options: RefusalSummaryOptions,
  ) {
    if (options.intervalMs > 0) {
      this.timer = setInterval(() => this.flush(), options.intervalMs);
      this.timer.unref();
    }
  }

  /** Takes the record of a refused unauthenticated request from `address`. */
  add(address: string, finished: FinishedRequest): void {
    if (this.options.intervalMs === 0) {
      this.write(finished);
      return;
    }
    const tracked = this.addresses.has(address) || this.addresses.size < this.options.maxAddresses ? address : OTHER_ADDRESSES;
    const refusals = this.addresses.get(tracked);
    if (refusals === undefined) {
      this.addresses.set(tracked, { count: 0, firstAt: 0, latest: null });
      this.write(finished);
      return;
    }
    if (refusals.count === 0) refusals.firstAt = finished.record.startedAt;
    refusals.count += 1;
    const { responsePayloadJson: _notKept, ...record } = finished.record;
    refusals.latest = { ...finished, record: { ...record, requestPayload: null, responsePayload: null } };
  }

  /** Writes the summary record of every address refused more than once in this interval, and starts a new one. */
  flush(): void {
    const ended = this.addresses;
    this.addresses = new Map();
    for (const [address, refusals] of ended) {
      const latest = refusals.latest;
      if (latest === null) continue;
      const summary = {
        refused_requests: refusals.count,
        client_address: address,
        first_at: new Date(refusals.firstAt).toISOString(),
        last_at: new Date(latest.record.startedAt).toISOString(),
      };
      this.write({ ...latest, record: { ...latest.record, logDetail: { ...latest.record.logDetail, unauthenticated_refusals: summary } } });
    }
  }

  /** Writes what the current interval holds and stops (graceful shutdown). */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.flush();
  }
}
