import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';

/**
 * Dashboard sign-in through the admin API: the cookie, CSRF, roles, enumeration, the
 * throttle, sign-out and restart; and the session authorising the admin API exactly as the
 * admin token does. Accounts are made the way an operator makes them: `modelgate users`.
 */

const BIN = resolve('bin/modelgate.js');
const ADMIN_PASSWORD = 'admin password 0123';
const VIEWER_PASSWORD = 'viewer password 0123';

let gateway: TestGateway;
/** Kept across the restart test's two gateways. */
const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-accounts-http-'));

interface Answer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test asserts what it reads
  body: any;
}

async function send(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text.length > 0 ? JSON.parse(text) : null };
}

/** A signed-in browser: its cookie and CSRF token. */
async function signIn(email: string, password: string, headers: Record<string, string> = {}): Promise<{ cookie: string; csrf: string; answer: Answer }> {
  const answer = await send('POST', '/admin/v1/session', headers, { email, password });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const cookie = (answer.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { cookie, csrf: answer.body.csrf_token as string, answer };
}

function users(args: string[], stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [BIN, 'users', ...args, '--url', gateway.url],
      { env: { ...process.env, MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN } },
      (error, stdout, stderr) => done({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    );
    child.stdin?.end(stdin);
  });
}

before(async () => {
  // The throttle's clock stands still: a slow password check must not outlast the wait it tests.
  const throttleClock = Date.now();
  gateway = await startTestGateway({ dataDir, configFile: { server: { trustProxy: true } }, accounts: { now: () => throttleClock } });
  const admin = await users(['create', '--email', 'admin@example.com', '--password-stdin'], `${ADMIN_PASSWORD}\n`);
  assert.equal(admin.code, 0, admin.stderr);
  assert.match(admin.stdout, /Created admin@example\.com \(admin, active/);
  const viewer = await users(['create', '--email', 'viewer@example.com', '--role', 'viewer', '--password-stdin'], VIEWER_PASSWORD);
  assert.equal(viewer.code, 0, viewer.stderr);
});
after(async () => {
  await gateway.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('modelgate users', () => {
  test('list shows the accounts; a short password and a taken email are refused with the reason', async () => {
    const list = await users(['list', '--json'], '');
    assert.equal(list.code, 0, list.stderr);
    const emails = (JSON.parse(list.stdout) as { data: { email: string; role: string }[] }).data.map((user) => `${user.email}:${user.role}`);
    assert.deepEqual(emails, ['admin@example.com:admin', 'viewer@example.com:viewer']);
    const short = await users(['create', '--email', 'short@example.com', '--password-stdin'], 'short');
    assert.notEqual(short.code, 0);
    assert.match(short.stderr, /password must be at least 12 characters/);
    const taken = await users(['create', '--email', 'ADMIN@example.com', '--password-stdin'], ADMIN_PASSWORD);
    assert.match(taken.stderr, /already an account/);
  });

  test('without a terminal or --password-stdin the CLI says how to give the password', async () => {
    const result = await users(['create', '--email', 'x@example.com'], '');
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /--password-stdin/);
  });
});

describe('sign-in', () => {
  test('sets an HttpOnly, SameSite=Strict cookie on path /, Secure only over HTTPS; the body holds no session token', async () => {
    const plain = await signIn('admin@example.com', ADMIN_PASSWORD);
    const cookie = plain.answer.headers.get('set-cookie') ?? '';
    assert.match(cookie, /^modelgate_session=[\w-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict$/);
    assert.ok(!JSON.stringify(plain.answer.body).includes(plain.cookie.split('=')[1]!));
    assert.equal(plain.answer.body.user.email, 'admin@example.com');
    const secure = await signIn('admin@example.com', ADMIN_PASSWORD, { 'x-forwarded-proto': 'https' });
    assert.match(secure.answer.headers.get('set-cookie') ?? '', /; Secure$/);
  });

  test('an unknown email and a wrong password get the same answer', async () => {
    const unknown = await send('POST', '/admin/v1/session', {}, { email: 'nobody@example.com', password: ADMIN_PASSWORD });
    const wrong = await send('POST', '/admin/v1/session', {}, { email: 'admin@example.com', password: 'not the password' });
    assert.equal(unknown.status, 401);
    assert.equal(wrong.status, 401);
    assert.equal(unknown.body.error.code, 'invalid_credentials');
    assert.deepEqual({ ...unknown.body.error, request_id: null }, { ...wrong.body.error, request_id: null });
    assert.equal(unknown.headers.get('set-cookie'), null);
  });

  test('repeated failures for an account answer 429 with Retry-After and a clear message', async () => {
    const email = 'nobody-throttled@example.com';
    let answer: Answer | undefined;
    for (let attempt = 0; attempt < 6; attempt += 1) answer = await send('POST', '/admin/v1/session', {}, { email, password: 'guess number one' });
    assert.equal(answer!.status, 429);
    assert.equal(answer!.body.error.code, 'rate_limit_exceeded');
    assert.match(answer!.body.error.message, /Too many failed sign-ins.*Try again in \d+ seconds/);
    assert.ok(Number(answer!.headers.get('retry-after')) > 0);
  });
});

describe('a session authorises the admin API as the admin token does', () => {
  test('the same read with the token and with the session gives the same answer', async () => {
    const session = await signIn('admin@example.com', ADMIN_PASSWORD);
    await gateway.createKey();
    const byToken = await send('GET', '/admin/v1/keys', { authorization: `Bearer ${TEST_ADMIN_TOKEN}` });
    const bySession = await send('GET', '/admin/v1/keys', { cookie: session.cookie });
    assert.equal(byToken.status, 200);
    assert.deepEqual(bySession.body, byToken.body);
  });

  test('a change needs the session’s CSRF token; the admin token needs none', async () => {
    const session = await signIn('admin@example.com', ADMIN_PASSWORD);
    const other = await signIn('admin@example.com', ADMIN_PASSWORD);
    const key = { name: 'from-dashboard', scopes: ['model:request'] };
    const missing = await send('POST', '/admin/v1/keys', { cookie: session.cookie }, key);
    assert.equal(missing.status, 403);
    assert.equal(missing.body.error.code, 'csrf_token_invalid');
    const foreign = await send('POST', '/admin/v1/keys', { cookie: session.cookie, 'x-csrf-token': other.csrf }, key);
    assert.equal(foreign.body.error.code, 'csrf_token_invalid');
    const ok = await send('POST', '/admin/v1/keys', { cookie: session.cookie, 'x-csrf-token': session.csrf }, key);
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal((await send('POST', '/admin/v1/keys', { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, key)).status, 201);
  });

  test('GET /admin/v1/session returns the signed-in user and the same CSRF token', async () => {
    const session = await signIn('admin@example.com', ADMIN_PASSWORD);
    const answer = await send('GET', '/admin/v1/session', { cookie: session.cookie });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.csrf_token, session.csrf);
    assert.equal(answer.body.user.role, 'admin');
    assert.equal(answer.headers.get('cache-control'), 'no-store');
  });

  test('a made-up cookie is refused as an ended session', async () => {
    const answer = await send('GET', '/admin/v1/keys', { cookie: 'modelgate_session=made-up' });
    assert.equal(answer.status, 401);
    assert.equal(answer.body.error.code, 'session_expired');
  });
});

describe('roles', () => {
  test('a viewer reads logs and usage but cannot read or change keys or accounts', async () => {
    const viewer = await signIn('viewer@example.com', VIEWER_PASSWORD);
    const headers = { cookie: viewer.cookie, 'x-csrf-token': viewer.csrf };
    assert.equal((await send('GET', '/admin/v1/logs', headers)).status, 200);
    assert.equal((await send('GET', '/admin/v1/usage', headers)).status, 200);
    for (const [method, path, body] of [
      ['GET', '/admin/v1/keys', undefined],
      ['POST', '/admin/v1/keys', { name: 'x', scopes: ['model:request'] }],
      ['GET', '/admin/v1/users', undefined],
      ['POST', '/admin/v1/users', { email: 'v2@example.com', password: VIEWER_PASSWORD }],
    ] as const) {
      const answer = await send(method, path, headers, body);
      assert.equal(answer.status, 403, `${method} ${path}`);
      assert.equal(answer.body.error.code, 'insufficient_role');
    }
  });
});

describe('sign-out and restart', () => {
  test('sign-out clears the cookie and ends the session on the server', async () => {
    const session = await signIn('admin@example.com', ADMIN_PASSWORD);
    const out = await send('DELETE', '/admin/v1/session', { cookie: session.cookie, 'x-csrf-token': session.csrf });
    assert.equal(out.status, 204);
    assert.match(out.headers.get('set-cookie') ?? '', /^modelgate_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
    assert.equal((await send('GET', '/admin/v1/session', { cookie: session.cookie })).body.error.code, 'session_expired');
  });

  test('a session survives a restart of the gateway', async () => {
    const session = await signIn('admin@example.com', ADMIN_PASSWORD);
    await gateway.close();
    gateway = await startTestGateway({ dataDir });
    const answer = await send('GET', '/admin/v1/session', { cookie: session.cookie });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.user.email, 'admin@example.com');
  });
});
