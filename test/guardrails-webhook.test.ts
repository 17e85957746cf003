import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createTlsServer, type Server as HttpsServer } from 'node:https';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Guardrails, SIGNATURE_HEADER, webhookSignature, type GuardrailConfig } from '../src/guardrails/index.js';
import type { Resolver } from '../src/network/index.js';
import { opensslMissing, testCertificate } from './helpers/test-certificate.js';

const SECRET = `whsec-${'FAKEfake00'.repeat(3)}`;
const toLoopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

describe('webhook guardrails under a slow and a hostile server', { skip: opensslMissing }, () => {
  let server: HttpsServer;
  let port = 0;
  let ca = '';
  const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const stalled: ServerResponse[] = [];

  before(async () => {
    const certificate = testCertificate('hooks.test');
    ca = certificate.cert;
    server = createTlsServer(certificate, (request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        seen.push({ url: request.url ?? '', headers: request.headers, body });
        const texts = (JSON.parse(body) as { texts: string[] }).texts.join(' ');
        switch (request.url) {
          case '/judge':
            response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ flagged: texts.includes('forbidden') }));
            break;
          case '/slow':
            // Headers, then nothing: only the guardrail's timeout ends it.
            response.writeHead(200, { 'content-type': 'application/json' });
            response.write('{"flag');
            stalled.push(response);
            break;
          case '/prose':
            response.writeHead(200, { 'content-type': 'text/plain' }).end('looks fine to me');
            break;
          case '/string-verdict':
            response.writeHead(200, { 'content-type': 'application/json' }).end('{"flagged":"false"}');
            break;
          case '/huge':
            response.writeHead(200, { 'content-type': 'application/json' }).end(`{"flagged":false,"pad":"${'x'.repeat(200_000)}"}`);
            break;
          case '/redirect':
            response.writeHead(307, { location: '/judge' }).end();
            break;
          case '/error':
            response.writeHead(500).end('{"flagged":false}');
            break;
          case '/reset':
            request.socket.destroy();
            break;
          default:
            response.writeHead(404).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    for (const response of stalled) response.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const guardrails = (path: string, over: Partial<GuardrailConfig> = {}, allowAddresses = ['127.0.0.1/32']) =>
    new Guardrails(
      [
        {
          name: 'hook',
          check: 'webhook',
          stage: ['input'],
          action: 'block',
          onError: 'closed',
          apply: { all: true, keys: [], projects: [], models: [] },
          window: 256,
          options: { url: `https://hooks.test:${port}${path}`, secretEnv: 'HOOK_SECRET', timeoutMs: 300, allowAddresses },
          ...over,
        },
      ],
      { env: { HOOK_SECRET: SECRET }, webhookTransport: { resolver: toLoopback, ca } },
    );
  const judge = async (service: Guardrails, text: string) => {
    try {
      return (await service.dryRun('hook', 'input', text))!;
    } finally {
      await service.close();
    }
  };

  test('the texts and metadata are POSTed, the body signed with the shared key; the verdict is the service\'s', async () => {
    const passed = await judge(guardrails('/judge'), 'an ordinary question');
    assert.equal(passed.verdict.outcome, 'passed');
    const request = seen.at(-1)!;
    const body = JSON.parse(request.body) as { guardrail: string; stage: string; texts: string[]; metadata: { capability: string } };
    assert.equal(body.guardrail, 'hook');
    assert.equal(body.stage, 'input');
    assert.deepEqual(body.texts, ['an ordinary question']);
    const signature = String(request.headers[SIGNATURE_HEADER]);
    const seconds = Number(/^t=(\d+),/.exec(signature)?.[1]);
    assert.equal(signature, webhookSignature(SECRET, seconds, request.body), 'the receiver recomputes the signature over t.body');
    assert.equal(request.headers.authorization, undefined);
    const flagged = await judge(guardrails('/judge'), 'something forbidden');
    assert.equal(flagged.verdict.outcome, 'blocked');
    assert.equal(flagged.verdict.failed, undefined);
  });

  for (const [path, what] of [
    ['/slow', 'a server that stalls past the timeout'],
    ['/prose', 'an answer that is not JSON'],
    ['/string-verdict', 'a verdict that is not a boolean'],
    ['/huge', 'an answer larger than the cap'],
    ['/redirect', 'a redirect (never followed)'],
    ['/error', 'a 500, whatever its body says'],
    ['/reset', 'a connection cut before any answer'],
  ] as const) {
    test(`${what}: a failed check, closed`, async () => {
      const { verdict, blocked } = await judge(guardrails(path), 'an ordinary question');
      assert.equal(blocked, true);
      assert.deepEqual([verdict.outcome, verdict.failed], ['blocked', true]);
    });
  }

  test('onError open: a failed webhook lets the text through, recorded as an error', async () => {
    const { verdict, blocked } = await judge(guardrails('/slow', { onError: 'open' }), 'an ordinary question');
    assert.equal(blocked, false);
    assert.equal(verdict.outcome, 'error');
  });

  test('the address rules of agents\' http nodes: a host resolving to loopback is refused unless allowed, before any request', async () => {
    const before = seen.length;
    const { verdict } = await judge(guardrails('/judge', {}, []), 'an ordinary question');
    assert.deepEqual([verdict.outcome, verdict.failed], ['blocked', true]);
    assert.equal(seen.length, before, 'no request reached the server');
  });

  test('start-up refuses plain http, credentials in the URL, a loopback literal and a missing key, naming the field', () => {
    const build = (options: Record<string, unknown>, env: Record<string, string> = { HOOK_SECRET: SECRET }) => () =>
      new Guardrails(
        [{ name: 'hook', check: 'webhook', stage: ['input'], action: 'block', onError: 'closed', apply: { all: true, keys: [], projects: [], models: [] }, window: 256, options: { secretEnv: 'HOOK_SECRET', ...options } }],
        { env },
      );
    assert.throws(build({ url: 'http://hooks.test/judge' }), /guardrails\[0\]\.options\.url: a webhook is called over https only/);
    assert.throws(build({ url: 'https://user:pw@hooks.test/judge' }), /options\.url: put no credentials/);
    assert.throws(build({ url: 'https://127.0.0.1/judge' }), /options\.url: .*127\.0\.0\.1/);
    assert.throws(build({ url: 'https://hooks.test/judge' }, {}), /options\.secretEnv: set the environment variable HOOK_SECRET/);
    assert.throws(build({ url: 'https://hooks.test/judge', allowAddresses: ['not-a-cidr'] }), /guardrails\[0\]\.options\.allowAddresses/);
  });
});
