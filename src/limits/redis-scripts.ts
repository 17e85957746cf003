/**
 * Lua scripts of the Redis limiter. Redis runs a script atomically, so checking every cap and
 * reserving against all of them is one step for all gateway instances together.
 */

/**
 * KEYS: requests-per-minute counter, day-tokens counter, month-cost counter (micro-USD), then
 *       for each budget above the request its tokens counter and its cost counter (micro-USD).
 * ARGV: rpm, daily token cap, monthly cost cap (micro-USD) — each -1 for "no limit" —
 *       estimated tokens, estimated cost (micro-USD), and the three counters' TTLs in ms; then
 *       for each budget its token cap, cost cap (micro-USD; -1 for none) and its counters' TTL
 *       in ms (-1: a total budget, kept).
 * A cap or budget admits while some of it is neither spent nor reserved, and the request
 * reserves its estimate clamped to the smallest remainder, one amount added to every counter
 * (docs/limits.md).
 * Returns {0, requests used this minute, tokens reserved, cost reserved} when admitted, else
 * {1|2|3, used} naming the limit that refused (1 rpm, 2 daily tokens, 3 monthly cost), or
 * {4, used, budget index (from 1), 1 tokens | 2 cost}; nothing is reserved.
 */
export const ADMIT_SCRIPT = `
local rpm = tonumber(ARGV[1])
local token_cap = tonumber(ARGV[2])
local cost_cap = tonumber(ARGV[3])
local tokens = tonumber(ARGV[4])
local cost = tonumber(ARGV[5])
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if rpm >= 0 and used >= rpm then return {1, used} end
if token_cap >= 0 then
  local left = token_cap - tonumber(redis.call('GET', KEYS[2]) or '0')
  if left <= 0 then return {2, used} end
  tokens = math.min(tokens, left)
end
if cost_cap >= 0 then
  local left = cost_cap - tonumber(redis.call('GET', KEYS[3]) or '0')
  if left <= 0 then return {3, used} end
  cost = math.min(cost, left)
end
local budgets = (#KEYS - 3) / 2
for i = 1, budgets do
  local budget_tokens = tonumber(ARGV[6 + 3 * i])
  local budget_cost = tonumber(ARGV[7 + 3 * i])
  if budget_tokens >= 0 then
    local left = budget_tokens - tonumber(redis.call('GET', KEYS[2 + 2 * i]) or '0')
    if left <= 0 then return {4, used, i, 1} end
    tokens = math.min(tokens, left)
  end
  if budget_cost >= 0 then
    local left = budget_cost - tonumber(redis.call('GET', KEYS[3 + 2 * i]) or '0')
    if left <= 0 then return {4, used, i, 2} end
    cost = math.min(cost, left)
  end
end
if rpm >= 0 then
  used = redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
end
if token_cap >= 0 then
  redis.call('INCRBY', KEYS[2], tokens)
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
end
if cost_cap >= 0 then
  redis.call('INCRBY', KEYS[3], cost)
  redis.call('PEXPIRE', KEYS[3], ARGV[8])
end
for i = 1, budgets do
  local ttl = tonumber(ARGV[8 + 3 * i])
  redis.call('INCRBY', KEYS[2 + 2 * i], tokens)
  redis.call('INCRBY', KEYS[3 + 2 * i], cost)
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[2 + 2 * i], ttl)
    redis.call('PEXPIRE', KEYS[3 + 2 * i], ttl)
  end
end
return {0, used, tokens, cost}
`;

/**
 * KEYS: budget counters to start; ARGV: for each, its value then its TTL in ms (-1: kept).
 * A counter that exists already (requests of its period were counted) is left alone.
 */
export const SEED_SCRIPT = `
for i, key in ipairs(KEYS) do
  local ttl = tonumber(ARGV[2 * i])
  if ttl > 0 then
    redis.call('SET', key, ARGV[2 * i - 1], 'NX', 'PX', ttl)
  else
    redis.call('SET', key, ARGV[2 * i - 1], 'NX')
  end
end
return 0
`;

/**
 * KEYS: counters to correct; ARGV: the delta for each (same order). A counter whose window
 * already expired is left alone, so a late settlement never recreates it without a TTL.
 */
export const SETTLE_SCRIPT = `
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then redis.call('INCRBY', key, ARGV[i]) end
end
return 0
`;

/**
 * An instance announces itself: KEYS[1] is a sorted set of instance ids by the time each was
 * last announced. ARGV: now (ms), this instance's id, how long an announcement counts (ms).
 * Forgets instances not announced within that time; returns how many are left (this one included).
 */
export const ANNOUNCE_SCRIPT = `
local now = tonumber(ARGV[1])
local recent = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - recent)
redis.call('PEXPIRE', KEYS[1], recent)
return redis.call('ZCARD', KEYS[1])
`;
