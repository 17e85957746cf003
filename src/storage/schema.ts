import type { ColumnType, Generated as _Generated } from 'kysely';

/**
 * Table types shared by SQLite and PostgreSQL. Columns stay portable: text, integer/bigint
 * (epoch milliseconds for time), real; JSON is stored as text and parsed in code.
 */
export interface ProjectsTable {
  id: string;
  name: string;
  created_at: number;
  /** JSON array of `allowedTools` entries (`server__tool`, `server__*`), or null for every tool (docs/mcp.md). */
  allowed_tools: ColumnType<string | null, string | null | undefined, string | null>;
  /** The team the project belongs to (`default` unless set). */
  team_id: ColumnType<string, string | undefined, string>;
}

/** Teams own projects; the `default` team is created by migration 0050. */
export interface TeamsTable {
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
  /** JSON array of `allowedTools` entries, or null for every tool of every MCP server. */
  allowed_tools: ColumnType<string | null, string | null | undefined, string | null>;
  /** 1: with a monthly cost cap, models without a price are served too; 0 (default): refused. */
  allow_unpriced: ColumnType<number, number | undefined, number>;
  created_at: number;
  updated_at: number;
  /** Epoch ms after which the key is refused (`key_expired`), or null for never. */
  expires_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** After a rotation with a grace period: the SHA-256 of the secret it replaced, accepted until `previous_secret_expires_at`. */
  previous_secret_hash: ColumnType<string | null, string | null | undefined, string | null>;
  previous_secret_expires_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** JSON array of tags, or null for none. */
  tags: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON object of string values (the operator's own fields), or null for none. */
  metadata: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One row per request on a keyed endpoint (src/logs). Payloads are redacted before they get here. */
export interface RequestLogsTable {
  request_id: string;
  started_at: number;
  endpoint: string;
  mode: string | null;
  platform: string | null;
  key_id: string | null;
  project_id: string | null;
  /** key id plus last 4 chars, or 'anonymous'; null when no key was recognised. */
  fingerprint: string | null;
  requested_model: string | null;
  resolved_model: string | null;
  provider: string | null;
  status: number;
  error_code: string | null;
  latency_ms: number;
  upstream_latency_ms: number | null;
  /** 0 or 1. */
  streaming: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  total_tokens: number | null;
  image_count: number | null;
  audio_seconds: number | null;
  /** Integer micro-USD; null when the model has no pricing for what was used. */
  cost_micro_usd: number | null;
  /** 'starting_price' when an image price is a "starts at" price. */
  cost_flag: string | null;
  /** JSON: media summary (counts, types, bytes, asset ids), never bytes. */
  media: string | null;
  /** The providers' own ids of the request's calls (x-request-id, request-id, responseId), space-separated in call order. */
  provider_request_id: string | null;
  /** The agent's slug, for an agent run (its version and run id are in `detail`). */
  agent: string | null;
  /** The end user the request named (decisions §15): as given, or `h:` and its HMAC when the project hashes them. */
  end_user: ColumnType<string | null, string | null | undefined, string | null>;
  /** `hit`, `miss` or `bypass` when a response-cache policy applied (docs/caching.md); null otherwise. */
  cache_status: string | null;
  /** A cache hit: what its answer had cost when it was made (integer micro-USD). */
  cache_saved_micro_usd: number | null;
  /** JSON, redacted: records written before payloads were compressed (new records use `payloads`). */
  request_payload: string | null;
  response_payload: string | null;
  /** JSON: upstream detail, error message, extra facts (admin API only). */
  detail: string | null;
  /**
   * Write sequence: assigned in commit order when the record is written (src/logs/log-store.ts),
   * the order of the list and its cursor. Null for records written before it existed.
   */
  seq: number | null;
  /** Both payloads, redacted, compressed (src/logs/payload-codec.ts); null when none is kept. */
  payloads: Buffer | null;
  /** Why a record's payloads are missing: 'queue_bytes' (shed while the queue was full) or 'size_cap' (dropped by the size cap). */
  payloads_omitted: string | null;
}

/**
 * One row (id 1) counting the sequenced request-log records: the last write sequence handed
 * out, and the records and stored payload bytes (triggers keep the counts on every delete and
 * update). Records written before the write sequence are not counted.
 */
export interface RequestLogTotalsTable {
  id: number;
  last_seq: number;
  records: number;
  payload_bytes: number;
  /** The size cap has dropped the payloads of every record before this sequence. */
  payloads_from_seq: number;
}

/** A published agent, addressed by its slug (unique across projects: it is the run URL). */
export interface AgentsTable {
  id: string;
  project_id: string;
  slug: string;
  name: string;
  /** Version number of the newest saved draft. */
  latest_draft: number;
  /** Version served at the slug; null until first published. */
  published_version: number | null;
  created_at: number;
  updated_at: number;
}

/** Every save is a new numbered draft; drafts are never changed. */
export interface AgentDraftsTable {
  agent_id: string;
  version: number;
  /** JSON: the authored graph. */
  graph: string;
  created_at: number;
}

/** Published versions: immutable; publishing again adds a row. */
export interface AgentVersionsTable {
  agent_id: string;
  version: number;
  draft_version: number;
  graph: string;
  published_at: number;
}

/** Lets a key of another project run the agent. */
export interface AgentGrantsTable {
  agent_id: string;
  key_id: string;
  created_at: number;
}

export interface AgentConversationsTable {
  id: string;
  agent_id: string;
  /** Who may continue it: `key:<key id>` or `anonymous` (migration window). */
  owner: string;
  /** 0 or 1: created by an authoring test run (drafts); kept apart from published runs. */
  test: number;
  message_count: number;
  /** The run holding the conversation and until when (runs on one conversation never interleave). */
  lock_run_id: string | null;
  lock_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface AgentMessagesTable {
  conversation_id: string;
  seq: number;
  run_id: string;
  role: 'user' | 'assistant';
  /** JSON: `{ text, asset_ids }` — media by asset id, never bytes. */
  content: string;
  created_at: number;
}

/** Metadata of archived and referenced media; bytes live in the media store under storage_key. */
export interface AgentAssetsTable {
  id: string;
  agent_id: string;
  conversation_id: string | null;
  run_id: string;
  owner: string;
  source: 'inline' | 'url' | 'generated';
  mime_type: string | null;
  bytes: number | null;
  sha256: string | null;
  /** Key in the media store, generated by the gateway (never derived from caller input). */
  storage_key: string | null;
  /** Provenance of a caller's https image URL (not fetched). */
  source_url: string | null;
  filename: string | null;
  created_at: number;
}

export interface AgentRunsTable {
  id: string;
  agent_id: string;
  /** Published version that ran; null for a test run of a draft. */
  agent_version: number | null;
  draft_version: number | null;
  test: number;
  conversation_id: string;
  request_id: string;
  owner: string;
  status: 'running' | 'succeeded' | 'failed';
  error_code: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cost_micro_usd: number | null;
  /** JSON: per-node trace (type, model, usage, duration, asset ids), never payload bytes. */
  trace: string | null;
  started_at: number;
  finished_at: number | null;
}

/** A dashboard account (src/accounts). */
export interface DashboardUsersTable {
  id: string;
  /** Lowercase; unique. */
  email: string;
  role: 'admin' | 'viewer' | 'team_admin';
  /** `scrypt$…` with its parameters; never the password. An account made by single sign-on holds `sso`, which no password matches. */
  password_hash: string;
  /** 0 or 1. */
  disabled: number;
  created_at: number;
  updated_at: number;
  /** `<issuer> <sub>` of an account made or linked by single sign-on; null for a local account. */
  sso_subject: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of the team ids a `team_admin` manages; null for the other roles. */
  team_ids: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A single sign-on under way: what the browser's return is checked against (state, PKCE verifier, nonce). */
export interface DashboardOidcLoginsTable {
  /** SHA-256 of the state, hex; the state itself is in the browser's login cookie and the provider's redirect. */
  state_hash: string;
  code_verifier: string;
  nonce: string;
  /** The dashboard path to open after sign-in. */
  return_to: string;
  created_at: number;
}

/** A signed-in dashboard session; the browser holds the token, the table only its SHA-256. */
export interface DashboardSessionsTable {
  token_hash: string;
  user_id: string;
  /** Client address at sign-in (for an operator reading the table). */
  address: string;
  created_at: number;
  last_seen_at: number;
  /** Absolute end, whatever the use. */
  expires_at: number;
}

/** One failed sign-in, counted under `account:<email>` and `address:<ip>` for the throttle. */
export interface DashboardSignInFailuresTable {
  subject: string;
  failed_at: number;
}

/**
 * A response of the Responses API kept for `GET /v1/responses/{id}` and `previous_response_id`
 * (src/responses), bound to the key that made it; deleted with the request log's retention.
 */
export interface StoredResponsesTable {
  /** `resp_…`: the gateway's own id, or the provider's when its own Responses endpoint answered. */
  id: string;
  owner: string;
  created_at: number;
  /** The model as the caller asked for it. */
  model: string;
  /** 1 when the provider's own Responses endpoint made it (it holds the response too, under the same id). */
  native: number;
  /** JSON: the response object as the caller was sent it. */
  response: string;
  /** JSON array: the conversation's input items up to this response (earlier turns first), as sent. */
  input_items: string;
}

export interface Database {
  teams: TeamsTable;
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  request_logs: RequestLogsTable;
  request_log_totals: RequestLogTotalsTable;
  agents: AgentsTable;
  agent_drafts: AgentDraftsTable;
  agent_versions: AgentVersionsTable;
  agent_grants: AgentGrantsTable;
  agent_conversations: AgentConversationsTable;
  agent_messages: AgentMessagesTable;
  agent_assets: AgentAssetsTable;
  agent_runs: AgentRunsTable;
  dashboard_users: DashboardUsersTable;
  dashboard_sessions: DashboardSessionsTable;
  dashboard_sign_in_failures: DashboardSignInFailuresTable;
  dashboard_oidc_logins: DashboardOidcLoginsTable;
  stored_responses: StoredResponsesTable;
  mcp_servers: McpServersTable;
  audit_log: AuditLogTable;
  provider_instances: ProviderInstancesTable;
  live_settings: LiveSettingsTable;
  guardrails: GuardrailsTable;
  budgets: BudgetsTable;
  budget_alerts: BudgetAlertsTable;
}

/** A guardrail an administrator defined: its config-file entry (guardrails[]) as JSON. */
export interface GuardrailsTable {
  name: string;
  /** JSON: the entry as the config file takes it, defaults filled in; a webhook's key by its variable's name only. */
  definition: string;
  created_at: number;
  updated_at: number;
}

/** A catalog model, alias or routing entry an administrator set: `scope` says which, `name` is its id. */
export interface LiveSettingsTable {
  scope: 'model' | 'alias' | 'routing';
  name: string;
  /** JSON: a catalog.models entry, an alias's target, or a routing entry. */
  value: string;
  /** Why it was set, in the administrator's words. */
  note: string | null;
  /** Who set it last (an audit actor in words). */
  updated_by: string | null;
  created_at: number;
  updated_at: number;
}

/** A budget (src/budgets, decisions §15): one per level and target. */
export interface BudgetsTable {
  /** `bud_` and 16 hex digits. */
  id: string;
  /** 'team', 'project', 'key' or 'end_user'. */
  level: string;
  /** The team, project or key id, or the end user's id as requests name it. */
  target: string;
  usd: number | null;
  tokens: number | null;
  /** 'day', 'week', 'month' or 'total'. */
  period: string;
  /** IANA time zone its periods begin in. */
  reset_tz: string;
  /** JSON array of alert thresholds (percent). */
  thresholds: string;
  created_at: number;
  updated_at: number;
}

/** One alert of a budget reaching a threshold in a period: unique per budget, period and threshold, so it is made once across instances. */
export interface BudgetAlertsTable {
  id: string;
  budget_id: string;
  period_id: string;
  threshold: number;
  level: string;
  target: string;
  spent_micro_usd: number;
  spent_tokens: number;
  /** 'pending', 'delivered', 'failed' or 'no_webhook'. */
  state: string;
  attempts: number;
  /** A failed delivery's next try (epoch ms); null when none is left. */
  next_attempt_at: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

/** A provider instance an administrator added: its kind (a descriptor's name), settings and sealed secrets. */
export interface ProviderInstancesTable {
  name: string;
  kind: string;
  /** JSON: the settings of its kind, without the secret fields. */
  settings: string;
  /** An `enc::` value (the gateway's encryption key) of the JSON of its secret fields. */
  secrets: string;
  /** JSON: each secret field's fingerprint (its last four characters and a short hash), shown instead of the secret. */
  fingerprints: string;
  created_at: number;
  updated_at: number;
}

/** One administrative change (src/audit): who made it, when, to what, and the target before and after (never a secret). */
export interface AuditLogTable {
  /** `aud_`, the time in milliseconds (12 hex digits), then random: ids sort in time order. */
  id: string;
  at: number;
  /** 'token' (the admin token), 'user' (a dashboard session), or 'system' (a reload of the configuration). */
  actor_kind: 'token' | 'user' | 'system';
  /** What the list shows and filters on: the account's email, 'admin-token' or 'system'. */
  actor: string;
  /** The dashboard account's id, for a session. */
  actor_id: string | null;
  /** `key.create`, `user.disable`, `config.reload`, … (docs/admin-api.md#audit-log). */
  action: string;
  target_type: string;
  target_id: string | null;
  /** JSON, redacted: the target before and after the change; null when there was none. */
  before: string | null;
  after: string | null;
  /** The x-request-id of the admin request that made the change. */
  request_id: string | null;
  /** The client address of that request. */
  address: string | null;
}

/** An MCP server added through the admin API; `definition` is its mcp.servers[] entry as JSON. */
export interface McpServersTable {
  name: string;
  definition: string;
  created_at: number;
  updated_at: number;
}

/** Helper for columns whose select type differs from insert type. */
export type Timestamp = ColumnType<number, number, number>;
