/** `metrics:read` alone makes a scrape credential: it reads GET /metrics and nothing else. */
export const SCOPES = ['model:request', 'utils:crypto', 'agents:execute', 'mcp:use', 'metrics:read'] as const;
export type Scope = (typeof SCOPES)[number];

export type KeyStatus = 'active' | 'paused' | 'revoked';

export interface KeyLimits {
  /** Requests per minute, or null for none. */
  rpm: number | null;
  /** Tokens per UTC day, or null. */
  dailyTokens: number | null;
  /** USD per UTC calendar month, or null. */
  monthlyCostUsd: number | null;
}

/** A key as the admin API shows it: never the secret, never its hash. */
export interface ApiKeyView {
  id: string;
  name: string;
  project_id: string;
  status: KeyStatus;
  scopes: Scope[];
  fingerprint: string;
  limits: { rpm: number | null; daily_tokens: number | null; monthly_cost_usd: number | null };
  allowed_models: string[] | null;
  /** `server__tool` or `server__*` entries of the MCP gateway; null = every tool. */
  allowed_tools: string[] | null;
  /** With a monthly cost cap, models without a price are served too (uncounted). */
  allow_unpriced: boolean;
  /** When the key stops working (`401 key_expired`); null = never. */
  expires_at: string | null;
  /** After a rotation with a grace period: until when the replaced secret still works; null = it does not. */
  previous_secret_expires_at: string | null;
  tags: string[];
  /** The operator's own fields: string values. */
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
}

/** Who is calling: a key, or an anonymous caller during the migration window. */
export type Principal =
  | {
      kind: 'key';
      keyId: string;
      projectId: string;
      /** key id plus last 4 chars of the secret; what logs carry. */
      fingerprint: string;
      scopes: ReadonlySet<Scope>;
      limits: KeyLimits;
      /** Exact model ids or aliases this key may use; null = any. */
      allowedModels: ReadonlySet<string> | null;
      /** `allowedTools` entries of the MCP gateway (`server__tool`, `server__*`); null or absent = every tool. */
      allowedTools?: readonly string[] | null;
      /** With a monthly cost cap, models the gateway cannot price are still served (absent: refused). */
      allowUnpriced?: boolean;
    }
  | { kind: 'anonymous'; fingerprint: 'anonymous' };

/**
 * The project a caller's `enc::` values are bound to: its key's. Keyless callers of the
 * migration window belong to no project (`''`): their values open for no key, and no key's
 * values open for them.
 */
export function projectOf(principal: Principal): string {
  return principal.kind === 'key' ? principal.projectId : '';
}
