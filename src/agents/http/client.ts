import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Logger } from 'pino';
import { Agent, type Dispatcher } from 'undici';
import { GatewayError } from '../../errors/index.js';
import type { HttpCallRequest, HttpCallResponse, HttpCaller } from '../runtime/types.js';
import type { AddressPolicy } from './address-policy.js';
import type { HostAllowlist } from './allowlist.js';

/** A refusal or failure of the http node; its details go to the log, never to the caller. */
class HttpNodeFailure extends Error {
  override name = 'HttpNodeFailure';
}

/** Resolves a host name to every address it has (injectable: tests resolve to what they need). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

export interface HttpNodeClientOptions {
  allowlist: HostAllowlist;
  policy: AddressPolicy;
  /** Total time of one call, redirects included (agents.httpTimeoutMs). */
  timeoutMs: number;
  /** Largest response body after decompression (agents.httpMaxResponseBytes). */
  maxResponseBytes: number;
  logger: Logger;
  resolver?: Resolver;
  /** Extra trusted CAs (tests); the system CAs and NODE_EXTRA_CA_CERTS otherwise. */
  ca?: string | Buffer;
}

const MAX_REDIRECTS = 3;
const CONNECT_TIMEOUT_MS = 5_000;
const GENERIC_MESSAGE = "The agent's http step could not be completed. The gateway's log has the details for the operator.";

/**
 * The transport of the http node. A call goes out only if the URL is https, its host is on
 * the allowlist, and every address the host resolves to passes the address policy; the
 * connection is then made to exactly the address that was checked (the lookup hands the
 * checked addresses to the socket, so nothing can resolve the name again). Redirects are
 * followed only within the same origin, each hop checked again. No credentials are sent.
 * The response is read up to a size cap after decompression. Any failure reaches the caller
 * as one generic error; what happened is logged.
 */
export class HttpNodeClient implements HttpCaller {
  private readonly agent: Agent;
  private readonly resolver: Resolver;

  constructor(private readonly options: HttpNodeClientOptions) {
    this.resolver = options.resolver ?? systemResolver;
    this.agent = new Agent({
      connect: { lookup: this.checkedLookup, timeout: CONNECT_TIMEOUT_MS, ...(options.ca !== undefined ? { ca: options.ca } : {}) },
      connections: 16,
    });
  }

  /** A net/tls lookup that refuses a host when any of its addresses is not allowed. */
  private readonly checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    this.resolver(hostname).then(
      (addresses) => {
        const refused = addresses.map((address) => this.options.policy.check(address.address)).find((decision) => !decision.allowed);
        if (addresses.length === 0 || refused !== undefined) {
          const reason = refused !== undefined && !refused.allowed ? refused.reason : 'no address';
          callback(Object.assign(new HttpNodeFailure(`${hostname} refused: ${reason}`), { code: 'EADDRREFUSED' }), '', 4);
          return;
        }
        const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? addresses.filter((address) => address.family === lookupOptions.family) : addresses;
        if (lookupOptions.all === true) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, wanted);
        else if (wanted[0] === undefined) callback(Object.assign(new Error(`${hostname}: no address of the wanted family`), { code: 'ENOTFOUND' }), '', 4);
        else callback(null, wanted[0].address, wanted[0].family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 4),
    );
  };

  async call(request: HttpCallRequest, signal: AbortSignal, context: { requestId: string; nodeId: string }): Promise<HttpCallResponse> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const combined = AbortSignal.any([signal, timeout]);
    let url: URL | undefined;
    try {
      url = this.checkUrl(request.url);
      let method = request.method;
      let body = request.body;
      for (let hop = 0; ; hop += 1) {
        const response = await this.send(url, method, body, combined);
        const location = response.headers.location;
        if (response.statusCode < 300 || response.statusCode >= 400 || location === undefined) {
          return { status: response.statusCode, contentType: headerText(response.headers['content-type']), body: await this.readBody(response) };
        }
        await response.body.dump();
        if (hop >= MAX_REDIRECTS) throw new HttpNodeFailure(`more than ${MAX_REDIRECTS} redirects`);
        const next = new URL(headerText(location) ?? '', url);
        if (next.origin !== url.origin) throw new HttpNodeFailure(`redirect to another origin (${next.origin}) not followed`);
        url = this.checkUrl(next.href);
        if (response.statusCode === 303 || ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')) {
          method = 'GET';
          body = null;
        }
      }
    } catch (error) {
      const reason = timeout.aborted ? `timed out after ${this.options.timeoutMs} ms` : signal.aborted ? 'run aborted' : describe(error);
      this.options.logger.warn({ requestId: context.requestId, node: context.nodeId, host: url?.host ?? null, reason }, 'agent http node call failed');
      throw new GatewayError('provider_error', GENERIC_MESSAGE, { logDetail: { node: context.nodeId, host: url?.host ?? null, reason } });
    }
  }

  private checkUrl(text: string): URL {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new HttpNodeFailure('not a valid URL');
    }
    if (url.protocol !== 'https:') throw new HttpNodeFailure('not https');
    if (url.username !== '' || url.password !== '') throw new HttpNodeFailure('URL carries credentials');
    if (!this.options.allowlist.allows(url)) throw new HttpNodeFailure(`host ${url.host} is not on the allowlist`);
    // The lookup is skipped for an address literal, so its policy check happens here.
    const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(literal) !== 0) {
      const decision = this.options.policy.check(literal);
      if (!decision.allowed) throw new HttpNodeFailure(decision.reason);
    }
    url.hash = '';
    return url;
  }

  private send(url: URL, method: string, body: string | null, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    return this.agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: method as Dispatcher.HttpMethod,
      headers: {
        'user-agent': 'modelgate-agent',
        accept: 'application/json, text/plain;q=0.9, */*;q=0.5',
        'accept-encoding': 'gzip, deflate, br',
        ...(body !== null ? { 'content-type': 'application/json' } : {}),
      },
      body,
      signal,
    });
  }

  /** The body as text, decompressed, refused past maxResponseBytes. */
  private async readBody(response: Dispatcher.ResponseData): Promise<string> {
    const encoding = (headerText(response.headers['content-encoding']) ?? 'identity').trim().toLowerCase();
    let decoder: Transform | null = null;
    if (encoding === 'gzip' || encoding === 'x-gzip') decoder = createGunzip();
    else if (encoding === 'deflate') decoder = createInflate();
    else if (encoding === 'br') decoder = createBrotliDecompress();
    else if (encoding !== 'identity') throw new HttpNodeFailure(`unsupported content-encoding ${encoding}`);
    // pipeline, not pipe: when the body is aborted (the call's timeout, the run's deadline) the
    // decoder fails with it; with pipe it would wait for more input for ever.
    const stream: Readable = decoder === null ? response.body : pipeline(response.body, decoder, () => {});
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of stream) {
        total += (chunk as Buffer).length;
        if (total > this.options.maxResponseBytes) throw new HttpNodeFailure(`response larger than ${this.options.maxResponseBytes} bytes`);
        chunks.push(chunk as Buffer);
      }
    } finally {
      if (total > this.options.maxResponseBytes) {
        stream.destroy();
        response.body.destroy();
      }
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function headerText(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

function describe(error: unknown): string {
  if (error instanceof HttpNodeFailure) return error.message;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof HttpNodeFailure) return cause.message;
  const code = (error as { code?: unknown }).code;
  return `${typeof code === 'string' ? `${code}: ` : ''}${(error as Error).message ?? String(error)}`.slice(0, 300);
}
