import type { Budgets } from '../budgets/index.js';
import type { Logger } from 'pino';
import type { Accounts, SingleSignOn } from '../accounts/index.js';
import type { FastifyRequest } from 'fastify';
import type { GatewayConfig, RoutingEntry } from '../config/index.js';
import type { StorageKind } from '../storage/index.js';
import type { Authenticator, KeyCache, KeyPage, KeyPageQuery, KeyPropagation, KeyStore, ProjectStore, TeamStore } from '../keys/index.js';
import type { Catalog } from '../catalog/index.js';
import type { ProviderRegistry } from '../providers/index.js';
import type { ProviderInstances } from '../provider-instances/index.js';
import type { LiveSettings } from '../live-settings/index.js';
import type { Limiter } from '../limits/index.js';
import type { ModelCalls } from '../calls/index.js';
import type { Guardrails, StoredGuardrails } from '../guardrails/index.js';
import type { AgentServices } from '../agents/index.js';
import type { KeySpendView, LogStore, LogWriter, OverviewView, ProviderRecentView, RefusalSummary, SizeCapJob } from '../logs/index.js';
import type { GatewayMetrics } from '../metrics/index.js';
import type { ResponseStore } from '../responses/index.js';
import type { Tracing } from '../telemetry/index.js';
import type { Keyring } from '../crypto/index.js';
import type { VettingService } from '../vetting/index.js';
import type { McpGateway } from '../mcp/index.js';
import type { ResponseCache } from '../cache/index.js';
import type { AuditStore } from '../audit/index.js';

/**
 * Everything a route needs, built once at start-up and passed in (no module-level state).
 * Domains add their services here as they are built.
 */
export interface GatewayContext {
  readonly config: GatewayConfig;
  /** The database as the health checks see it: its kind, and whether it answers a round trip in time. */
  readonly database: { readonly kind: StorageKind; answers(withinMs: number): Promise<boolean> };
  /** The admin API's one authorisation (the admin token or a signed-in dashboard session), for the admin scopes' onRequest. */
  readonly adminAuthentication: (request: FastifyRequest) => Promise<void>;
  readonly logger: Logger;
  readonly catalog: Catalog;
  readonly providers: ProviderRegistry;
  /** Providers and credentials managed live through the admin API, beside those of the environment and the config file. */
  readonly providerInstances: ProviderInstances;
  /** Catalog models, prices, aliases and routing entries managed live (src/live-settings). */
  readonly liveSettings: LiveSettings;
  readonly keys: {
    readonly store: KeyStore;
    readonly cache: KeyCache;
    /** Where a change made through this instance is applied and announced to the others. */
    readonly propagation: KeyPropagation;
    readonly authenticator: Authenticator;
    readonly projects: ProjectStore;
    /** Teams, which hold projects. */
    readonly teams: TeamStore;
    /** A page of keys, for the admin API's key list. */
    readonly page: (query: KeyPageQuery) => Promise<KeyPage>;
  };
  readonly limits: Limiter;
  /** The enc:: keyring (the gateway's encryption key and its previous ones), for the utilities and VETTING. */
  readonly keyring: Keyring;
  /** The one model-call path every model endpoint, VETTING and agents go through. */
  readonly calls: ModelCalls;
  /** The configured guardrails (docs/guardrails.md); undefined when there are none. */
  readonly guardrails: Guardrails | undefined;
  /** The guardrails defined through the admin API (docs/guardrails.md#guardrails-defined-in-the-dashboard). */
  readonly storedGuardrails: StoredGuardrails;
  /** The response cache (docs/caching.md): its lookups happen on the call path; here for clearing it. */
  readonly cache: ResponseCache;
  /** Applies the config file's `routing` list (SIGHUP, a changed file) with the entries set live under it; throws a ConfigError naming the field when it is invalid. */
  readonly applyRouting: (entries: readonly RoutingEntry[]) => void;
  /** VETTING's draft → verify → redraft loop, over the model-call path. */
  readonly vetting: VettingService;
  /** Agents: their store, authoring, the runner, and the media of runs. */
  readonly agents: AgentServices;
  /** The request log: the store (queries) and the background writer (records are pushed, never awaited). */
  readonly logs: {
    readonly store: LogStore;
    readonly writer: LogWriter;
    readonly refusals: RefusalSummary;
    readonly sizeCap: SizeCapJob;
    /** What keys spent today and this month (their caps' windows), from the log. */
    readonly spendOf: (keyIds: readonly string[]) => Promise<KeySpendView[]>;
    /** Each provider's calls since a time (ms): counts, error rate, latency, last failures (the health page, status). */
    readonly recentProviderCalls: (since: number) => Promise<ProviderRecentView[]>;
    /** Requests, errors, latency and spend since a time in buckets, top models and keys (the overview). */
    readonly overview: (since: number, bucketMinutes: number) => Promise<OverviewView>;
  };
  /** The routed deployments now, each with whether it is cooling down. */
  readonly routing: { deploymentStates(): Promise<{ model: string; deployment: string; provider: string; weight: number; cooling: boolean }[]> };
  readonly metrics: GatewayMetrics;
  /** Stored responses of the Responses API (`store`, `previous_response_id`, GET and DELETE). */
  readonly responses: ResponseStore;
  /** Traces exported over OTLP; undefined when no collector is configured (telemetry.otlpEndpoint). */
  readonly tracing: Tracing | undefined;
  /** The MCP gateway: upstream servers and /mcp sessions (docs/mcp.md). */
  readonly mcp: McpGateway;
  /** The audit log: every change made through the admin API, and reloads of the configuration. */
  readonly audit: AuditStore;
  /** Budgets (src/budgets): their store, the book admissions read, their alerts. */
  readonly budgets: Budgets;
  /** Dashboard accounts and sessions (the admin API's second credential). */
  readonly accounts: Accounts;
  /** Dashboard sign-in through the OpenID provider of auth.oidc; undefined when none is configured. */
  readonly singleSignOn: SingleSignOn | undefined;
  /** Run on graceful shutdown after the server stopped accepting and in-flight requests ended. */
  readonly onShutdown: (task: () => Promise<void>) => void;
}
