import type { ColumnType, Generated as _Generated } from 'kysely';

/**
 * Table types shared by SQLite and PostgreSQL. Columns stay portable: text, integer/bigint
 * (epoch milliseconds for time), real; JSON is stored as text and parsed in code.
 */
export interface ProjectsTable {
  id: string;
  name: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string;
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  secret_hash: string;
  last4: string;
  /** JSON array of scopes. */
  scopes: string;
  status: 'active' | 'paused' | 'revoked';
  rpm_limit: number | null;
  daily_token_cap: number | null;
  monthly_cost_cap_usd: number | null;
  /** JSON array of model ids/aliases, or null for any model. */
  allowed_models: string | null;
  created_at: number;
  updated_at: number;
}

export interface Database {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
}

/** Helper for columns whose select type differs from insert type. */
export type Timestamp = ColumnType<number, number, number>;
