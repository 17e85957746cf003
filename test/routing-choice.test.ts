/**
 * The parts of routing decided without a network: which deployment is chosen, when one cools
 * down and is probed again, which failures are retried, and the provider headers read for
 * them (docs/routing.md).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError, type UpstreamFacts } from '../src/errors/index.js';
import { failureClassOf, MemoryCooldowns, Router, type Deployment } from '../src/routing/index.js';
import type { AttemptRecord } from '../src/logs/index.js';
import { DeploymentBook } from '../src/routing/deployment-book.js';
import { rateLimitShareOf } from '../src/providers/shared/provider-rate-limits.js';
import { rateLimitRetryAfterOf } from '../src/providers/shared/upstream-errors.js';

function deployment(name: string, options: Partial<Deployment> = {}): Deployment {
  return {
    key: `gpt-4o/${name}`,
    name,
    providerName: 'openai',
    provider: { name: 'openai', acceptsRemoteImageUrls: true },
    upstreamId: 'gpt-4o',
    weight: 1,
    rpm: undefined,
    tpm: undefined,
    ...options,
  };
}

/** A book whose draws are scripted: each [draw, deployment] pair asserts what that draw chooses. */
function scriptedBook(now: () => number = () => 0, latencyAware = false): { book: DeploymentBook; draws(candidates: Deployment[], cases: [number, Deployment][]): void } {
  let random = 0;
  const book = new DeploymentBook(now, () => random);
  return {
    book,
    draws(candidates, cases) {
      for (const [draw, expected] of cases) {
        random = draw;
        assert.equal(book.choose(candidates, latencyAware), expected, `draw ${draw}`);
      }
    },
  };
}

describe('choosing a deployment', () => {
  const a = deployment('a');
  const b = deployment('b');

  test('by weight while nothing is known', () => {
    const heavy = deployment('heavy', { weight: 3 });
    scriptedBook().draws([heavy, b], [[0.74, heavy], [0.76, b]]);
  });

  test('weights are the traffic shares, whatever the latencies and rate limits left', () => {
    const heavy = deployment('heavy', { weight: 3 });
    const { book, draws } = scriptedBook();
    // Latency-aware, these would give b 1/13 of the draws (the 97.5 % : 2.5 % an operator saw for 3 : 1).
    book.answered(heavy, 400, 0.25);
    book.answered(b, 100, 1);
    draws([heavy, b], [[0.74, heavy], [0.76, b]]);
  });

  test('strategy latency: a slower deployment gets its weight scaled by the fastest latency over its own', () => {
    const { book, draws } = scriptedBook(() => 0, true);
    book.answered(a, 100, null);
    book.answered(b, 400, null);
    // Scores 1 and 0.25: a takes 80 % of the draws.
    draws([a, b], [[0.79, a], [0.81, b]]);
  });

  test("strategy latency: the provider's remaining rate limit scales the weight while it is fresh", () => {
    let now = 0;
    const { book, draws } = scriptedBook(() => now, true);
    book.answered(a, 100, 1);
    book.answered(b, 100, 0.25);
    draws([a, b], [[0.79, a], [0.81, b]]);
    // A minute later the remaining share says nothing: equal weights again.
    now = 61_000;
    draws([a, b], [[0.49, a], [0.51, b]]);
  });

  test("a deployment's own rpm and tpm leave it out once spent this minute", () => {
    let now = 0;
    const book = new DeploymentBook(() => now);
    const limited = deployment('limited', { rpm: 2, tpm: 1_000 });
    book.started(limited, 100);
    assert.equal(book.hasRoom(limited, 100), true);
    book.started(limited, 100);
    assert.equal(book.hasRoom(limited, 100), false, 'rpm spent');
    now = 60_000;
    assert.equal(book.hasRoom(limited, 100), true, 'a new minute');
    book.started(limited, 950);
    assert.equal(book.hasRoom(limited, 100), false, 'tpm would be passed');
  });
});

describe('cooldowns', () => {
  const policy = { failures: 2, windowMs: 1_000, durationMs: 5_000 };

  test('failures within the window cool a deployment down; then one probe; one failure more cools it at once', async () => {
    let now = 0;
    const cooldowns = new MemoryCooldowns(() => now);
    const cooling = async () => [...(await cooldowns.cooling(['d']))];
    assert.equal(await cooldowns.failed('d', policy, 0), false);
    now = 2_000; // the first failure left the window
    assert.equal(await cooldowns.failed('d', policy, 0), false);
    now = 2_100;
    assert.equal(await cooldowns.failed('d', policy, 0), true);
    assert.deepEqual(await cooling(), ['d']);
    now = 7_200;
    assert.deepEqual(await cooling(), [], 'probed again once the cooldown is over');
    assert.equal(await cooldowns.failed('d', policy, 0), true, 'a failed probe cools it down at once');
    assert.deepEqual(await cooling(), ['d']);
    now = 12_300;
    cooldowns.succeeded('d');
    assert.equal(await cooldowns.failed('d', policy, 0), false, 'a success cleared the count');
  });

  test("a provider's Retry-After cools the deployment down at least that long", async () => {
    let now = 0;
    const cooldowns = new MemoryCooldowns(() => now);
    assert.equal(await cooldowns.failed('d', policy, 20_000), true);
    now = 19_000;
    assert.deepEqual([...(await cooldowns.cooling(['d', 'e']))], ['d']);
  });
});

describe('failure classes', () => {
  type Upstream = Omit<UpstreamFacts, 'provider'>;
  const provider = (code: ConstructorParameters<typeof GatewayError>[0], upstream: Upstream | null, logDetail: Record<string, unknown> = {}) =>
    new GatewayError(code, 'x', { logDetail, ...(upstream === null ? {} : { upstream: { provider: 'openai', ...upstream } }) });

  test('each failure a provider call ends with, classified', () => {
    const cases: [unknown, string | null][] = [
      [provider('provider_rate_limited', { status: 429 }), 'rate_limit'],
      [provider('provider_error', { status: 503 }), 'server_error'],
      [provider('provider_error', null, { reason: 'stream ended without [DONE]' }), 'server_error'],
      [provider('provider_timeout', null), 'timeout'],
      [provider('provider_error', { fault: 'unreachable' }, { reason: 'ECONNRESET' }), 'connection'],
      [provider('invalid_body', { status: 400, errorCode: 'context_length_exceeded' }), 'context_window_exceeded'],
      [provider('invalid_body', { status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' }), 'context_window_exceeded'],
      [provider('invalid_body', { status: 400, errorCode: 'content_policy_violation' }), 'content_policy'],
      [provider('invalid_body', { status: 400, message: 'temperature must be at most 2' }), null],
      [provider('provider_error', { status: 401, fault: 'credential_refused' }), null],
      [provider('provider_error', { status: 404 }), null],
      [provider('provider_error', null, { reason: 'aborted' }), null],
      [new Error('a bug'), null],
    ];
    for (const [error, expected] of cases) assert.equal(failureClassOf(error), expected, JSON.stringify(error instanceof GatewayError ? error.detail() : String(error)));
  });
});

describe('provider headers', () => {
  test('Retry-After wins; else the later of the x-ratelimit-reset-* durations', () => {
    assert.equal(rateLimitRetryAfterOf({ 'retry-after': '7', 'x-ratelimit-reset-requests': '6m0s' }), 7);
    assert.equal(rateLimitRetryAfterOf({ 'x-ratelimit-reset-requests': '1m30s', 'x-ratelimit-reset-tokens': '20ms' }), 90);
    assert.equal(rateLimitRetryAfterOf({ 'x-ratelimit-reset-tokens': '1.5s' }), 2);
    assert.equal(rateLimitRetryAfterOf({ 'x-ratelimit-reset-tokens': 'soon' }), undefined);
    assert.equal(rateLimitRetryAfterOf({}), undefined);
  });

  test('the share of the rate limit left is read from OpenAI\'s and Anthropic\'s headers', () => {
    assert.equal(rateLimitShareOf({ 'x-ratelimit-remaining-requests': '50', 'x-ratelimit-limit-requests': '200' }), 0.25);
    assert.equal(rateLimitShareOf({ 'anthropic-ratelimit-requests-remaining': '10', 'anthropic-ratelimit-requests-limit': '40' }), 0.25);
    assert.equal(rateLimitShareOf({ 'x-ratelimit-remaining-requests': '5' }), undefined, 'no limit, no share');
    assert.equal(rateLimitShareOf({ 'x-ratelimit-remaining-requests': '500', 'x-ratelimit-limit-requests': '200' }), 1, 'bounded');
  });
});

describe('a provider that says when to come back', () => {
  const silent = { attemptEnded: () => undefined, retried: () => undefined, fellBack: () => undefined, cooledDown: () => undefined };
  const first = deployment('first');
  const second = deployment('second');
  const target = { resolved: { requested: 'gpt-4o', id: 'gpt-4o', inferred: false } as never, deployments: [first, second], cooldown: { failures: 3, windowMs: 60_000, durationMs: 30_000 } };
  const plan = (maxRetryWaitMs: number) => ({ primary: target, retries: 1, backoffMs: 0, latencyAware: false, maxRetryWaitMs, fallbacks: [], fallbackOn: new Set<never>(), firstByteMs: undefined, totalMs: 60_000 });
  const rateLimited = (seconds: number) =>
    new GatewayError('provider_rate_limited', 'slow down', { retryAfterSeconds: seconds, upstream: { provider: 'openai', status: 429 } });

  /** Runs one routed call whose first try (always on `first`) is refused with `error`; the second try answers. */
  async function route(maxRetryWaitMs: number, error: GatewayError) {
    const cooldowns = new MemoryCooldowns();
    // Draws 0: the first candidate, `first`; after it failed, the untried `second` unless the router waits for `first`.
    const router = new Router(cooldowns, silent, new DeploymentBook(Date.now, () => 0));
    const attempts: AttemptRecord[] = [];
    let tries = 0;
    const served = await router.run(
      plan(maxRetryWaitMs),
      {
        attempt: async () => {
          tries += 1;
          if (tries === 1) throw error;
          return 'answer';
        },
        usable: () => true,
        accepts: () => true,
        signal: undefined,
        tokens: 0,
      },
      attempts,
    );
    return { served, attempts, cooling: await cooldowns.cooling([first.key, second.key]) };
  }

  test('a Retry-After within maxRetryWaitMs is the wait before the retry on the same deployment, which is not cooled down', async () => {
    const { served, attempts, cooling } = await route(5_000, rateLimited(1));
    assert.equal(served.deployment, first);
    assert.deepEqual(attempts.map((attempt) => [attempt.deployment, attempt.outcome]), [['first', 'provider_rate_limited'], ['first', 'ok']]);
    assert.equal(cooling.size, 0);
  });

  test('a longer Retry-After cools the deployment down that long, and the request moves on', async () => {
    const { served, attempts, cooling } = await route(500, rateLimited(1));
    assert.equal(served.deployment, second);
    assert.deepEqual(attempts.map((attempt) => attempt.deployment), ['first', 'second']);
    assert.deepEqual([...cooling], [first.key]);
  });

  test("each failed attempt carries the provider's status", async () => {
    const { attempts } = await route(0, rateLimited(1));
    assert.equal(attempts[0]!.upstreamStatus, 429);
    assert.equal(attempts[1]!.upstreamStatus, undefined, 'an answer has none');
  });
});
