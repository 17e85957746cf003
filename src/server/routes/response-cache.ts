import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CacheControls, CacheTicket, KeyParts, RequestTraits, SemanticParts } from '../../cache/index.js';
import type { Capability, CheckedCall } from '../../calls/index.js';
import { invalidBody } from '../../errors/index.js';
import type { UsageEstimate } from '../../limits/index.js';
import { admit, connectionGoneSignal } from './model-call.js';

/**
 * The HTTP side of the response cache (docs/caching.md): the caller's controls read from its
 * headers, the ticket taken through the request's call, and the answer's
 * `x-modelgate-cache: hit|miss|bypass`.
 */

const CACHE_HEADER = 'x-modelgate-cache';
const TTL_HEADER = 'x-modelgate-cache-ttl';
const SIMILARITY_HEADER = 'x-modelgate-cache-similarity';

function headerText(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * What the caller asks of the cache: `x-modelgate-cache: bypass` or `Cache-Control: no-store`
 * leave it out; `x-modelgate-cache: refresh` or `Cache-Control: no-cache` answer anew and keep
 * the answer; `x-modelgate-cache-ttl: <seconds>` keeps it for less than the policy's TTL.
 */
export function cacheControlsOf(request: FastifyRequest): CacheControls {
  const asked = headerText(request, CACHE_HEADER)?.trim().toLowerCase();
  if (asked !== undefined && asked !== '' && asked !== 'bypass' && asked !== 'refresh') {
    throw invalidBody(`The ${CACHE_HEADER} header takes bypass (leave the cache out) or refresh (answer anew and keep the answer); remove it for the default.`, CACHE_HEADER);
  }
  const directives = (headerText(request, 'cache-control') ?? '').toLowerCase().split(',').map((directive) => directive.trim());
  const use = asked === 'bypass' || directives.includes('no-store') ? 'bypass' : asked === 'refresh' || directives.includes('no-cache') ? 'refresh' : 'default';
  const ttl = headerText(request, TTL_HEADER);
  if (ttl === undefined) return { use };
  const seconds = Number(ttl.trim());
  if (!/^\d+$/.test(ttl.trim()) || !Number.isSafeInteger(seconds) || seconds < 1) {
    throw invalidBody(`The ${TTL_HEADER} header takes a whole number of seconds of at least 1 (the policy's ttlSeconds is the longest).`, TTL_HEADER);
  }
  return { use, ttlSeconds: seconds };
}

/** Takes the request's cache ticket (null: no cache policy applies) and says on the reply what it was. */
export async function cacheTicketFor(
  request: FastifyRequest,
  reply: FastifyReply,
  parts: KeyParts & { traits: RequestTraits; semantic?: () => SemanticParts | null },
): Promise<CacheTicket | null> {
  const controls = cacheControlsOf(request);
  const ticket = await request.call.cacheTicket(request.principal, { ...parts, controls }, connectionGoneSignal(reply));
  if (ticket !== null) reply.header(CACHE_HEADER, ticket.status);
  if (ticket?.similarity != null) reply.header(SIMILARITY_HEADER, ticket.similarity.toFixed(4));
  return ticket;
}

/** A request's temperature as the cache reads it: a number it set, else undefined (the vendor's default). */
export function temperatureOf(body: unknown): number | undefined {
  const temperature = (body as { temperature?: unknown } | null)?.temperature;
  return typeof temperature === 'number' ? temperature : undefined;
}

/** Whether the caller's body says `store: false`. */
export function storeFalseIn(body: unknown): boolean {
  return (body as { store?: unknown } | null)?.store === false;
}

/** What an embeddings request is to the cache: always deterministic, no store flag, media or tool results. */
export const EMBEDDING_TRAITS: RequestTraits = { temperature: null, storeFalse: false, media: false, toolResults: false };

/** Reserves the call's estimate against the key's limits, or, for a hit (no provider call), nothing but its request per minute. */
export async function admitCached(request: FastifyRequest, reply: FastifyReply, call: CheckedCall<Capability>, cache: CacheTicket | null, estimateOf: () => UsageEstimate): Promise<void> {
  const estimate = cache?.hit != null ? { tokens: 0, costUsd: 0 } : estimateOf();
  await admit(request, reply, estimate);
  call.reserved(estimate);
}
