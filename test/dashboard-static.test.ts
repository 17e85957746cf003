import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/** The dashboard's files: served under /dashboard/ with their caching and security headers (built by npm install). */

const BUILT = existsSync('dist/web/index.html');
let gateway: TestGateway;

before(async () => {
  gateway = await startTestGateway();
});
after(async () => {
  await gateway.close();
});

test('GET / links to the dashboard', async () => {
  const status = (await (await fetch(`${gateway.url}/`)).json()) as { dashboard: string };
  assert.equal(status.dashboard, `${gateway.url}/dashboard/`);
});

test('/dashboard redirects to /dashboard/', async () => {
  const response = await fetch(`${gateway.url}/dashboard`, { redirect: 'manual' });
  assert.equal(response.status, 301);
  assert.equal(response.headers.get('location'), '/dashboard/');
});

test('index.html: never cached, a strict CSP, and the app for every page path', { skip: BUILT ? false : 'dist/web is not built (npm run build)' }, async () => {
  for (const path of ['/dashboard/', '/dashboard/keys', '/dashboard/logs/req_0123']) {
    const response = await fetch(`${gateway.url}${path}`);
    assert.equal(response.status, 200, path);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(response.headers.get('cache-control'), 'no-cache');
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    assert.equal(response.headers.get('x-frame-options'), 'DENY');
    const html = await response.text();
    assert.match(html, /<div id="root">/);
    // Nothing from elsewhere: every script and stylesheet is one of the gateway's own files.
    for (const [, url] of html.matchAll(/(?:src|href)="([^"]+)"/g)) assert.match(url!, /^(\/dashboard\/assets\/|data:)/);
  }
});

test('hashed assets are cached for a year', { skip: BUILT ? false : 'dist/web is not built (npm run build)' }, async () => {
  const html = await (await fetch(`${gateway.url}/dashboard/`)).text();
  const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  assert.ok(script !== undefined);
  const response = await fetch(`${gateway.url}${script}`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.match(response.headers.get('content-type') ?? '', /javascript/);
  assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/);
});
