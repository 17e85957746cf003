import { randomBytes } from 'node:crypto';
import { createServer, Socket, type Server } from 'node:net';
import { once } from 'node:events';
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { Redis } from 'ioredis';
import { GatewayError } from '../src/errors/index.js';
import type { Principal } from '../src/keys/index.js';
import { FailoverLimiter, InMemoryLimiter, type Limiter, type LimitSeed } from '../src/limits/index.js';
import { RedisLimiter } from '../src/limits/redis-limiter.js';
import { awayFromMinuteBoundary } from './helpers/minute-window.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const silent = pino({ level: 'silent' });

function keyPrincipal(limits: { rpm?: number; dailyTokens?: number; monthlyCostUsd?: number }, keyId = `key_${randomBytes(4).toString('hex')}`): Principal {
  return {
    kind: 'key',
    keyId,
    projectId: 'default',
    fingerprint: `${keyId}…abcd`,
    scopes: new Set(['model:request']),
    limits: { rpm: limits.rpm ?? null, dailyTokens: limits.dailyTokens ?? null, monthlyCostUsd: limits.monthlyCostUsd ?? null },
    allowedModels: null,
  };
}

/** Runs `count` admissions at once; returns the admitted ones and the refusals' codes. */
async function admitConcurrently(limiter: Limiter, principal: Principal, count: number, estimate = { tokens: 100, costUsd: 0.3 }) {
  const results = await Promise.allSettled(Array.from({ length: count }, () => limiter.admit(principal, estimate)));
  const admitted = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const refused = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as GatewayError] : []));
  return { admitted, refused };
}

/** The limiter behaviour every implementation shares. */
function limiterContract(name: string, make: () => Promise<{ limiter: Limiter; seed?: (seeds: LimitSeed[]) => Promise<void> }>, skip: string | false = false) {
  describe(`${name}: per-key limits`, { skip }, () => {
    test('N concurrent requests against a nearly spent daily token cap admit only what the unreserved remainder covers', async () => {
      const { limiter } = await make();
      const principal = keyPrincipal({ dailyTokens: 1000 });
      const spent = await limiter.admit(principal, { tokens: 650, costUsd: null });
      const { admitted, refused } = await admitConcurrently(limiter, principal, 10);
      // 650 + 3 × 100 = 950: the fourth reserves the 50 left, and nothing is left for the rest.
      assert.equal(admitted.length, 4);
      assert.deepEqual(admitted.map((admission) => admission.reserved.tokens).sort((a, b) => a - b), [50, 100, 100, 100]);
      assert.equal(refused.length, 6);
      for (const error of refused) {
        assert.equal(error.code, 'daily_token_cap_exceeded');
        assert.equal(error.status, 429);
        assert.ok(error.retryAfterSeconds! > 0 && error.retryAfterSeconds! <= 86_400);
      }
      // Settling to the real (smaller) usage frees room for later requests.
      await spent.settle({ tokens: 100, costUsd: null });
      await spent.settle({ tokens: 0, costUsd: null }); // idempotent: only the first settlement counts
      // 100 settled + 350 reserved leave 550: five reserve 100, a sixth the 50 left.
      assert.equal((await admitConcurrently(limiter, principal, 10)).admitted.length, 6);
      await limiter.close();
    });

    test('a cap admits while some of it is left: the reservation is the estimate clamped to the remainder, settled with what was used', async () => {
      const { limiter } = await make();
      // A 30-token cap and nothing spent: a request estimating 1,030 tokens (no max_tokens) is admitted.
      const principal = keyPrincipal({ dailyTokens: 30 });
      const first = await limiter.admit(principal, { tokens: 1030, costUsd: null });
      assert.equal(first.reserved.tokens, 30);
      await assert.rejects(limiter.admit(principal, { tokens: 1, costUsd: null }), { code: 'daily_token_cap_exceeded' });
      // It used 12: 18 are left, and the next request reserves them.
      await first.settle({ tokens: 12, costUsd: null });
      const second = await limiter.admit(principal, { tokens: 1030, costUsd: null });
      assert.equal(second.reserved.tokens, 18);
      // Using more than it reserved spends the cap past its end: nothing is admitted then.
      await second.settle({ tokens: 40, costUsd: null });
      await assert.rejects(limiter.admit(principal, { tokens: 0, costUsd: null }), { code: 'daily_token_cap_exceeded' });

      // A key with 10,000 daily tokens is used to its last token, not cut off a reply budget early.
      const large = keyPrincipal({ dailyTokens: 10_000 });
      let spentTokens = 0;
      while (spentTokens < 10_000) {
        const admission = await limiter.admit(large, { tokens: 1030, costUsd: null });
        const used = Math.min(500, 10_000 - spentTokens);
        await admission.settle({ tokens: used, costUsd: null });
        spentTokens += used;
      }
      await assert.rejects(limiter.admit(large, { tokens: 1030, costUsd: null }), { code: 'daily_token_cap_exceeded' });

      // The monthly cost cap follows the same rule, in micro-dollars.
      const costly = keyPrincipal({ monthlyCostUsd: 0.05 });
      const priced = await limiter.admit(costly, { tokens: 1, costUsd: 0.2 });
      assert.equal(priced.reserved.costUsd, 0.05);
      await assert.rejects(limiter.admit(costly, { tokens: 1, costUsd: 0.01 }), { code: 'monthly_cost_cap_exceeded' });
      await priced.settle({ tokens: 1, costUsd: 0.01 });
      assert.equal((await limiter.admit(costly, { tokens: 1, costUsd: 0.2 })).reserved.costUsd, 0.04);
      await limiter.close();
    });

    test('requests per minute: exactly the limit is admitted, the rest get 429 with Retry-After and x-ratelimit headers', async () => {
      const { limiter } = await make();
      const principal = keyPrincipal({ rpm: 5 });
      await awayFromMinuteBoundary();
      const { admitted, refused } = await admitConcurrently(limiter, principal, 12);
      assert.equal(admitted.length, 5);
      assert.deepEqual(admitted.map((admission) => admission.headers['x-ratelimit-remaining-requests']).sort(), ['0', '1', '2', '3', '4']);
      assert.equal(admitted[0]!.headers['x-ratelimit-limit-requests'], '5');
      assert.match(admitted[0]!.headers['x-ratelimit-reset-requests']!, /^\d+s$/);
      assert.equal(refused.length, 7);
      for (const error of refused) {
        assert.equal(error.code, 'rate_limit_exceeded');
        assert.ok(error.retryAfterSeconds! >= 1 && error.retryAfterSeconds! <= 60);
        assert.equal(error.headers?.['x-ratelimit-remaining-requests'], '0');
      }
      await limiter.close();
    });

    test('monthly cost cap, counted in exact micro-dollars', async () => {
      const { limiter } = await make();
      const principal = keyPrincipal({ monthlyCostUsd: 1 });
      // 0.1 + 0.2 + … in floating point would drift; ten reservations of $0.1 fill a $1 cap exactly.
      const { admitted, refused } = await admitConcurrently(limiter, principal, 12, { tokens: 1, costUsd: 0.1 });
      assert.equal(admitted.length, 10);
      assert.ok(admitted.every((admission) => admission.reserved.costUsd === 0.1));
      assert.equal(refused.length, 2);
      assert.equal(refused[0]!.code, 'monthly_cost_cap_exceeded');
      await limiter.close();
    });

    test('keys without limits and anonymous callers are not counted', async () => {
      const { limiter } = await make();
      const admission = await limiter.admit({ kind: 'anonymous', fingerprint: 'anonymous' }, { tokens: 10, costUsd: 1 });
      assert.deepEqual(admission.headers, {});
      assert.deepEqual((await admitConcurrently(limiter, keyPrincipal({}), 50)).refused, []);
      await limiter.close();
    });
  });
}

limiterContract('in-process limiter', async () => ({ limiter: new InMemoryLimiter() }));

const redisLimiters: Limiter[] = [];
limiterContract(
  'Redis limiter',
  async () => {
    const limiter = new RedisLimiter({ url: REDIS_URL!, keyPrefix: `mg-test-${randomBytes(6).toString('hex')}:`, commandTimeoutMs: 2000 });
    await limiter.connect();
    redisLimiters.push(limiter);
    return { limiter };
  },
  REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false,
);

limiterContract(
  'failover limiter on Redis',
  async () => {
    const redis = new RedisLimiter({ url: REDIS_URL!, keyPrefix: `mg-test-${randomBytes(6).toString('hex')}:`, commandTimeoutMs: 2000 });
    const limiter = new FailoverLimiter(redis, async () => [], silent);
    await limiter.start();
    assert.equal(limiter.state().fallbackActive, false);
    return { limiter };
  },
  REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false,
);

limiterContract('failover limiter while Redis is unreachable', async () => {
  const limiter = new FailoverLimiter(new RedisLimiter({ url: `redis://127.0.0.1:${await closedPort()}`, keyPrefix: 'mg-outage:', commandTimeoutMs: 200 }), async () => [], silent);
  await limiter.start();
  assert.equal(limiter.state().fallbackActive, true);
  return { limiter };
});

/** A port nothing listens on: bound, noted, closed. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as { port: number }).port;
  probe.close();
  await once(probe, 'close');
  return port;
}

describe('in-process limiter seeds', () => {
  test("seeded with what the request log says was spent, caps hold across a restart", async () => {
    const limiter = new InMemoryLimiter();
    const principal = keyPrincipal({ dailyTokens: 1000, monthlyCostUsd: 5 }, 'key_seeded');
    limiter.seed([{ keyId: 'key_seeded', dayTokens: 950, monthCostMicroUsd: 4_900_000 }]);
    // 50 tokens and $0.10 are left: a larger request reserves them, the next one finds nothing.
    const admission = await limiter.admit(principal, { tokens: 100, costUsd: 0.2 });
    assert.deepEqual(admission.reserved, { tokens: 50, costUsd: 0.1 });
    await assert.rejects(limiter.admit(principal, { tokens: 1, costUsd: 0 }), { code: 'daily_token_cap_exceeded' });
    limiter.seed([{ keyId: 'key_seeded', dayTokens: 0, monthCostMicroUsd: 5_000_000 }]);
    await assert.rejects(limiter.admit(principal, { tokens: 1, costUsd: 0 }), { code: 'monthly_cost_cap_exceeded' });
  });
});

describe('in-process limiter windows', () => {
  test('a reservation settled after midnight corrects the day and month it began in, and leaves the new ones alone', async () => {
    // Starts on the last second of November, settles on the first of December: both windows change.
    let now = Date.UTC(2026, 10, 30, 23, 59, 59);
    const limiter = new InMemoryLimiter(() => now);
    const principal = keyPrincipal({ dailyTokens: 1000, monthlyCostUsd: 1 });
    const lateNight = await limiter.admit(principal, { tokens: 600, costUsd: 0.6 });
    now = Date.UTC(2026, 11, 1, 0, 0, 1);
    await limiter.admit(principal, { tokens: 900, costUsd: 0.9 });
    await lateNight.settle({ tokens: 500, costUsd: 0.5 });
    // The new day holds 900 tokens and the new month $0.90 (the late settlement left them alone): 100 tokens and $0.10 are left.
    assert.deepEqual((await limiter.admit(principal, { tokens: 200, costUsd: 0.2 })).reserved, { tokens: 100, costUsd: 0.1 });
    await assert.rejects(limiter.admit(principal, { tokens: 1, costUsd: 0 }), { code: 'daily_token_cap_exceeded' });
  });
});

interface RedisProxy {
  port: number;
  /** Drops every connection and refuses new ones for a moment, like a network outage. */
  cut(): void;
  /** Keeps Redis's answers from the client (Redis still runs the commands), like a slow network. */
  holdAnswers(): void;
  /** Delivers the answers held back, in order. */
  releaseAnswers(): void;
  close(): Promise<void>;
}

/** A failover limiter on Redis through a cuttable proxy, with counters under a prefix of its own. */
async function startProxiedLimiter(): Promise<{ proxy: RedisProxy; prefix: string; redis: RedisLimiter; limiter: FailoverLimiter }> {
  const proxy = await startCuttableProxy(new URL(REDIS_URL!));
  const prefix = `mg-test-${randomBytes(6).toString('hex')}:`;
  const redis = new RedisLimiter({ url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: prefix, commandTimeoutMs: 1000 });
  const limiter = new FailoverLimiter(redis, async () => [], silent);
  await limiter.start();
  return { proxy, prefix, redis, limiter };
}

/** A TCP proxy in front of Redis that the test can cut and restore, or slow down. */
async function startCuttableProxy(target: URL): Promise<RedisProxy> {
  const sockets = new Set<Socket>();
  const held: { client: Socket; data: Buffer }[] = [];
  let holding = false;
  let accepting = true;
  const server: Server = createServer((client) => {
    if (!accepting) return client.destroy();
    const upstream = new Socket();
    upstream.connect(Number(target.port || 6379), target.hostname);
    client.pipe(upstream);
    upstream.on('data', (data: Buffer) => (holding ? held.push({ client, data }) : client.write(data)));
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      accepting = false;
      for (const socket of sockets) socket.destroy();
      // Let reconnects be refused for a moment, then accept again (Redis "comes back").
      setImmediate(() => (accepting = true));
    },
    holdAnswers() {
      holding = true;
    },
    releaseAnswers() {
      holding = false;
      for (const { client, data } of held.splice(0)) client.write(data);
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

describe('Redis outage', () => {
  test('an unreachable Redis at start-up does not stop the gateway: limits are enforced per instance, seeded from the log', async () => {
    const port = await closedPort();
    const seeds: LimitSeed[] = [{ keyId: 'key_outage', dayTokens: 900, monthCostMicroUsd: 0 }];
    const limiter = new FailoverLimiter(
      new RedisLimiter({ url: `redis://127.0.0.1:${port}`, keyPrefix: 'mg-outage:', commandTimeoutMs: 200 }),
      async () => seeds,
      silent,
    );
    await limiter.start();
    assert.equal(limiter.state().fallbackActive, true);
    const principal = keyPrincipal({ dailyTokens: 1000, rpm: 3 }, 'key_outage');
    const { admitted, refused } = await admitConcurrently(limiter, principal, 5);
    assert.equal(admitted.length, 1, 'the seeded 900 tokens leave 100 tokens: one 100-token request');
    assert.ok(refused.every((error) => error.code === 'daily_token_cap_exceeded'));
    assert.equal(limiter.state().fallbackAdmissions, 1);
    await admitted[0]!.settle({ tokens: 0, costUsd: null });
    await limiter.close();
  });

  test('an instance started during an outage takes the share of limits.outageInstances, not the whole limit', async () => {
    const port = await closedPort();
    const started = (outageInstances?: number) =>
      new FailoverLimiter(new RedisLimiter({ url: `redis://127.0.0.1:${port}`, keyPrefix: 'mg-outage:', commandTimeoutMs: 200 }), async () => [], silent, 'local', outageInstances);
    for (const [outageInstances, expected] of [
      [undefined, 9],
      [3, 3],
    ] as const) {
      const limiter = started(outageInstances);
      await limiter.start();
      // Having seen no other instance, it would count the whole rpm 9 alone; told of 3, it enforces a third.
      const { admitted, refused } = await admitConcurrently(limiter, keyPrincipal({ rpm: 9 }), 12);
      assert.equal(admitted.length, expected, `limits.outageInstances ${outageInstances ?? 'unset'}`);
      assert.ok(refused.every((error) => error.code === 'rate_limit_exceeded'));
      assert.equal(limiter.state().instancesSeen, outageInstances ?? 1);
      await limiter.close();
    }
  });

  test('an admission Redis answered too late is given back there once its answer arrives', { skip: REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false }, async () => {
    const { proxy, prefix, limiter } = await startProxiedLimiter();
    const direct = new Redis(REDIS_URL!);
    try {
      const principal = keyPrincipal({ dailyTokens: 1_000_000, monthlyCostUsd: 100 });
      await limiter.admit(principal, { tokens: 5, costUsd: 0.05 });

      // Redis runs the next admission's script, but its answer comes after the timeout: the
      // fallback admits the request and settles it, so Redis must not keep the reservation.
      proxy.holdAnswers();
      const late = await limiter.admit(principal, { tokens: 100, costUsd: 1 });
      assert.equal(limiter.state().fallbackActive, true);
      await late.settle({ tokens: 80, costUsd: 0.8 });
      const [tokensKey] = await direct.keys(`${prefix}*tokens*`);
      const [costKey] = await direct.keys(`${prefix}*cost*`);
      assert.equal(await direct.get(tokensKey!), '105', 'Redis ran the late admission');
      proxy.releaseAnswers();

      // The give-back follows the late answer; wait for it (generously: this is no timing test).
      const deadline = Date.now() + 10_000;
      while ((await direct.get(tokensKey!)) !== '5' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(await direct.get(tokensKey!), '5', 'the reservation Redis made too late was given back');
      assert.equal(await direct.get(costKey!), '50000');
    } finally {
      await direct.quit();
      await limiter.close();
      await proxy.close();
    }
  });

  test('Redis lost mid-way: admissions fall back at once and return to Redis when it is back', { skip: REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false }, async () => {
    const { proxy, prefix, redis, limiter } = await startProxiedLimiter();
    const principal = keyPrincipal({ dailyTokens: 1_000_000 });
    await limiter.admit(principal, { tokens: 5, costUsd: null });
    assert.equal(limiter.state().fallbackActive, false);

    const reconnected = once(redis.client, 'ready');
    proxy.cut();
    const during = await limiter.admit(principal, { tokens: 5, costUsd: null });
    assert.equal(limiter.state().fallbackActive, true);
    await during.settle({ tokens: 5, costUsd: null });

    await reconnected;
    await limiter.admit(principal, { tokens: 5, costUsd: null });
    assert.equal(limiter.state().fallbackActive, false);
    // Both admissions made through Redis are in the shared counter; the fallback one is not.
    const direct = new Redis(REDIS_URL!);
    const keys = await direct.keys(`${prefix}*tokens*`);
    assert.equal(keys.length, 1);
    assert.equal(await direct.get(keys[0]!), '10');
    await direct.quit();
    await limiter.close();
    await proxy.close();
  });
});

after(async () => {
  for (const limiter of redisLimiters) await limiter.close();
});
