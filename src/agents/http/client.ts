import { pipeline, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Logger } from 'pino';
import { Agent, type Dispatcher } from 'undici';
import { GatewayError } from '../../errors/index.js';
import type { HttpCallRequest, HttpCallResponse, HttpCaller } from '../runtime/types.js';
import { checkedLookup, literalAddressRefusal, type AddressPolicy, type Resolver } from '../../network/index.js';
import type { HostAllowlist } from './allowlist.js';

/** A refusal or failure of the http node; its details go to the log, never to the caller. */
class HttpNodeFailure extends Error {
  override name = 'HttpNodeFailure';
}

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

  constructor(private readonly options: HttpNodeClientOptions) {
    this.agent = new Agent({
      connect: { lookup: checkedLookup(options.policy, options.resolver), timeout: CONNECT_TIMEOUT_MS, ...(options.ca !== undefined ? { ca: options.ca } : {}) },
      connections: 16,
    });
  }

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
    const refusal = literalAddressRefusal(this.options.policy, url);
    if (refusal !== null) throw new HttpNodeFailure(refusal);
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
