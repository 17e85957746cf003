import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { roleGrantOf } from '../src/accounts/index.js';
import { loadConfig } from '../src/config/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { CookieJar, signInAt, startOpenIdProvider, type OpenIdProvider } from './helpers/openid-provider.js';

/**
 * Dashboard single sign-on against a real OpenID provider (oidc-provider on 127.0.0.1): the
 * authorization code flow with PKCE, state bound to the browser, the nonce checked, the
 * groups claim mapped to a role, accounts made and updated at each sign-in, the session
 * cookie a password sign-in gives, and an audit entry.
 */

const CLIENT_SECRET = `oidc-${'FAKEfake00'.repeat(3)}`;
const ROLES = { admin: ['mg-admins'], viewer: ['mg-viewers'], teamAdmin: ['mg-team-{team}'] };

const accounts = {
  ada: { email: 'Ada@Example.com', groups: ['mg-admins', 'staff'] },
  vic: { email: 'vic@example.com', groups: ['mg-viewers'] },
  tess: { email: 'tess@example.com', groups: ['mg-team-red', 'mg-team-nosuch', 'mg-viewers'] },
  nobody: { email: 'nobody@example.com', groups: ['staff'] },
  local: { email: 'local@example.com', emailVerified: false, groups: ['mg-viewers'] },
};

let provider: OpenIdProvider;
let gateway: TestGateway;

/** The browser's side of a sign-on: start at the gateway, sign in at the provider, come back. */
async function signOn(login: keyof typeof accounts, returnTo = '/keys'): Promise<{ location: string; cookie: string | undefined }> {
  const jar = new CookieJar();
  const start = await fetch(`${gateway.url}/admin/v1/sso/login?return_to=${encodeURIComponent(returnTo)}`, { redirect: 'manual' });
  assert.equal(start.status, 302);
  jar.take(start);
  const authorization = new URL(start.headers.get('location')!);
  assert.equal(authorization.origin, provider.issuer);
  assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
  assert.ok((authorization.searchParams.get('nonce') ?? '').length > 20);
  const callback = await signInAt(authorization.href, login);
  assert.ok(callback.startsWith(`${gateway.url}/admin/v1/sso/callback?`), callback);
  const back = await fetch(callback, { headers: { cookie: jar.header() }, redirect: 'manual' });
  assert.equal(back.status, 302);
  jar.take(back);
  return { location: back.headers.get('location')!, cookie: jar.get('modelgate_session') };
}

async function sessionOf(cookie: string) {
  const answer = await fetch(`${gateway.url}/admin/v1/session`, { headers: { cookie: `modelgate_session=${cookie}` } });
  assert.equal(answer.status, 200);
  return (await answer.json()) as { user: { email: string; role: string; team_ids: string[]; sso: boolean } };
}

before(async () => {
  provider = await startOpenIdProvider(accounts);
  gateway = await startTestGateway({
    env: { TEST_OIDC_CLIENT_SECRET: CLIENT_SECRET },
    configFile: {
      auth: { oidc: { issuer: provider.issuer, clientId: 'modelgate', clientSecretEnv: 'TEST_OIDC_CLIENT_SECRET', providerName: 'Example SSO', scopes: ['openid', 'email', 'groups'], roles: ROLES } },
    },
  });
  await gateway.gateway.storage.db.insertInto('teams').values({ id: 'red', name: 'Red', created_at: Date.now() }).execute();
  await provider.serve({ clientId: 'modelgate', clientSecret: CLIENT_SECRET, redirectUri: `${gateway.url}/admin/v1/sso/callback` });
});

after(async () => {
  await gateway?.close();
  await provider?.close();
});

describe('single sign-on', () => {
  test('the sign-in page learns the provider name', async () => {
    const answer = await fetch(`${gateway.url}/admin/v1/sso`);
    assert.deepEqual(await answer.json(), { enabled: true, provider_name: 'Example SSO' });
  });

  test('signs an administrator in with the session cookie of a password sign-in, and audits it', async () => {
    const { location, cookie } = await signOn('ada', '/logs?status=5xx');
    assert.equal(location, '/dashboard/logs?status=5xx');
    assert.ok(cookie !== undefined);
    const session = await sessionOf(cookie);
    assert.deepEqual([session.user.email, session.user.role, session.user.sso], ['ada@example.com', 'admin', true]);
    const keys = await fetch(`${gateway.url}/admin/v1/keys`, { headers: { cookie: `modelgate_session=${cookie}` } });
    assert.equal(keys.status, 200);
    const audit = await gateway.admin('GET', '/admin/v1/audit?action=session.sign_in&actor=ada@example.com');
    assert.equal(audit.body.data.length, 1);
    assert.deepEqual(audit.body.data[0].after, { method: 'sso', role: 'admin', team_ids: [] });
  });

  test('maps groups to viewer and to a team admin of the teams that exist', async () => {
    const viewer = await signOn('vic');
    assert.equal((await sessionOf(viewer.cookie!)).user.role, 'viewer');
    const teamAdmin = await signOn('tess');
    const session = await sessionOf(teamAdmin.cookie!);
    assert.deepEqual([session.user.role, session.user.team_ids], ['team_admin', ['red']]);
  });

  test('refuses an account in no mapped group, back on the sign-in page with the reason', async () => {
    const { location, cookie } = await signOn('nobody');
    assert.equal(cookie, undefined);
    assert.match(decodeURIComponent(location), /^\/dashboard\/sign-in\?sso_error=Your Example SSO account is in no group/);
    assert.equal((await gateway.admin('GET', '/admin/v1/users')).body.data.some((user: { email: string }) => user.email === 'nobody@example.com'), false);
  });

  test('updates the role at the next sign-in and never links an unverified email to a local account', async () => {
    await gateway.gateway.context.accounts.createUser('local@example.com', 'a local password 0123', 'admin');
    const { location } = await signOn('local');
    assert.match(decodeURIComponent(location), /sso_error=There is already an account for local@example\.com/);
    const local = (await gateway.admin('GET', '/admin/v1/users')).body.data.find((user: { email: string }) => user.email === 'local@example.com');
    assert.deepEqual([local.role, local.sso], ['admin', false]);

    accounts.vic.groups = ['mg-admins'];
    const again = await signOn('vic');
    assert.equal((await sessionOf(again.cookie!)).user.role, 'admin');
    const vics = (await gateway.admin('GET', '/admin/v1/users')).body.data.filter((user: { email: string }) => user.email === 'vic@example.com');
    assert.equal(vics.length, 1);
  });

  test("refuses a callback without this browser's state, and a replayed one", async () => {
    const jar = new CookieJar();
    const start = await fetch(`${gateway.url}/admin/v1/sso/login`, { redirect: 'manual' });
    jar.take(start);
    const callback = await signInAt(start.headers.get('location')!, 'ada');
    // Another browser (no login cookie) brought the code: a login CSRF.
    const foreign = await fetch(callback, { redirect: 'manual' });
    assert.match(foreign.headers.get('location') ?? '', /^\/dashboard\/sign-in\?sso_error=/);
    assert.equal(foreign.headers.getSetCookie().some((line) => line.startsWith('modelgate_session=')), false);
    const own = await fetch(callback, { headers: { cookie: jar.header() }, redirect: 'manual' });
    assert.equal(own.headers.get('location'), '/dashboard/');
    const replayed = await fetch(callback, { headers: { cookie: jar.header() }, redirect: 'manual' });
    assert.match(replayed.headers.get('location') ?? '', /sso_error=/);
  });
});

describe('role mapping', () => {
  test('admin wins, then team admin of every team named, then viewer; nothing else maps', () => {
    assert.deepEqual(roleGrantOf(['mg-team-red', 'mg-admins'], ROLES), { role: 'admin', teamIds: [] });
    assert.deepEqual(roleGrantOf(['mg-viewers', 'mg-team-red', 'mg-team-blue'], ROLES), { role: 'team_admin', teamIds: ['blue', 'red'] });
    assert.deepEqual(roleGrantOf('mg-viewers', ROLES), { role: 'viewer', teamIds: [] });
    for (const claim of [undefined, [], ['mg-team-'], ['MG-ADMINS'], ['xmg-team-red'], [42]]) assert.equal(roleGrantOf(claim, ROLES), undefined);
  });

  test('the config stops start-up on a remote http issuer, an unset secret variable and a pattern without {team}', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'modelgate-sso-config-'));
    const load = (oidc: Record<string, unknown>, env: Record<string, string> = {}) => {
      writeFileSync(join(cwd, 'modelgate.yaml'), JSON.stringify({ auth: { oidc: { clientId: 'modelgate', issuer: 'https://idp.example.com', ...oidc } } }));
      return loadConfig({ env, cwd });
    };
    assert.equal(load({}).auth.oidc?.roleClaim, 'groups');
    assert.throws(() => load({ issuer: 'http://idp.example.com' }), /auth\.oidc\.issuer: use https/);
    assert.throws(() => load({ clientSecretEnv: 'UNSET_OIDC_SECRET' }), /auth\.oidc\.clientSecretEnv: the variable UNSET_OIDC_SECRET is not set/);
    assert.equal(load({ clientSecretEnv: 'SET_OIDC_SECRET' }, { SET_OIDC_SECRET: CLIENT_SECRET }).auth.oidc?.clientSecretEnv, 'SET_OIDC_SECRET');
    assert.throws(() => load({ roles: { teamAdmin: ['team-admins'] } }), /auth\.oidc\.roles\.teamAdmin/);
    rmSync(cwd, { recursive: true, force: true });
  });
});
