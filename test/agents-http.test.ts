import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { createServer as createTlsServer, type Server as HttpsServer } from 'node:https';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { AddressPolicy, type Resolver } from '../src/network/index.js';
import { HostAllowlist } from '../src/agents/http/allowlist.js';
import { HttpNodeClient } from '../src/agents/http/client.js';
import { GatewayError } from '../src/errors/index.js';

/** Log lines the client writes (the details the caller never sees). */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { logger: pino({ level: 'warn' }, stream), lines };
}

const resolveTo = (...addresses: string[]): Resolver => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const context = { requestId: 'req_http', nodeId: 'call' };
const signal = () => new AbortController().signal;

function client(options: { allow?: string[]; allowAddresses?: string[]; resolver: Resolver; ca?: string; maxResponseBytes?: number; timeoutMs?: number }) {
  const { logger, lines } = capturingLogger();
  const http = new HttpNodeClient({
    allowlist: new HostAllowlist(options.allow ?? []),
    policy: new AddressPolicy(options.allowAddresses ?? [], 'agents.httpAllowAddresses'),
    timeoutMs: options.timeoutMs ?? 5_000,
    maxResponseBytes: options.maxResponseBytes ?? 1024 * 1024,
    logger,
    resolver: options.resolver,
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
  });
  return { http, lines };
}

function isGeneric(error: unknown): boolean {
  return error instanceof GatewayError && error.code === 'provider_error' && /could not be completed/.test(error.message) && !/127|10\.0|private|allowlist/.test(error.message);
}

describe('agent http node: refusals before any connection', () => {
  let server: TcpServer;
  let port = 0;
  let connections = 0;

  before(async () => {
    server = createTcpServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const cases: [string, () => Resolver, (port: number) => string, RegExp][] = [
    ['a host resolving to loopback', () => resolveTo('127.0.0.1'), (p) => `https://api.test:${p}/x`, /127\.0\.0\.1 is a private/],
    ['a host resolving to a private address', () => resolveTo('10.0.0.7'), (p) => `https://api.test:${p}/x`, /10\.0\.0\.7 is a private/],
    ['a host resolving to an IPv4-mapped loopback', () => resolveTo('::ffff:127.0.0.1'), (p) => `https://api.test:${p}/x`, /::ffff:127\.0\.0\.1 is a private/],
    ['a host resolving to NAT64 of a private address', () => resolveTo('64:ff9b::a9fe:a9fe'), (p) => `https://api.test:${p}/x`, /64:ff9b::a9fe:a9fe is a private/],
    ['a host with one public and one loopback address', () => resolveTo('93.184.216.34', '127.0.0.1'), (p) => `https://api.test:${p}/x`, /127\.0\.0\.1 is a private/],
    ['the metadata address', () => resolveTo('169.254.169.254'), (p) => `https://api.test:${p}/x`, /169\.254\.169\.254/],
    ['a loopback address literal on the allowlist', () => resolveTo('8.8.8.8'), (p) => `https://127.0.0.1:${p}/x`, /127\.0\.0\.1 is a private/],
    ['a host not on the allowlist', () => resolveTo('127.0.0.1'), (p) => `https://other.test:${p}/x`, /not on the allowlist/],
    ['plain http', () => resolveTo('127.0.0.1'), (p) => `http://api.test:${p}/x`, /not https/],
    ['credentials in the URL', () => resolveTo('127.0.0.1'), (p) => `https://user:pw@api.test:${p}/x`, /credentials/],
  ];

  for (const [name, resolver, url, reason] of cases) {
    test(`refuses ${name}`, async () => {
      const { http, lines } = client({ allow: [`api.test:${port}`, `127.0.0.1:${port}`], resolver: resolver() });
      await assert.rejects(http.call({ method: 'GET', url: url(port), body: null }, signal(), context), isGeneric);
      assert.equal(connections, 0, 'no connection was made');
      assert.match(String(lines.at(-1)?.reason), reason);
      await http.close();
    });
  }
});

let opensslMissing: string | false = false;
try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
} catch {
  opensslMissing = 'openssl is not installed (needed to make a test certificate)';
}

describe('agent http node: allowed calls', { skip: opensslMissing }, () => {
  let server: HttpsServer;
  let port = 0;
  let ca = '';
  let dir = '';
  const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const stalled: ServerResponse[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'modelgate-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=api.test', '-addext', 'subjectAltName=DNS:api.test,DNS:other.test'], { stdio: 'ignore' });
    ca = readFileSync(join(dir, 'cert.pem'), 'utf8');
    server = createTlsServer({ key: readFileSync(join(dir, 'key.pem')), cert: ca }, (request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        seen.push({ url: request.url ?? '', headers: request.headers, body });
        if (request.url === '/json') {
          response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        } else if (request.url === '/gzip') {
          response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync('x'.repeat(5000)));
        } else if (request.url === '/slow-gzip' || request.url === '/slow-plain') {
          // Headers and a first part, then nothing: only the call's timeout can end it.
          const gzip = request.url === '/slow-gzip';
          response.writeHead(200, { 'content-type': 'text/plain', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
          response.write(gzip ? gzipSync('x'.repeat(5000)).subarray(0, 20) : 'x'.repeat(100));
          stalled.push(response);
        } else if (request.url === '/same-origin-redirect') {
          response.writeHead(302, { location: '/json' }).end();
        } else if (request.url === '/cross-origin-redirect') {
          response.writeHead(302, { location: `https://other.test:${port}/json` }).end();
        } else {
          response.writeHead(404).end('missing');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    for (const response of stalled) response.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const allowedClient = (maxResponseBytes?: number) =>
    client({ allow: [`api.test:${port}`, `other.test:${port}`], allowAddresses: ['127.0.0.0/8'], resolver: resolveTo('127.0.0.1'), ca, ...(maxResponseBytes !== undefined ? { maxResponseBytes } : {}) });

  test('an operator-allowed address is reached, pinned to the checked address, without credentials', async () => {
    const { http } = allowedClient();
    const response = await http.call({ method: 'POST', url: `https://api.test:${port}/json`, body: '{"q":1}' }, signal(), context);
    assert.deepEqual(response, { status: 200, contentType: 'application/json', body: '{"ok":true}' });
    const request = seen.at(-1)!;
    assert.equal(request.headers.host, `api.test:${port}`);
    assert.equal(request.body, '{"q":1}');
    assert.equal(request.headers.authorization, undefined);
    assert.equal(request.headers.cookie, undefined);
    await http.close();
  });

  test('decompresses and caps the response size after decompression', async () => {
    const { http } = allowedClient();
    assert.equal((await http.call({ method: 'GET', url: `https://api.test:${port}/gzip`, body: null }, signal(), context)).body.length, 5000);
    await http.close();
    const small = allowedClient(1000);
    await assert.rejects(small.http.call({ method: 'GET', url: `https://api.test:${port}/gzip`, body: null }, signal(), context), isGeneric);
    assert.match(String(small.lines.at(-1)?.reason), /larger than 1000 bytes/);
    await small.http.close();
  });

  for (const path of ['/slow-plain', '/slow-gzip']) {
    test(`a body that stalls (${path}) ends at the call's timeout, compressed or not`, async () => {
      const { http, lines } = client({ allow: [`api.test:${port}`], allowAddresses: ['127.0.0.0/8'], resolver: resolveTo('127.0.0.1'), ca, timeoutMs: 300 });
      const startedAt = Date.now();
      const outcome = await Promise.race([
        http.call({ method: 'GET', url: `https://api.test:${port}${path}`, body: null }, signal(), context).then(
          () => 'answered',
          (error: unknown) => (isGeneric(error) ? 'refused' : error),
        ),
        new Promise((resolve) => setTimeout(() => resolve('still waiting after 3 s'), 3_000)),
      ]);
      assert.equal(outcome, 'refused');
      assert.ok(Date.now() - startedAt < 2_000);
      assert.match(String(lines.at(-1)?.reason), /timed out after 300 ms/);
      await http.close();
    });
  }

  test('follows a same-origin redirect and refuses a cross-origin one', async () => {
    const { http, lines } = allowedClient();
    assert.equal((await http.call({ method: 'GET', url: `https://api.test:${port}/same-origin-redirect`, body: null }, signal(), context)).body, '{"ok":true}');
    await assert.rejects(http.call({ method: 'GET', url: `https://api.test:${port}/cross-origin-redirect`, body: null }, signal(), context), isGeneric);
    assert.match(String(lines.at(-1)?.reason), /redirect to another origin/);
    await http.close();
  });

  test('without the operator allowing it, the same server is refused', async () => {
    const { http } = client({ allow: [`api.test:${port}`], resolver: resolveTo('127.0.0.1'), ca });
    const before = seen.length;
    await assert.rejects(http.call({ method: 'GET', url: `https://api.test:${port}/json`, body: null }, signal(), context), isGeneric);
    assert.equal(seen.length, before);
    await http.close();
  });
});
