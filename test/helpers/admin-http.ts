import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEST_ADMIN_TOKEN, type TestGateway } from './gateway.js';

/** An answer read whole: its JSON body (null when empty), its text and its request id. */
export interface HttpAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever the route answered
  body: any;
  text: string;
  requestId: string;
}

/** A request over the gateway's listener, as the admin token unless other headers are given; a body goes as JSON. */
export async function sendJson(gateway: TestGateway, method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }): Promise<HttpAnswer> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, text, body: text.length > 0 ? JSON.parse(text) : null, requestId: response.headers.get('x-request-id') ?? '' };
}

/** The password of the dashboard users the admin tests create. */
export const USER_PASSWORD = 'a long enough password 1';

/** Creates each user (email, role) through the admin API, as the admin token, with USER_PASSWORD. */
export async function createUsers(gateway: TestGateway, users: readonly (readonly [string, string])[]): Promise<void> {
  for (const [email, role] of users) {
    assert.equal((await sendJson(gateway, 'POST', '/admin/v1/users', { email, password: USER_PASSWORD, role })).status, 201);
  }
}

/** A signed-in dashboard user: the session cookie, the CSRF token, and both as the headers of a changing request. */
export interface AdminSession {
  cookie: string;
  csrf: string;
  headers: Record<string, string>;
}

/** Signs a user in with USER_PASSWORD. */
export async function signIn(gateway: TestGateway, email: string): Promise<AdminSession> {
  const response = await fetch(`${gateway.url}/admin/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: USER_PASSWORD }) });
  assert.equal(response.status, 200);
  const cookie = response.headers.get('set-cookie')!.split(';')[0]!;
  const csrf = ((await response.json()) as { csrf_token: string }).csrf_token;
  return { cookie, csrf, headers: { cookie, 'x-csrf-token': csrf } };
}

/** Polls until `done` holds (every 25 ms, given up after 10 s so a lost announcement fails rather than hangs). */
export async function until<T>(call: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await call();
  for (let attempt = 0; attempt < 400 && !done(value); attempt += 1) {
    await sleep(25);
    value = await call();
  }
  return value;
}
