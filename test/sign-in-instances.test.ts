import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyPassword } from '../src/accounts/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { createPostgresDatabase, POSTGRES_URL } from './helpers/databases.js';
import { UNREACHABLE_REDIS_URL } from './helpers/propagation-processes.js';
import { TEST_ENCRYPTION_KEY } from './helpers/storage-backends.js';

/**
 * The sign-in throttle across instances: two gateways on one database and one Redis count
 * one account's attempts together, atomically. The throttle's clock stands still unless a test
 * moves it, and password checks are counted: nothing here is timed.
 */

const REDIS_URL = process.env.TEST_REDIS_URL;
const PASSWORD = 'correct horse battery staple';
const WRONG = 'wrong password!!';
/** The default throttle: 5 free failures per account. */
const FREE_PER_ACCOUNT = 5;

let clock = Date.now();
let checks = 0;
const accountsOptions = {
  now: () => clock,
  verify: (password: string, stored: string) => {
    checks += 1;
    return verifyPassword(password, stored);
  },
};

async function signIn(gateway: TestGateway, email: string, password: string): Promise<{ status: number; code?: string; retryAfter: string | null }> {
  const response = await fetch(`${gateway.url}/admin/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, ...(body.error === undefined ? {} : { code: body.error.code }), retryAfter: response.headers.get('retry-after') };
}

describe('sign-in throttle shared by two gateways through Redis', { skip: REDIS_URL === undefined || POSTGRES_URL === undefined ? 'TEST_REDIS_URL and TEST_DATABASE_URL are needed' : false }, () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let gateways: TestGateway[] = [];

  before(async () => {
    database = await createPostgresDatabase();
    const env = { DATABASE_URL: database.url, MODELGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, REDIS_URL: REDIS_URL!, MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:` };
    gateways = [await startTestGateway({ env, accounts: accountsOptions }), await startTestGateway({ env, accounts: accountsOptions })];
  });
  after(async () => {
    for (const gateway of gateways) await gateway.close();
    await database.drop();
  });

  test('60 concurrent wrong passwords over both gateways get no more checks than the free ones; the right password is admitted after the wait', async () => {
    const [first, second] = gateways as [TestGateway, TestGateway];
    await first.gateway.context.accounts.createUser('shared@example.com', PASSWORD, 'viewer');
    checks = 0;
    // All but one free failure spent, on either gateway.
    for (let attempt = 0; attempt < FREE_PER_ACCOUNT - 1; attempt += 1) {
      assert.equal((await signIn(gateways[attempt % 2]!, 'shared@example.com', WRONG)).code, 'invalid_credentials');
    }
    const answers = await Promise.all(Array.from({ length: 60 }, (_, index) => signIn(index % 2 === 0 ? first : second, 'shared@example.com', WRONG)));
    assert.equal(checks, FREE_PER_ACCOUNT, 'password checks: one gateway’s free attempt is the other’s');
    assert.equal(answers.filter((answer) => answer.code === 'invalid_credentials').length, 1);
    assert.equal(answers.filter((answer) => answer.code === 'rate_limit_exceeded').length, 59);

    const waiting = await signIn(second, 'shared@example.com', PASSWORD);
    assert.equal(waiting.status, 429, 'the right password waits too');
    assert.equal(checks, FREE_PER_ACCOUNT, 'and is not checked while it waits');
    clock += Number(waiting.retryAfter) * 1000;
    assert.equal((await signIn(first, 'shared@example.com', PASSWORD)).status, 200, 'the owner signs in once the wait is over');
    assert.equal(checks, FREE_PER_ACCOUNT + 1);
  });

  test('a success on one gateway clears the account’s count on the other', async () => {
    const [first, second] = gateways as [TestGateway, TestGateway];
    await first.gateway.context.accounts.createUser('cleared@example.com', PASSWORD, 'viewer');
    for (let attempt = 0; attempt < FREE_PER_ACCOUNT - 1; attempt += 1) assert.equal((await signIn(first, 'cleared@example.com', WRONG)).status, 401);
    assert.equal((await signIn(second, 'cleared@example.com', PASSWORD)).status, 200);
    for (let attempt = 0; attempt < FREE_PER_ACCOUNT; attempt += 1) assert.equal((await signIn(first, 'cleared@example.com', WRONG)).status, 401, `free failure ${attempt + 1} after the success`);
    assert.equal((await signIn(second, 'cleared@example.com', WRONG)).status, 429);
  });
});

describe('sign-in throttle while Redis is away', () => {
  test('each gateway counts on its own: failures past the free ones wait, the right password is admitted after the wait', async () => {
    const gateway = await startTestGateway({ env: { REDIS_URL: UNREACHABLE_REDIS_URL }, accounts: accountsOptions });
    try {
      await gateway.gateway.context.accounts.createUser('alone@example.com', PASSWORD, 'viewer');
      checks = 0;
      for (let attempt = 0; attempt < FREE_PER_ACCOUNT; attempt += 1) assert.equal((await signIn(gateway, 'alone@example.com', WRONG)).status, 401);
      const waiting = await signIn(gateway, 'alone@example.com', PASSWORD);
      assert.equal(waiting.status, 429);
      assert.equal(checks, FREE_PER_ACCOUNT);
      clock += Number(waiting.retryAfter) * 1000;
      assert.equal((await signIn(gateway, 'alone@example.com', PASSWORD)).status, 200);
    } finally {
      await gateway.close();
    }
  });
});
