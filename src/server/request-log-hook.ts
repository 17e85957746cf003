import type { FastifyRequest } from 'fastify';
import { timerDelay } from '../config/index.js';
import { extractSecret, fingerprintOf, hashSecret } from '../keys/index.js';
import { settlementOf } from '../calls/index.js';
import { computeCost, type Caller, type Cost, type RequestRecord } from '../logs/index.js';
import type { GatewayApp } from './app.js';
import { addKeyedRouteHook } from './keyed-routes.js';
import type { GatewayContext } from './context.js';
import { toGatewayError } from './error-mapping.js';
import { playgroundKeyIdOf } from './playground-relay.js';

/** nginx's status for "the client closed the connection before the response ended". */
const CLIENT_CLOSED_REQUEST = 499;
/** A request refused for its missing or unknown key: summarised per client address (RefusalSummary). */
const UNAUTHORIZED = 401;
const RATE_LIMIT_CODES = new Set(['rate_limit_exceeded', 'daily_token_cap_exceeded', 'monthly_cost_cap_exceeded']);

declare module 'fastify' {
  interface FastifyRequest {
    /** The request log's view of a keyed request; null until its reply is sent or it is aborted. */
    logTracking: Tracking | null;
  }
}

/** Where a request is between its response ending and its record being written. */
interface Tracking {
  /** The route produced its reply (a streamed reply is handed to `record.pendingWork` instead). */
  routeDone: boolean;
  aborted: boolean;
  finalized: boolean;
  /** Finalizes an aborted request whose route never finishes (bounded wait). */
  timer?: NodeJS.Timeout;
}

/**
 * Turns every keyed request into one request-log record, after its response has ended —
 * streams at their last byte, cancelled streams when the route has stopped — and observes
 * metrics for every request. Nothing here runs before the response is sent: the record is
 * queued for the background writer. Also settles the limiter's reservation with what the
 * request really used (the routes put the admission's x-ratelimit-* headers on the reply).
 */
export function registerRequestLogHook(app: GatewayApp, context: GatewayContext): void {
  const { config, catalog, metrics, logger } = context;
  const waiting = new Map<FastifyRequest, () => void>();
  const abortedWaitMs = timerDelay(config.upstream.timeoutMs + config.upstream.streamIdleTimeoutMs);

  // A request property rather than a WeakMap keyed by the request: a WeakMap entry made for
  // every request is an ephemeron the garbage collector must visit.
  app.decorateRequest('logTracking', null);
  const stateOf = (request: FastifyRequest): Tracking => (request.logTracking ??= { routeDone: false, aborted: false, finalized: false });

  const modelLabel = (record: RequestRecord | null): string => {
    if (record === null || record.resolvedModel === null) return 'none';
    return catalog.get(record.resolvedModel) !== undefined ? record.resolvedModel : 'inferred';
  };

  const callerOf = (request: FastifyRequest): Caller => {
    const principal = request.principal as FastifyRequest['principal'] | null;
    if (principal?.kind === 'key') return { keyId: principal.keyId, projectId: principal.projectId, fingerprint: principal.fingerprint };
    if (principal?.kind === 'anonymous') return { keyId: null, projectId: null, fingerprint: 'anonymous' };
    // Authentication failed: name the key when it is one of ours (paused, revoked, wrong scope).
    const row = refusedKeyOf(request);
    return row === undefined
      ? { keyId: null, projectId: null, fingerprint: null }
      : { keyId: row.id, projectId: row.project_id, fingerprint: fingerprintOf(row.id, row.last4) };
  };

  /** The key a refused request named: by its secret, or a playground call by its path. */
  const refusedKeyOf = (request: FastifyRequest) => {
    const keyId = playgroundKeyIdOf(request);
    if (keyId !== undefined) return context.keys.cache.findById(keyId);
    const secret = extractSecret(request.headers);
    return secret === undefined || secret.length === 0 ? undefined : context.keys.cache.findByHash(hashSecret(secret));
  };

  /** Replaces the reservation with the real usage; keeps it when work was done but not measured. */
  const settle = (record: RequestRecord, cost: Cost, status: number, aborted: boolean) => {
    const admission = record.admission;
    if (admission === null) return;
    const actual = settlementOf(admission.reserved, { usage: record.usage, costMicroUsd: cost.microUsd }, status < 400 || aborted);
    admission.settle(actual).catch((error: unknown) => logger.warn({ err: error }, 'settling a limit reservation failed'));
  };

  const observe = (record: RequestRecord, status: number, latencyMs: number, cost: Cost) => {
    const model = modelLabel(record);
    metrics.observeRequest({ route: record.endpoint, model, status, seconds: latencyMs / 1000 });
    if (record.upstreamLatencyMs !== null && record.provider !== null) {
      metrics.observeUpstream({ provider: record.provider, model, seconds: record.upstreamLatencyMs / 1000 });
    }
    if (record.usage !== null) {
      metrics.countTokens(model, record.usage.promptTokens, record.usage.completionTokens, record.usage.cachedPromptTokens ?? 0);
    }
    if (cost.microUsd !== null) metrics.addCost(model, cost.microUsd);
    if (record.errorCode !== null && RATE_LIMIT_CODES.has(record.errorCode)) metrics.countRateLimited(record.errorCode);
  };

  /** Writes the record; `sentStatus` is null when the client went away before the response ended. */
  const finalize = (request: FastifyRequest, sentStatus: number | null) => {
    const state = stateOf(request);
    if (state.finalized) return;
    state.finalized = true;
    if (state.timer !== undefined) clearTimeout(state.timer);
    waiting.delete(request);
    try {
      const record = request.record;
      const aborted = sentStatus === null;
      // 499 is the client's doing, whatever the route recorded after its upstream call was
      // cancelled for it (a provider_error of the cancelled call); the route's detail is kept.
      if (aborted) record.errorCode = 'client_closed';
      const status = sentStatus ?? CLIENT_CLOSED_REQUEST;
      const latencyMs = Date.now() - record.startedAt;
      const pricing = record.resolvedModel === null ? null : (catalog.get(record.resolvedModel)?.entry.pricing ?? null);
      const cost: Cost =
        record.costMicroUsd !== undefined
          ? { microUsd: record.costMicroUsd, startingPrice: false }
          : computeCost({
              pricing,
              usage: record.usage,
              imageCount: record.imageCount,
              audioSeconds: record.audioSeconds,
              // A stream the client left after the provider began answering used something too.
              succeeded: status < 400 || (aborted && record.upstreamLatencyMs !== null),
            });
      settle(record, cost, status, aborted);
      observe(record, status, latencyMs, cost);
      context.tracing?.endRequest(record, status, cost.microUsd);
      const caller = callerOf(request);
      const providerRequestIds = context.providers.requestIds.take(record.requestId);
      const finished = { record, caller, status, latencyMs, cost, providerRequestIds };
      if (status === UNAUTHORIZED && caller.keyId === null) context.logs.refusals.add(request.ip, finished);
      else context.logs.writer.push(finished);
    } catch (error) {
      logger.error({ err: error, requestId: request.id }, 'could not log a request');
    }
  };

  /**
   * An aborted request is written once its route has stopped (reply produced, or a streamed
   * reply's pending work settled), so usage reported late still counts. The wait is bounded,
   * and shutdown ends it.
   */
  const finalizeAbortedWhenDone = (request: FastifyRequest) => {
    const state = stateOf(request);
    if (state.finalized || !state.aborted) return;
    const pendingWork = request.record.pendingWork;
    if (state.routeDone && pendingWork === undefined) {
      finalize(request, null);
      return;
    }
    if (state.timer === undefined) {
      const done = () => finalize(request, null);
      waiting.set(request, done);
      state.timer = setTimeout(done, abortedWaitMs);
      state.timer.unref();
    }
    if (pendingWork !== undefined) {
      const done = () => finalize(request, null);
      pendingWork.then(done, done);
    }
  };

  // Callback-style hooks: they run on every request, and an async hook costs a promise and a turn.
  app.addHook('onError', (request, _reply, error, done) => {
    const record = request.record as RequestRecord | null;
    if (record !== null) {
      const gatewayError = toGatewayError(error, config.server.bodyLimitBytes);
      record.errorCode ??= gatewayError.code;
      record.logDetail = { ...record.logDetail, ...gatewayError.logDetail, error_message: gatewayError.message };
    }
    done();
  });

  app.addHook('onSend', (request, _reply, payload, done) => {
    const record = request.record as RequestRecord | null;
    if (record === null) {
      done(null, payload);
      return;
    }
    const state = stateOf(request);
    state.routeDone = true;
    finalizeAbortedWhenDone(request);
    done(null, payload);
  });

  /** The response ended without reaching the client whole: logged as the client's doing (499), once the route stopped. */
  const responseAborted = (request: FastifyRequest) => {
    if (app.stalledClients.closedForStalling(request.raw.socket)) {
      const reason = `the client took no data for ${app.stalledClients.stallMs} ms; its connection was closed`;
      request.record.logDetail = { ...request.record.logDetail, reason };
    }
    stateOf(request).aborted = true;
    finalizeAbortedWhenDone(request);
  };

  app.addHook('onResponse', (request, reply, done) => {
    const record = request.record as RequestRecord | null;
    if (record !== null) {
      // Fastify runs onResponse for a response that failed as well as for one that finished,
      // and Node reports a response whose connection the stalled-client watch reset as finished.
      if (reply.raw.writableFinished && !app.stalledClients.closedForStalling(request.raw.socket)) finalize(request, reply.statusCode);
      else responseAborted(request);
    } else {
      metrics.observeRequest({
        route: request.routeOptions.url ?? 'unmatched',
        model: 'none',
        status: reply.statusCode,
        seconds: reply.elapsedTime / 1000,
      });
    }
    done();
  });

  // The response closing before it finished is what "the client went away" means here. Fastify's
  // onRequestAbort is not used: it does not fire once a POST body has been read in full.
  addKeyedRouteHook(app, () => (request, reply, done) => {
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) responseAborted(request);
    });
    done();
  });

  // Shutdown: records of aborted requests still waiting for their route are written now.
  context.onShutdown(async () => {
    for (const done of [...waiting.values()]) done();
  });
}
