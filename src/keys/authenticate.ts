import { GatewayError } from '../errors/index.js';
import type { KeyCache } from './key-cache.js';
import { isReplacedSecret, type KeyRow } from './key-store.js';
import { fingerprintOf, hashSecret, looksLikeSecret } from './secret.js';
import type { Principal, Scope } from './types.js';

export interface CredentialHeaders {
  authorization?: string | undefined;
  'x-api-key'?: string | string[] | undefined;
}

/**
 * The secret from `Authorization: Bearer …` or `X-API-Key: …`, if any. Another Authorization
 * scheme (a reverse proxy's Basic credentials, say) leaves the key to X-API-Key; without one,
 * it counts as a key that is not valid ('').
 */
export function extractSecret(headers: CredentialHeaders): string | undefined {
  const authorization = headers.authorization;
  const apiKey = headers['x-api-key'];
  if (authorization !== undefined && authorization.length > 0) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match !== null || apiKey === undefined) return match?.[1] ?? '';
  }
  const value = Array.isArray(apiKey) ? apiKey[0] : apiKey;
  return value === undefined ? undefined : value.trim();
}

const principalCache = new WeakMap<KeyRow, Principal & { kind: 'key' }>();

function toPrincipal(row: KeyRow): Principal & { kind: 'key' } {
  // Rows are replaced, never mutated, so a principal derived from one stays valid with it.
  let principal = principalCache.get(row);
  if (principal === undefined) {
    principal = {
      kind: 'key',
      keyId: row.id,
      projectId: row.project_id,
      fingerprint: fingerprintOf(row.id, row.last4),
      scopes: new Set(JSON.parse(row.scopes) as Scope[]),
      limits: { rpm: row.rpm_limit, dailyTokens: row.daily_token_cap, monthlyCostUsd: row.monthly_cost_cap_usd },
      allowedModels: row.allowed_models === null ? null : new Set(JSON.parse(row.allowed_models) as string[]),
      allowedTools: row.allowed_tools === null ? null : (JSON.parse(row.allowed_tools) as string[]),
      allowUnpriced: Number(row.allow_unpriced) === 1,
    };
    principalCache.set(row, principal);
  }
  return principal;
}

export interface AuthenticatorOptions {
  /** false = migration window: calls without any key are let in as anonymous. */
  requireKeys: boolean;
}

/**
 * Decides who a request is and whether it may use a scope. A known key is decided in memory
 * (no promise); only a secret of the gateway's form that the cache does not hold is looked up.
 */
/** The places every keyed route reads a key from, as a refusal names them. */
const DEFAULT_KEY_PLACES = '"Authorization: Bearer sk-mg-…" or "X-API-Key: sk-mg-…"';

export class Authenticator {
  constructor(
    private readonly cache: KeyCache,
    private readonly options: AuthenticatorOptions,
  ) {}

  /**
   * `sendAs`: where the route's clients may send the key, as the refusal of a missing or unknown
   * key names it (a format with key places of its own says so); the headers every route reads
   * when absent.
   */
  authenticate(headers: CredentialHeaders, scope: Scope, sendAs?: string): Principal | Promise<Principal> {
    const secret = extractSecret(headers);
    if (secret === undefined) {
      if (!this.options.requireKeys) return { kind: 'anonymous', fingerprint: 'anonymous' };
      throw new GatewayError('missing_api_key', `No API key was sent. Send it as ${sendAs ?? DEFAULT_KEY_PLACES}.`);
    }
    if (secret.length === 0) return admit(undefined, scope, sendAs);
    const hash = hashSecret(secret);
    const known = this.cache.findByHash(hash);
    if (known !== undefined || !looksLikeSecret(secret)) return admit(known, scope, sendAs, hash);
    return this.cache.lookUp(hash)?.then((row) => admit(row, scope, sendAs, hash)) ?? admit(undefined, scope, sendAs);
  }

  /**
   * A key chosen by its id rather than its secret (an administrator's dashboard call made as
   * the key): the same state and scope checks as a call with its secret.
   */
  authenticateKeyId(keyId: string, scope: Scope): Principal {
    const row = this.cache.findById(keyId);
    if (row === undefined) throw new GatewayError('not_found', `There is no key ${keyId}. GET /admin/v1/keys lists the keys and their ids.`);
    return admit(row, scope, undefined);
  }
}

/**
 * The checks of every keyed call, in memory. Expiry and a rotation's grace period are read
 * against this instance's clock, so they hold on every instance at the same moment (as far as
 * their clocks agree) without an announcement.
 */
function admit(row: KeyRow | undefined, scope: Scope, sendAs: string | undefined, hash?: string): Principal {
  if (row === undefined) {
    const places = sendAs === undefined ? '' : ` Send it as ${sendAs}.`;
    throw new GatewayError('invalid_api_key', `The API key is not valid. Check it was copied whole, or create a new key.${places}`);
  }
  const now = Date.now();
  if (hash !== undefined && isReplacedSecret(row, hash, now)) {
    throw new GatewayError('invalid_api_key', "This secret was replaced when the key was rotated, and its grace period is over. Use the key's new secret.");
  }
  if (row.status === 'revoked') {
    throw new GatewayError('key_revoked', 'This API key was revoked and can no longer be used; create a new key.');
  }
  if (row.expires_at !== null && now >= Number(row.expires_at)) {
    throw new GatewayError('key_expired', `This API key expired at ${new Date(Number(row.expires_at)).toISOString()}. An administrator can set a later expiry or create a new key.`);
  }
  if (row.status === 'paused') {
    throw new GatewayError('key_paused', 'This API key is paused. An administrator can resume it.');
  }
  const principal = toPrincipal(row);
  if (!principal.scopes.has(scope)) {
    throw new GatewayError('insufficient_scope', `This API key lacks the scope "${scope}" that this endpoint needs.`);
  }
  return principal;
}

/** allowedModels check: the key may use the model if it lists the requested value or its resolved id. */
export function assertModelAllowed(principal: Principal, requested: string, resolvedId: string): void {
  if (principal.kind !== 'key' || principal.allowedModels === null) return;
  if (principal.allowedModels.has(requested) || principal.allowedModels.has(resolvedId)) return;
  throw new GatewayError('model_not_allowed', `This API key may not use the model "${requested}". Ask an administrator to allow it.`, {
    param: 'model',
  });
}
