import type { FastifyRequest } from 'fastify';
import { timerDelay } from '../config/index.js';
import { extractSecret, fingerprintOf, hashSecret } from '../keys/index.js';
import type { Caller, FinishedRequest } from '../logs/index.js';
import type { GatewayApp } from './app.js';
import { addKeyedRouteHook } from './keyed-routes.js';
import type { GatewayContext } from './context.js';
import { toGatewayError } from './error-mapping.js';
import { playgroundKeyIdOf } from './playground-relay.js';

/** A request refused for its missing or unknown key: summarised per client address (RefusalSummary). */
const UNAUTHORIZED = 401;

declare module 'fastify' {
  interface FastifyRequest {
    /** The request log's view of a keyed request; null until its reply is sent or it is aborted. */
    logTracking: Tracking | null;
  }
}

/** Where a request is between its response ending and its record being written. */
interface Tracking {
  /** The route produced its reply (a streamed reply is handed to the call's pending work instead). */
  routeDone: boolean;
  aborted: boolean;
  finalized: boolean;
  /** Finalizes an aborted request whose route never finishes (bounded wait). */
  timer?: NodeJS.Timeout;
}

/**
 * Finishes every keyed request's call once its response has ended — streams at their last
 * byte, cancelled streams when the route has stopped — and hands the finished record to the
 * request log. The call settles, prices and observes it (src/calls); nothing here runs before
 * the response is sent. Unkeyed requests are only counted in the metrics.
 */
export function registerRequestLogHook(app: GatewayApp, context: GatewayContext): void {
  const { config, metrics, logger } = context;
  const waiting = new Map<FastifyRequest, () => void>();
  const abortedWaitMs = timerDelay(config.upstream.timeoutMs + config.upstream.streamIdleTimeoutMs);

  // A request property rather than a WeakMap keyed by the request: a WeakMap entry made for
  // every request is an ephemeron the garbage collector must visit.
  app.decorateRequest('logTracking', null);
  const stateOf = (request: FastifyRequest): Tracking => (request.logTracking ??= { routeDone: false, aborted: false, finalized: false });

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

  /** The finished record to the request log (a refusal of an unknown key to the per-address summary). */
  const handOver = (request: FastifyRequest, finished: FinishedRequest) => {
    if (finished.status === UNAUTHORIZED && finished.caller.keyId === null) context.logs.refusals.add(request.ip, finished);
    else context.logs.writer.push(finished);
  };

  /** Finishes the call; `sentStatus` is null when the client went away before the response ended. */
  const finalize = (request: FastifyRequest, sentStatus: number | null, cutOff?: string) => {
    const state = stateOf(request);
    if (state.finalized) return;
    state.finalized = true;
    if (state.timer !== undefined) clearTimeout(state.timer);
    waiting.delete(request);
    try {
      const end = { status: sentStatus, caller: callerOf(request), ...(cutOff === undefined ? {} : { cutOff }) };
      handOver(request, request.call.finish(end));
    } catch (error) {
      logger.error({ err: error, requestId: request.id }, 'could not log a request');
    }
  };

  /**
   * An aborted request is finished once its route has stopped (reply produced, or a streamed
   * reply's pending work settled), so usage reported late still counts. The wait is bounded,
   * and shutdown ends it.
   */
  const finalizeAbortedWhenDone = (request: FastifyRequest, cutOff: string | undefined) => {
    const state = stateOf(request);
    if (state.finalized || !state.aborted) return;
    const pendingWork = request.call.pendingWork;
    const done = () => finalize(request, null, cutOff);
    if (state.routeDone && pendingWork === undefined) {
      done();
      return;
    }
    if (state.timer === undefined) {
      waiting.set(request, done);
      state.timer = setTimeout(done, abortedWaitMs);
      state.timer.unref();
    }
    if (pendingWork !== undefined) pendingWork.then(done, done);
  };

  // Callback-style hooks: they run on every request, and an async hook costs a promise and a turn.
  app.addHook('onError', (request, _reply, error, done) => {
    const call = request.call as FastifyRequest['call'] | null;
    if (call !== null) {
      call.failed(toGatewayError(error, config.server.bodyLimitBytes), { message: true });
      // Refused by its schema before the route read it: the body as received, so the operator sees what was sent.
      if (!call.described) call.refusedBody(request.body);
    }
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const call = request.call as FastifyRequest['call'] | null;
    if (call === null) {
      done(null, payload);
      return;
    }
    const guardrails = call.guardrailsHeader;
    if (guardrails !== null) reply.header('x-modelgate-guardrails', guardrails);
    const state = stateOf(request);
    state.routeDone = true;
    finalizeAbortedWhenDone(request, undefined);
    done(null, payload);
  });

  /** The response ended without reaching the client whole: logged as the client's doing (499), once the route stopped. */
  const responseAborted = (request: FastifyRequest) => {
    const cutOff = app.stalledClients.closedForStalling(request.raw.socket)
      ? `the client took no data for ${app.stalledClients.stallMs} ms; its connection was closed`
      : undefined;
    stateOf(request).aborted = true;
    finalizeAbortedWhenDone(request, cutOff);
  };

  app.addHook('onResponse', (request, reply, done) => {
    const call = request.call as FastifyRequest['call'] | null;
    if (call !== null) {
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
