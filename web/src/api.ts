import type {
  AdminErrorBody,
  AgentDetailView,
  AgentDraftView,
  AgentGraphSchema,
  AgentRunResponse,
  AgentView,
  GraphIssue,
  GuardrailDryRunView,
  GuardrailView,
  ApiKeyView,
  KeySpendView,
  ListPage,
  LogDetailView,
  LogSummaryView,
  McpServerView,
  ModelList,
  ModelSettingView,
  HealthView,
  OverviewView,
  AliasView,
  RoutingView,
  NewMcpServerInput,
  NewProviderInstanceInput,
  ProviderInstanceView,
  ProviderKindView,
  ProviderTestView,
  ProjectView,
  PublicModelEntry,
  Scope,
  AuditEntryView,
  BudgetAlertView,
  BudgetLevel,
  BudgetListView,
  BudgetPeriod,
  NearestBudgetView,
  Role,
  SessionView,
  TeamView,
  UserView,
  UsageGrouping,
  UsageList,
  UsageView,
} from '@modelgate/admin-api';

/**
 * The dashboard's only way to the gateway: the admin API under /admin/v1, with the session
 * cookie (sent by the browser, never read here) and, on every change, the session's CSRF token.
 */

export type { HealthView, NearestBudgetView };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null,
    readonly retryAfterSeconds: number | null,
    /** The gateway's id of the failed request (its x-request-id): the request log's id of a model call. */
    readonly requestId: string | null = null,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
let onSessionEnded: () => void = () => undefined;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the gateway says the session has ended (the app then shows the sign-in page). */
export function whenSessionEnds(callback: () => void): void {
  onSessionEnded = callback;
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * An admin API call whose successful response the caller reads itself (an event stream,
 * audio bytes); a failure is thrown as an ApiError. `signal` cancels it.
 */
export async function send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (!SAFE_METHODS.has(method) && csrfToken !== null) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(`/admin/v1${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    ...(signal !== undefined ? { signal } : {}),
  });
  if (!response.ok) {
    const text = await response.text();
    const error = (text.startsWith('{') ? (JSON.parse(text) as AdminErrorBody) : null)?.error;
    const retryAfter = response.headers.get('retry-after');
    const failure = new ApiError(
      response.status,
      error?.code ?? 'unknown',
      error?.message ?? `The gateway answered HTTP ${response.status}.`,
      error?.param ?? null,
      retryAfter === null ? null : Number(retryAfter),
      response.headers.get('x-request-id'),
    );
    if (failure.code === 'session_expired' && path !== '/session') onSessionEnded();
    throw failure;
  }
  return response;
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await send(method, path, body);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text.length > 0 ? JSON.parse(text) : null) as T;
}

/** Query string of the parameters that are set. */
export function queryOf(parameters: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text.length > 0 ? `?${text}` : '';
}

/** DELETE /admin/v1/cache's answer: how many cached answers were removed, and from which store. */
export interface CacheCleared {
  object: 'cache.cleared';
  project: string | null;
  cleared: number;
  store: 'memory' | 'redis';
}

/** A budget's amounts and period as `POST`/`PATCH /admin/v1/budgets` take them (null clears an amount). */
export interface BudgetInput {
  usd: number | null;
  tokens: number | null;
  period: BudgetPeriod;
  reset_tz: string;
  thresholds: number[];
}

export interface KeyLimitsInput {
  rpm?: number | null;
  daily_tokens?: number | null;
  monthly_cost_usd?: number | null;
}

export interface NewKeyInput {
  name: string;
  project?: string;
  scopes: Scope[];
  limits?: KeyLimitsInput;
  allowed_models?: string[] | null;
  allowed_tools?: string[] | null;
  expires_at?: string | null;
  tags?: string[];
  metadata?: Record<string, string>;
}

export interface KeyChangesInput {
  name?: string;
  limits?: KeyLimitsInput;
  allowed_models?: string[] | null;
  expires_at?: string | null;
  tags?: string[];
  metadata?: Record<string, string>;
}

export interface KeyFilter {
  q?: string | undefined;
  project?: string | undefined;
  status?: string | undefined;
}

/** The request log's filters, as the admin API takes them (and the page's URL keeps them). */
export interface LogFilter {
  since?: string | undefined;
  until?: string | undefined;
  key?: string | undefined;
  /** Every key with this name (names are not unique). */
  key_name?: string | undefined;
  model?: string | undefined;
  status?: string | undefined;
  endpoint?: string | undefined;
  platform?: string | undefined;
}

/** A test turn of an agent draft, metered against the key `key_id`. */
export interface AgentTestInput {
  key_id: string;
  input: string;
  conversation_id?: string;
  draft_version?: number;
}

/** `GET /admin/v1/agents/{slug}/conversations?key_id=…`: one of the key's conversations. */
export interface AgentConversation {
  id: string;
  message_count: number;
  created_at: string;
  updated_at: string;
}

export interface AgentConversationMessage {
  role: 'user' | 'assistant';
  text: string;
  asset_ids: string[];
}

/** `GET /admin/v1/agents/{slug}/grants`: a key of another project that may run the agent. */
export interface AgentGrant {
  key_id: string;
  created_at: string;
}

/** The audit log's filters, as the admin API takes them (and the page's URL keeps them). */
export interface AuditFilter {
  actor?: string | undefined;
  action?: string | undefined;
  target?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
}

const userPath = (id: string) => `/users/${encodeURIComponent(id)}`;
const agentPath = (slug: string) => `/agents/${encodeURIComponent(slug)}`;

export const adminApi = {
  session: {
    get: () => request<SessionView>('GET', '/session'),
    signIn: (email: string, password: string) => request<SessionView>('POST', '/session', { email, password }),
    signOut: () => request<void>('DELETE', '/session'),
    sso: () => request<{ enabled: boolean; provider_name: string | null }>('GET', '/sso'),
    /** Where the browser goes to sign in through the OpenID provider (a navigation, not a fetch). */
    ssoLoginUrl: (returnTo: string) => `/admin/v1/sso/login${queryOf({ return_to: returnTo })}`,
  },
  keys: {
    page: (filter: KeyFilter, cursor: string | undefined, limit: number) =>
      request<ListPage<ApiKeyView>>('GET', `/keys${queryOf({ ...filter, cursor, limit })}`),
    create: (input: NewKeyInput) => request<ApiKeyView & { secret: string }>('POST', '/keys', input),
    update: (id: string, changes: KeyChangesInput) => request<ApiKeyView>('PATCH', `/keys/${encodeURIComponent(id)}`, changes),
    act: (id: string, action: 'pause' | 'resume' | 'revoke') => request<ApiKeyView>('POST', `/keys/${encodeURIComponent(id)}/${action}`),
    rotate: (id: string, graceSeconds: number) =>
      request<ApiKeyView & { secret: string }>('POST', `/keys/${encodeURIComponent(id)}/rotate`, { grace_period_seconds: graceSeconds }),
    actOnProject: (project: string, action: 'pause' | 'resume' | 'revoke') =>
      request<{ data: ApiKeyView[] }>('POST', `/projects/${encodeURIComponent(project)}/keys/${action}`),
    spend: (ids: string[]) => request<{ data: KeySpendView[] }>('GET', `/keys/spend${queryOf({ ids: ids.join(',') })}`),
  },
  projects: () => request<{ data: ProjectView[] }>('GET', '/projects'),
  moveProject: (project: string, teamId: string) => request<ProjectView>('PATCH', `/projects/${encodeURIComponent(project)}`, { team_id: teamId }),
  teams: {
    list: () => request<{ data: TeamView[] }>('GET', '/teams'),
    create: (input: { id: string; name?: string }) => request<TeamView>('POST', '/teams', input),
    rename: (id: string, name: string) => request<TeamView>('PATCH', `/teams/${encodeURIComponent(id)}`, { name }),
    remove: (id: string) => request<void>('DELETE', `/teams/${encodeURIComponent(id)}`),
  },
  budgets: {
    list: () => request<{ data: BudgetListView[] }>('GET', '/budgets'),
    alerts: () => request<{ data: BudgetAlertView[] }>('GET', '/budgets/alerts'),
    create: (input: BudgetInput & { level: BudgetLevel; target: string }) => request<BudgetListView>('POST', '/budgets', input),
    update: (id: string, changes: BudgetInput) => request<BudgetListView>('PATCH', `/budgets/${encodeURIComponent(id)}`, changes),
    remove: (id: string) => request<void>('DELETE', `/budgets/${encodeURIComponent(id)}`),
  },
  cache: {
    clear: (project: string) => request<CacheCleared>('DELETE', `/cache${queryOf({ project })}`),
  },
  users: {
    list: () => request<{ data: UserView[] }>('GET', '/users'),
    create: (input: { email: string; password: string; role: Role; team_ids?: string[] }) => request<UserView>('POST', '/users', input),
    setRole: (id: string, role: Role, teamIds: string[]) => request<UserView>('PATCH', userPath(id), { role, ...(role === 'team_admin' ? { team_ids: teamIds } : {}) }),
    setDisabled: (id: string, disabled: boolean) => request<UserView>('POST', `${userPath(id)}/${disabled ? 'disable' : 'enable'}`),
    resetPassword: (id: string, password: string) => request<UserView>('POST', `${userPath(id)}/password`, { password }),
  },
  audit: {
    page: (filter: AuditFilter, cursor: string | undefined, limit: number) =>
      request<ListPage<AuditEntryView>>('GET', `/audit${queryOf({ ...filter, cursor, limit })}`),
    exportUrl: (filter: AuditFilter) => `/admin/v1/audit/export${queryOf({ ...filter, format: 'csv' })}`,
  },
  guardrails: {
    list: () => request<{ data: GuardrailView[] }>('GET', '/guardrails'),
    test: (name: string, input: { text: string; stage: 'input' | 'output' }) => request<GuardrailDryRunView>('POST', `/guardrails/${encodeURIComponent(name)}/test`, input),
    create: (entry: Record<string, unknown>) => request<GuardrailView>('POST', '/guardrails', entry),
    update: (name: string, entry: Record<string, unknown>) => request<GuardrailView>('PATCH', `/guardrails/${encodeURIComponent(name)}`, entry),
    remove: (name: string) => request<void>('DELETE', `/guardrails/${encodeURIComponent(name)}`),
  },
  mcpServers: {
    list: () => request<{ data: McpServerView[] }>('GET', '/mcp/servers'),
    add: (input: NewMcpServerInput) => request<McpServerView>('POST', '/mcp/servers', input),
    remove: (name: string) => request<void>('DELETE', `/mcp/servers/${encodeURIComponent(name)}`),
  },
  providers: {
    list: () => request<{ data: ProviderInstanceView[] }>('GET', '/providers'),
    kinds: () => request<{ data: ProviderKindView[] }>('GET', '/providers/kinds'),
    add: (input: NewProviderInstanceInput) => request<ProviderInstanceView>('POST', '/providers', input),
    update: (name: string, settings: Record<string, unknown>) => request<ProviderInstanceView>('PATCH', `/providers/${encodeURIComponent(name)}`, { settings }),
    remove: (name: string) => request<void>('DELETE', `/providers/${encodeURIComponent(name)}`),
    test: (name: string) => request<ProviderTestView>('POST', `/providers/${encodeURIComponent(name)}/test`, {}),
  },
  models: () => request<ModelList<PublicModelEntry>>('GET', '/models'),
  catalog: {
    list: () => request<{ data: ModelSettingView[] }>('GET', '/models/settings'),
    set: (id: string, setting: Record<string, unknown>) => request<ModelSettingView>('PUT', `/models/settings/${encodeURIComponent(id)}`, setting),
    reset: (id: string) => request<void>('DELETE', `/models/settings/${encodeURIComponent(id)}`),
    aliases: () => request<{ data: AliasView[] }>('GET', '/models/aliases'),
    setAlias: (alias: string, input: { target: string; kind: 'service' | 'legacy'; note?: string | null }) => request<AliasView>('PUT', `/models/aliases/${encodeURIComponent(alias)}`, input),
    removeAlias: (alias: string) => request<void>('DELETE', `/models/aliases/${encodeURIComponent(alias)}`),
  },
  health: () => request<HealthView & { object: 'health' }>('GET', '/health'),
  overview: (hours: number) => request<OverviewView & { object: 'overview'; hours: number; health: HealthView; budgets_nearest_limit: NearestBudgetView[] }>('GET', `/overview${queryOf({ hours })}`),
  routing: {
    list: () => request<{ data: RoutingView[] }>('GET', '/routing'),
    set: (model: string, entry: Record<string, unknown>) => request<RoutingView>('PUT', `/routing/${encodeURIComponent(model)}`, entry),
    remove: (model: string) => request<void>('DELETE', `/routing/${encodeURIComponent(model)}`),
  },
  endpoints: () => request<{ data: string[] }>('GET', '/endpoints'),
  logs: {
    page: (filter: LogFilter, cursor: string | undefined, limit: number) =>
      request<ListPage<LogSummaryView>>('GET', `/logs${queryOf({ ...filter, cursor, limit })}`),
    get: (requestId: string) => request<LogDetailView>('GET', `/logs/${encodeURIComponent(requestId)}`),
    exportUrl: (filter: LogFilter, format: 'jsonl' | 'csv') => `/admin/v1/logs/export${queryOf({ ...filter, format })}`,
  },
  agents: {
    list: () => request<{ data: AgentView[] }>('GET', '/agents'),
    get: (slug: string) => request<AgentDetailView>('GET', agentPath(slug)),
    draft: (slug: string, version: number) => request<AgentDraftView>('GET', `${agentPath(slug)}/drafts/${version}`),
    schema: () => request<AgentGraphSchema>('GET', '/agent-schema'),
    validate: (graph: unknown) => request<{ valid: boolean; issues: GraphIssue[] }>('POST', '/agents/validate', { graph }),
    save: (slug: string, graph: unknown, project?: string) =>
      request<AgentView & { draft_version: number }>('PUT', agentPath(slug), { graph, ...(project !== undefined ? { project } : {}) }),
    test: (slug: string, input: AgentTestInput) => request<AgentRunResponse>('POST', `${agentPath(slug)}/test`, input),
    conversations: (slug: string, keyId: string) => request<{ data: AgentConversation[] }>('GET', `${agentPath(slug)}/conversations${queryOf({ key_id: keyId })}`),
    conversation: (slug: string, id: string, keyId: string) =>
      request<{ id: string; messages: AgentConversationMessage[] }>('GET', `${agentPath(slug)}/conversations/${encodeURIComponent(id)}${queryOf({ key_id: keyId })}`),
    grants: {
      list: (slug: string) => request<{ data: AgentGrant[] }>('GET', `${agentPath(slug)}/grants`),
      add: (slug: string, keyId: string) => request<AgentGrant>('POST', `${agentPath(slug)}/grants`, { key_id: keyId }),
      remove: (slug: string, keyId: string) => request<void>('DELETE', `${agentPath(slug)}/grants/${encodeURIComponent(keyId)}`),
    },
    publish: (slug: string, draftVersion: number) =>
      request<AgentView & { version: number; draft_version: number }>('POST', `${agentPath(slug)}/publish`, { draft_version: draftVersion }),
  },
  usage: (by: UsageGrouping, filter: { since?: string | undefined; until?: string | undefined }) =>
    request<UsageList<UsageView>>('GET', `/usage${queryOf({ by, ...filter })}`),
};
