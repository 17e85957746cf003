import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Accounts, csrfTokenOf, hashesWaiting, hashPassword, isCsrfTokenOf, verifyPassword } from '../src/accounts/index.js';
import { isGatewayError } from '../src/errors/index.js';
import type { Storage } from '../src/storage/index.js';
import { openBackendStorage, STORAGE_BACKENDS } from './helpers/storage-backends.js';

/** Passwords, sessions, CSRF and the sign-in throttle, on each database. */

const PASSWORD = 'correct horse battery staple';

describe('passwords', () => {
  test('scrypt hash names its parameters, verifies the right password only, and salts every hash', async () => {
    const hash = await hashPassword(PASSWORD);
    assert.match(hash, /^scrypt\$15\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    assert.equal(await verifyPassword(PASSWORD, hash), true);
    assert.equal(await verifyPassword(`${PASSWORD} `, hash), false);
    assert.notEqual(await hashPassword(PASSWORD), hash);
    assert.equal(await verifyPassword(PASSWORD, 'plain-text'), false);
  });

  test('at most two hashes run at once: a flood waits its turn instead of filling the thread pool', async () => {
    const hashes = Array.from({ length: 10 }, () => hashPassword(PASSWORD));
    // Two went to the pool; the other eight wait in line, in the gateway, not in libuv's queue.
    assert.equal(hashesWaiting(), 8);
    await Promise.all(hashes);
    assert.equal(hashesWaiting(), 0);
  });
});

describe('CSRF tokens', () => {
  test('bound to the session: its own token passes, another session’s, a missing or altered one does not', () => {
    const token = csrfTokenOf('session-a');
    assert.equal(isCsrfTokenOf('session-a', token), true);
    assert.equal(isCsrfTokenOf('session-b', token), false);
    assert.equal(isCsrfTokenOf('session-a', undefined), false);
    assert.equal(isCsrfTokenOf('session-a', `${token.slice(0, -1)}A` === token ? `${token.slice(0, -1)}B` : `${token.slice(0, -1)}A`), false);
    assert.equal(isCsrfTokenOf('session-a', ''), false);
  });
});

for (const backend of STORAGE_BACKENDS) {
  describe(`accounts on ${backend.name}`, { skip: backend.skip }, () => {
    let storage: Storage;
    let close: () => Promise<void>;
    let accounts: Accounts;

    // The throttle's clock stands still unless a test moves it: its waits are counted, not timed.
    let clock = Date.now();
    let checks = 0;

    before(async () => {
      ({ storage, close } = await openBackendStorage(backend));
      accounts = new Accounts(storage.db, {
        lifetimes: { idleMs: 10 * 60_000, absoluteMs: 60 * 60_000 },
        throttle: { windowMs: 60_000, perAccount: 3, perAddress: 5 },
        now: () => clock,
        verify: (password, stored) => {
          checks += 1;
          return verifyPassword(password, stored);
        },
      });
      await accounts.createUser('Ops@Example.com', PASSWORD, 'admin');
    });
    after(async () => close());

    test('the table keeps a hash of the session token, never the token', async () => {
      const { token } = await accounts.signIn('ops@example.com', PASSWORD, '10.0.0.1');
      const rows = await storage.db.selectFrom('dashboard_sessions').selectAll().execute();
      assert.ok(rows.length > 0);
      for (const row of rows) assert.notEqual(row.token_hash, token);
      assert.ok((await accounts.authenticate(token)) !== undefined);
    });

    test('a session ends after its idle time, and at its absolute end even when used', async () => {
      const t0 = Date.now();
      const userId = (await accounts.users.get('ops@example.com')).id;
      const { token } = await accounts.sessions.create(userId, '10.0.0.2', t0);
      assert.ok((await accounts.sessions.use(token, t0 + 9 * 60_000)) !== undefined);
      assert.equal(await accounts.sessions.use(token, t0 + 9 * 60_000 + 10 * 60_000 + 1), undefined, 'idle');

      const second = await accounts.sessions.create(userId, '10.0.0.2', t0);
      for (let minute = 5; minute < 60; minute += 5) assert.ok((await accounts.sessions.use(second.token, t0 + minute * 60_000)) !== undefined);
      assert.equal(await accounts.sessions.use(second.token, t0 + 60 * 60_000), undefined, 'absolute');
    });

    test('signing out, disabling the account and a new password each end the session', async () => {
      const first = await accounts.signIn('ops@example.com', PASSWORD, '10.0.0.3');
      await accounts.signOut(first.token);
      assert.equal(await accounts.authenticate(first.token), undefined);

      const second = await accounts.signIn('ops@example.com', PASSWORD, '10.0.0.3');
      await accounts.resetPassword('ops@example.com', `${PASSWORD}!`);
      assert.equal(await accounts.authenticate(second.token), undefined);
      await accounts.resetPassword('ops@example.com', PASSWORD);

      const third = await accounts.signIn('ops@example.com', PASSWORD, '10.0.0.3');
      await accounts.setDisabled('ops@example.com', true);
      assert.equal(await accounts.authenticate(third.token), undefined);
      await assert.rejects(accounts.signIn('ops@example.com', PASSWORD, '10.0.0.3'), (error) => isGatewayError(error) && error.code === 'invalid_credentials');
      await accounts.setDisabled('ops@example.com', false);
    });

    test('an unknown email and a wrong password get the same error; both count against the throttle', async () => {
      const unknown = await accounts.signIn('nobody@example.com', PASSWORD, '10.0.1.1').catch((error: unknown) => error);
      const wrong = await accounts.signIn('ops@example.com', 'wrong password!!', '10.0.1.2').catch((error: unknown) => error);
      assert.ok(isGatewayError(unknown) && isGatewayError(wrong));
      assert.equal(unknown.code, wrong.code);
      assert.equal(unknown.message, wrong.message);
      await accounts.throttle.succeeded('ops@example.com', '10.0.1.2');
    });

    test('per account: the fourth attempt within the window is refused with a wait, even with the right password', async () => {
      await accounts.createUser('throttled@example.com', PASSWORD, 'viewer');
      for (let attempt = 0; attempt < 3; attempt += 1) {
        await assert.rejects(accounts.signIn('throttled@example.com', 'wrong password!!', `10.0.2.${attempt}`));
      }
      const refused = await accounts.signIn('throttled@example.com', PASSWORD, '10.0.2.9').catch((error: unknown) => error);
      assert.ok(isGatewayError(refused));
      assert.equal(refused.code, 'rate_limit_exceeded');
      assert.ok(refused.retryAfterSeconds !== undefined && refused.retryAfterSeconds > 0 && refused.retryAfterSeconds <= 60);
      assert.match(refused.message, /Try again in \d+ seconds/);
    });

    test('60 concurrent wrong passwords for one account: two are checked at once, the rest refused before any check', async () => {
      await accounts.createUser('flooded@example.com', PASSWORD, 'viewer');
      checks = 0;
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, index) => accounts.signIn('flooded@example.com', 'wrong password!!', `10.0.3.${index}`).catch((error: unknown) => error)),
      );
      const codes = answers.map((answer) => (isGatewayError(answer) ? answer.code : 'signed in'));
      assert.equal(checks, 2, 'password checks');
      assert.equal(codes.filter((code) => code === 'invalid_credentials').length, 2);
      assert.equal(codes.filter((code) => code === 'rate_limit_exceeded').length, 58);
    });

    test('no lockout: each failure past the free ones doubles the wait, and the right password is admitted once it is over', async () => {
      await accounts.createUser('owner@example.com', PASSWORD, 'viewer');
      const attacker = '10.0.4.1';
      const waitOf = async (password: string, address: string) => {
        const answer = await accounts.signIn('owner@example.com', password, address).catch((error: unknown) => error);
        return isGatewayError(answer) ? (answer.code === 'rate_limit_exceeded' ? answer.retryAfterSeconds : 0) : -1;
      };
      for (let attempt = 0; attempt < 3; attempt += 1) assert.equal(await waitOf('wrong password!!', attacker), 0, 'free failures');
      checks = 0;
      assert.equal(await waitOf(PASSWORD, '10.0.4.2'), 1, 'the fourth attempt waits 1 s, the right password too');
      clock += 1000;
      assert.equal(await waitOf('wrong password!!', attacker), 0, 'checked after the wait');
      assert.equal(await waitOf('wrong password!!', attacker), 2, 'the next wait is twice as long');
      clock += 2000;
      assert.equal(await waitOf(PASSWORD, '10.0.4.2'), -1, 'the owner signs in once the wait is over');
      assert.equal(checks, 2);
    });

    test('per address: failures on many accounts from one address stop that address', async () => {
      for (let attempt = 0; attempt < 5; attempt += 1) {
        await assert.rejects(accounts.signIn(`spray${attempt}@example.com`, 'wrong password!!', '10.9.9.9'));
      }
      const refused = await accounts.signIn('ops@example.com', PASSWORD, '10.9.9.9').catch((error: unknown) => error);
      assert.ok(isGatewayError(refused) && refused.code === 'rate_limit_exceeded');
      assert.ok((await accounts.signIn('ops@example.com', PASSWORD, '10.9.9.10')).token.length > 0, 'another address still signs in');
    });
  });
}
