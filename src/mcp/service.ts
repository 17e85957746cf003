import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError, type GatewayConfig, type McpServerConfig } from '../config/index.js';
import type { ErrorCode } from '../errors/index.js';
import type { Principal } from '../keys/index.js';
import type { Limiter } from '../limits/index.js';
import type { Guardrails, GuardrailVerdict } from '../guardrails/index.js';
import { AddressPolicy, AddressPolicyError, type Resolver } from '../network/index.js';
import type { McpRuntime } from './runtime.js';
import type { ToolSource } from './tool-loop.js';
import type { ServerHealth } from './upstream-server.js';
import { ProjectToolLists } from './project-tool-lists.js';
import { serverEntries, summaryOf, type ServerEntry, type ServerSummary } from './server-entries.js';
import type { ServerSetOptions } from './server-set.js';
import type { McpServerStore } from './server-store.js';
import { ToolAccess } from './tool-access.js';
import type { ToolCallSinks } from './tool-call-log.js';

export interface McpGatewayOptions {
  settings: GatewayConfig['mcp'];
  /** Where `{ env: NAME }` values of the servers are read. */
  env: NodeJS.ProcessEnv;
  log: ServerSetOptions['log'];
  sinks: ToolCallSinks;
  limits: Limiter;
  /** A project's `allowedTools` as stored (null: every tool). */
  projectAllowedTools: (projectId: string) => Promise<readonly string[] | null>;
  /** How long a project's list is kept before it is read again. */
  projectListRefreshMs: number;
  /** How the gateway names itself to MCP clients and servers. */
  product: { name: string; version: string };
  /** Where servers added through the admin API are kept; none: only the config file's. */
  store?: McpServerStore;
  /** How often this instance re-reads the added servers (another instance's changes); default 10 s. */
  storeRefreshMs?: number;
  /** How unavailable servers are tried again in the background (default 30 s). */
  probeIntervalMs?: number;
  /** Host name resolution of server URLs (tests). */
  resolver?: Resolver;
  /** The gateway's guardrails: those attached to the caller run on each tool call's arguments and result. */
  guardrails?: Guardrails | undefined;
}

/** One HTTP request to /mcp, as the route hands it over after authenticating it. */
export interface McpHttpRequest {
  principal: Principal;
  requestId: string;
  platform: string | null;
  method: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** What narrows a tool loop's tools beyond the caller's allow-lists, and who hears of its calls. */
export interface ToolNarrowing {
  /** Only these servers; each must exist and be visible to the caller. */
  servers?: readonly string[];
  /** Only these tools (`server__tool`, `server__*`). */
  allowedTools?: readonly string[];
  /** The request field that named a server, for the refusal of an unknown one. */
  param?: (server: string) => string;
  onCallEnded?: (call: { tool: string; server: string; latencyMs: number; outcome: 'ok' | 'tool_error' | ErrorCode }) => void;
  /** The request the loop belongs to: its id, and where the guardrails' verdicts on its tool calls go (its record). */
  request?: { id: string; guarded: (verdicts: readonly GuardrailVerdict[]) => void };
}

const DEFAULT_STORE_REFRESH_MS = 10_000;

/**
 * The MCP gateway (docs/mcp.md): the upstream servers, and `/mcp` sessions that serve their
 * tools, prompts and resources to each key within its allow-lists. What is built on the SDK
 * (runtime.ts) is loaded the first time there are servers to serve, a `/mcp` request or a tool
 * loop (decisions/0036): an instance that serves no MCP does not hold the SDK in memory.
 */
export class McpGateway {
  private readonly policy: AddressPolicy;
  private readonly projectLists: ProjectToolLists;
  private readonly healthListeners = new Set<(server: string, health: ServerHealth) => void>();
  private configured: readonly McpServerConfig[];
  private added: readonly McpServerConfig[] = [];
  /** The servers served, checked, and since when (their health until the runtime has them). */
  private inForce: { entries: readonly ServerEntry[]; since: number } = { entries: [], since: Date.now() };
  private runtime: McpRuntime | undefined;
  private loading: Promise<McpRuntime> | undefined;
  private storeTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: McpGatewayOptions) {
    try {
      this.policy = new AddressPolicy(options.settings.allowAddresses, 'mcp.allowAddresses');
    } catch (error) {
      if (error instanceof AddressPolicyError) throw new ConfigError(`invalid setting ${error.message}`);
      throw error;
    }
    this.projectLists = new ProjectToolLists(options.projectAllowedTools, options.projectListRefreshMs);
    options.sinks.metrics.watchServers(() => this.summaries().map(({ name, health }) => ({ name, up: health.state === 'ready' })));
    this.configured = options.settings.servers;
    this.serve(serverEntries(this.configured, [], options.env));
  }

  /**
   * Reads the servers added through the admin API and keeps re-reading them (changes made
   * through other instances). One that no longer applies (its variable unset here) is logged
   * and left out; the others are served. Resolves once the servers served are connecting.
   */
  async start(): Promise<void> {
    const { store } = this.options;
    if (store !== undefined) {
      await this.refreshAdded(store);
      this.storeTimer = setInterval(() => void this.refreshAdded(store).catch(() => undefined), this.options.storeRefreshMs ?? DEFAULT_STORE_REFRESH_MS);
      this.storeTimer.unref();
    }
    if (this.inForce.entries.length > 0) await this.loaded();
  }

  /** Replaces the config file's servers (start-up, SIGHUP, a changed config file); throws a ConfigError naming the field when one is invalid. */
  applyServers(servers: readonly McpServerConfig[]): void {
    this.serve(serverEntries(servers, this.added, this.options.env));
    this.configured = servers;
  }

  /** Adds (or replaces) a server through the admin API; throws a ConfigError saying what is wrong with it. */
  async addServer(server: McpServerConfig): Promise<void> {
    const store = this.storeOrFail();
    const added = [...this.added.filter((other) => other.name !== server.name), server];
    this.serve(serverEntries(this.configured, added, this.options.env));
    await store.put(server);
    this.added = added;
  }

  /** Removes a server added through the admin API; false when there is none of this name. */
  async removeServer(name: string): Promise<boolean> {
    const removed = await this.storeOrFail().remove(name);
    this.added = this.added.filter((server) => server.name !== name);
    this.serve(serverEntries(this.configured, this.added, this.options.env));
    return removed;
  }

  private storeOrFail(): McpServerStore {
    if (this.options.store === undefined) throw new Error('MCP servers cannot be added: no store');
    return this.options.store;
  }

  private async refreshAdded(store: McpServerStore): Promise<void> {
    const stored = await store.list();
    if (JSON.stringify(stored) === JSON.stringify(this.added)) return;
    const usable = stored.filter((server) => {
      try {
        serverEntries(this.configured, [...this.added.filter((other) => other.name !== server.name), server], this.options.env);
        return true;
      } catch (error) {
        this.options.log.warn({ mcpServer: server.name, reason: (error as Error).message }, `MCP server ${server.name} (admin API) is not served here: ${(error as Error).message}`);
        return false;
      }
    });
    this.serve(serverEntries(this.configured, usable, this.options.env));
    this.added = stored;
  }

  /** Puts checked servers in force; the first ones load the runtime, which connects to them. */
  private serve(entries: readonly ServerEntry[]): void {
    this.inForce = { entries, since: Date.now() };
    if (this.runtime !== undefined) this.runtime.apply(entries);
    // A failed load is the next caller's error (start, /mcp), not an unhandled rejection.
    else if (entries.length > 0) this.loaded().catch(() => undefined);
  }

  /** The runtime, loaded once; it serves the servers in force when it arrives. */
  private loaded(): Promise<McpRuntime> {
    this.loading ??= import('./runtime.js').then(({ McpRuntime }) => {
      const runtime = new McpRuntime(this.options, this.policy, (server, health) => {
        for (const listener of this.healthListeners) listener(server, health);
      });
      runtime.apply(this.inForce.entries);
      this.runtime = runtime;
      return runtime;
    });
    return this.loading;
  }

  /** Every server with its transport and health, for /readyz, `modelgate status`, the admin API and metrics. */
  summaries(): ServerSummary[] {
    const { entries, since } = this.inForce;
    return this.runtime?.summaries() ?? entries.map((entry) => summaryOf(entry, { state: 'connecting', since, reason: null }));
  }

  /** Told of every change of a server's health (metrics, tests). */
  onHealthChanged(listener: (server: string, health: ServerHealth) => void): void {
    this.healthListeners.add(listener);
  }

  /** What a project may use; a change through this instance applies at once. */
  projectChanged(projectId: string, allowedTools: readonly string[] | null): void {
    this.projectLists.set(projectId, allowedTools);
  }

  /**
   * Checks one HTTP request to /mcp and returns what serves it: the caller's session (an
   * unknown id and another key's get the same 404), or a new one for an `initialize`.
   * Throws a GatewayError before anything is written, so the route can still answer it.
   */
  async prepare(request: McpHttpRequest): Promise<(raw: IncomingMessage, response: ServerResponse) => Promise<void>> {
    const { principal } = request;
    const access = new ToolAccess(principal.kind === 'key' ? (principal.allowedTools ?? null) : null, principal.kind === 'key' ? await this.projectLists.of(principal.projectId) : null);
    return (await this.loaded()).prepare(request, access);
  }

  /**
   * The tools a model call's tool loop may use for this caller (tool-loop.ts): its allow-lists,
   * narrowed to `servers` (a Responses `mcp` tool's server_label) and `allowedTools` of the
   * request when given. A server named there that does not exist or that the caller may not see
   * is refused, the same way (tool_not_found naming it). Each call counts against the key's
   * per-minute limit, like one at /mcp, and against the tool's metrics; `onCallEnded` hears how
   * it ended (the request's record).
   */
  async toolSource(principal: Principal, narrowing: ToolNarrowing = {}): Promise<ToolSource> {
    const projectList = principal.kind === 'key' ? await this.projectLists.of(principal.projectId) : null;
    const requested = narrowing.servers === undefined ? null : narrowing.servers.map((server) => `${server}__*`);
    const access = new ToolAccess(principal.kind === 'key' ? (principal.allowedTools ?? null) : null, projectList, requested, narrowing.allowedTools ?? null);
    return (await this.loaded()).toolSource(principal, access, narrowing);
  }

  async close(): Promise<void> {
    clearInterval(this.storeTimer);
    // A load still under way ends before its runtime is closed: nothing connects afterwards.
    await (await this.loading?.catch(() => undefined))?.close();
  }
}
