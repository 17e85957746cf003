/**
 * The admin API's shapes, in one place: the server's routes produce them and the dashboard
 * (web/) reads them, so a change to one shows up as a type error in the other. Types only.
 */
import type { AttemptView, LightweightVettingReply } from '../vetting/response-schema.js';

export type { AttemptView, FullVettingReply, LightweightVettingReply } from '../vetting/response-schema.js';
export type { ApiKeyView, KeyStatus, Scope } from '../keys/types.js';
export type { ProjectView } from '../keys/project-store.js';
export type { TeamView } from '../keys/team-store.js';
export type { LogDetailView, LogSummaryView, UsageView } from '../logs/log-view.js';
export type { KeySpendView } from '../logs/key-spend.js';
export type { UsageGrouping } from '../logs/types.js';
export type { Role, SessionView, UserView } from '../accounts/types.js';
export type { AuditEntryView } from '../audit/types.js';
export type { PublicModelEntry } from '../catalog/types.js';
export type { AliasView, LiveSource, ModelSettingView, RoutingView } from '../live-settings/types.js';
export type { NewProviderInstanceInput, ProviderInstancePatch, ProviderInstanceView, ProviderKindView, ProviderSource, ProviderTestView } from '../provider-instances/types.js';
export type { AgentGraphSchema, ConfigFieldSchema, NodeTypeSchema } from '../agents/graph/node-schema.js';
export type { AgentRunResponse, TestTraceStep } from '../agents/run-response.js';
export type { GraphIssue } from '../agents/graph/types.js';

/** `GET /admin/v1/guardrails`: one guardrail, the config file's or one defined through the admin API (docs/admin-api.md#guardrails). */
export type { GuardrailEntryView as GuardrailView } from '../guardrails/stored.js';

/** `POST /admin/v1/guardrails/:name/test`: one guardrail's verdict on a sample text. */
export interface GuardrailDryRunView {
  guardrail: string;
  stage: 'input' | 'output';
  action: 'block' | 'mask' | 'log';
  outcome: 'passed' | 'masked' | 'blocked' | 'logged' | 'error';
  matched: boolean;
  latency_ms: number;
  masked_text: string | null;
}

/** `GET /admin/v1/mcp/servers`: one upstream MCP server, never a credential (docs/admin-api.md#mcp-servers). */
export interface McpServerView {
  name: string;
  transport: 'http' | 'stdio';
  source: 'config' | 'admin';
  url: string | null;
  command: string[] | null;
  auth: 'none' | 'token' | 'oauth';
  header_names: string[];
  timeout_ms: number;
  state: 'ready' | 'connecting' | 'unavailable';
  since: string;
  reason: string | null;
}

/** `POST /admin/v1/mcp/servers`: an mcp.servers[] entry (credentials as names of variables). */
export interface NewMcpServerInput {
  name: string;
  url?: string;
  command?: string[];
  tokenEnv?: string;
  timeoutMs?: number;
}

/** `GET /admin/v1/agents`: one agent. */
export interface AgentView {
  slug: string;
  project_id: string;
  name: string;
  latest_draft: number;
  published_version: number | null;
  created_at: string;
  updated_at: string;
}

/** `GET /admin/v1/agents/{slug}`: the agent with its newest draft and its published versions. */
export interface AgentDetailView extends AgentView {
  draft: { version: number; graph: unknown };
  versions: { version: number; draft_version: number; published_at: string }[];
}

/** `GET /admin/v1/agents/{slug}/drafts/{version}`. */
export interface AgentDraftView {
  version: number;
  graph: unknown;
  created_at: string;
}

/** `GET /admin/v1/models`: the live catalog. */
export interface ModelList<T> {
  object: 'list';
  default_model: string;
  aliases: Record<string, string>;
  data: T[];
}

/** A page of a list route: `GET /admin/v1/keys?limit=…`, `GET /admin/v1/logs`. */
export interface ListPage<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** `GET /admin/v1/usage`. */
export interface UsageList<T> {
  object: 'list';
  by: string;
  since: string | null;
  until: string | null;
  data: T[];
}

/** The error body every admin route answers a failure with. */
export interface AdminErrorBody {
  error: { message: string; type: string; code: string; param: string | null; request_id: string };
}


/**
 * The model endpoints the playground relays: `POST /admin/v1/playground/keys/{keyId}/v1/{endpoint}`
 * takes the body of `POST /v1/{endpoint}` and answers as it does (server-sent events for a
 * streamed chat), called as the key `keyId`.
 */
export type PlaygroundEndpoint =
  | 'chat/completions'
  | 'chat/vetting'
  | 'vetting/full'
  | 'embeddings'
  | 'images/generations'
  | 'audio/speech'
  | 'audio/transcriptions';

/** `POST /admin/v1/playground/keys/{keyId}/v1/chat/vetting`: the lightweight answer, with every attempt. */
export type PlaygroundVettingReply = LightweightVettingReply & {
  vetting_info: LightweightVettingReply['vetting_info'] & { attempts: AttemptView[] };
};

export type { OverviewBucket, OverviewView, ProviderRecentView, RecentFailure } from '../logs/recent-calls.js';

/** `GET /admin/v1/health`: each provider and routed deployment now (docs/admin-api.md#overview-and-health). */
export interface HealthView {
  window_minutes: number;
  providers: {
    name: string;
    credential: 'set' | 'missing';
    missing_variable: string | null;
    description: string | null;
    state: 'ok' | 'failing';
    fault: string | null;
    since: string | null;
    requests: number;
    errors: number;
    error_rate: number | null;
    latency_p50_ms: number | null;
    latency_p95_ms: number | null;
    last_failures: { request_id: string; at: string; status: number; error_code: string | null; model: string | null }[];
    cooling_deployments: string[];
  }[];
  deployments: { model: string; deployment: string; provider: string; weight: number; cooling: boolean }[];
}

/** `GET /admin/v1/budgets`: a budget with what it spent and reserved in its current period (docs/admin-api.md#budgets). */
export type BudgetListView = import('../budgets/types.js').BudgetView & {
  spent?: { usd: number; tokens: number; period: string; resets_at: string | null };
};
export type { BudgetLevel, BudgetPeriod } from '../budgets/types.js';
/** `GET /admin/v1/budgets/alerts`: an alert and its delivery state. */
export type { AlertView as BudgetAlertView, AlertState as BudgetAlertState } from '../budgets/budget-alerts.js';

/** `GET /admin/v1/overview`'s `budgets_nearest_limit`: `used` is spent ÷ limit of the amount most used. */
export interface NearestBudgetView {
  id: string;
  level: import('../budgets/types.js').BudgetLevel;
  target: string;
  period: string;
  usd: number | null;
  tokens: number | null;
  spent_usd: number;
  spent_tokens: number;
  used: number;
  resets_at: string | null;
}
