import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

/** A request the fake upstream received, kept for assertions. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  rawBody: Buffer;
  /** Parsed JSON body, or undefined when the body is not JSON. Read loosely: tests assert every field they use. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  /** The client's port: requests with the same one came over the same (pooled) connection. */
  remotePort: number | undefined;
}

export type FakeHandler = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface FakeServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Handles the next requests to `METHOD /path` (path without query; prefix match when it ends with '*'). */
  on(route: string, handler: FakeHandler): void;
  close(): Promise<void>;
}

/**
 * A loopback HTTP server that plays a vendor API: tests script its answers per route and
 * assert what it received. Vendor-specific helpers (openai.ts, gemini.ts, anthropic.ts) build
 * the documented bodies and SSE framing on top of it.
 */
export async function startFakeServer(): Promise<FakeServer> {
  const routes = new Map<string, FakeHandler>();
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks);
    let json: unknown;
    try {
      json = rawBody.length > 0 && String(req.headers['content-type'] ?? '').includes('json') ? JSON.parse(rawBody.toString('utf8')) : undefined;
    } catch {
      json = undefined;
    }
    const path = (req.url ?? '/').split('?')[0]!;
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, rawBody, json, remotePort: req.socket.remotePort };
    requests.push(recorded);
    const key = `${req.method} ${path}`;
    const handler =
      routes.get(key) ??
      [...routes.entries()].find(([route]) => route.endsWith('*') && key.startsWith(route.slice(0, -1)))?.[1];
    if (handler === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake upstream has no handler for ${key}` } }));
      return;
    }
    try {
      await handler(recorded, res);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on(route, handler) {
      routes.set(route, handler);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes one SSE frame exactly as `data: …\n\n` (with an optional `event:` line). */
export function writeSse(response: ServerResponse, data: string, event?: string): void {
  response.write(`${event !== undefined ? `event: ${event}\n` : ''}data: ${data}\n\n`);
}

/** Holds the response back for `ms`, or until the client gives up; true when the client is still there. */
export async function holdResponse(response: ServerResponse, ms: number): Promise<boolean> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    response.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return !response.destroyed;
}

/**
 * Passes a request on to another fake and streams its answer back (status, content type and
 * the named response headers): the front of a cloud whose bodies are another vendor's. The
 * call behind it is aborted when the client goes away, so a hanging stream closes both.
 */
export async function forwardTo(
  response: ServerResponse,
  url: string,
  request: { headers: Record<string, string>; body: string | Uint8Array },
  passHeaders: readonly string[] = ['x-request-id'],
): Promise<void> {
  const controller = new AbortController();
  response.on('close', () => controller.abort());
  try {
    const upstream = await fetch(url, { method: 'POST', headers: request.headers, body: request.body, signal: controller.signal });
    const headers: Record<string, string> = { 'content-type': upstream.headers.get('content-type') ?? 'application/json' };
    for (const name of passHeaders) {
      const value = upstream.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    response.writeHead(upstream.status, headers);
    if (upstream.body === null) {
      response.end();
      return;
    }
    Readable.fromWeb(upstream.body as never).on('error', () => response.destroy()).pipe(response);
  } catch {
    response.destroy();
  }
}
