import type { Logger } from 'pino';
import type { Accounts } from '../accounts/index.js';
import type { GatewayConfig, GatewaySecrets, RoutingEntry } from '../config/index.js';
import type { Storage } from '../storage/index.js';
import type { Authenticator, KeyCache, KeyPropagation, KeyStore } from '../keys/index.js';
import type { Catalog } from '../catalog/index.js';
import type { ProviderRegistry } from '../providers/index.js';
import type { Limiter } from '../limits/index.js';
import type { ModelCalls } from '../calls/index.js';
import type { AgentServices } from '../agents/index.js';
import type { LogStore, LogWriter, RefusalSummary, SizeCapJob } from '../logs/index.js';
import type { GatewayMetrics } from '../metrics/index.js';
import type { ResponseStore } from '../responses/index.js';
import type { Tracing } from '../telemetry/index.js';
import type { McpGateway } from '../mcp/index.js';

/**
 * Everything a route needs, built once at start-up and passed in (no module-level state).
 * Domains add their services here as they are built.
 */
export interface GatewayContext {
  readonly config: GatewayConfig;
  readonly secrets: GatewaySecrets;
  readonly storage: Storage;
  readonly logger: Logger;
  readonly catalog: Catalog;
  readonly providers: ProviderRegistry;
  readonly keys: {
    readonly store: KeyStore;
    readonly cache: KeyCache;
    /** Where a change made through this instance is applied and announced to the others. */
    readonly propagation: KeyPropagation;
    readonly authenticator: Authenticator;
  };
  readonly limits: Limiter;
  /** The one model-call path every model endpoint, VETTING and agents go through. */
  readonly calls: ModelCalls;
  /** Applies a `routing` list (start-up, SIGHUP, a changed config file); throws a ConfigError naming the field when it is invalid. */
  readonly applyRouting: (entries: readonly RoutingEntry[]) => void;
  /** Agents: their store, authoring, the runner, and the media of runs. */
  readonly agents: AgentServices;
  /** The request log: the store (queries) and the background writer (records are pushed, never awaited). */
  readonly logs: { readonly store: LogStore; readonly writer: LogWriter; readonly refusals: RefusalSummary; readonly sizeCap: SizeCapJob };
  readonly metrics: GatewayMetrics;
  /** Stored responses of the Responses API (`store`, `previous_response_id`, GET and DELETE). */
  readonly responses: ResponseStore;
  /** Traces exported over OTLP; undefined when no collector is configured (telemetry.otlpEndpoint). */
  readonly tracing: Tracing | undefined;
  /** The MCP gateway: upstream servers and /mcp sessions (docs/mcp.md). */
  readonly mcp: McpGateway;
  /** Dashboard accounts and sessions (the admin API's second credential). */
  readonly accounts: Accounts;
  /** Run on graceful shutdown after the server stopped accepting and in-flight requests ended. */
  readonly onShutdown: (task: () => Promise<void>) => void;
}
