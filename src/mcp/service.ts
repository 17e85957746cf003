import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError, type GatewayConfig, type McpServerConfig } from '../config/index.js';
import { GatewayError, type ErrorCode } from '../errors/index.js';
import type { Principal } from '../keys/index.js';
import { heldTo, type Limiter } from '../limits/index.js';
import { guardToolCall, type Guardrails, type GuardrailVerdict } from '../guardrails/index.js';
import { AddressPolicy, AddressPolicyError, type Resolver } from '../network/index.js';
import { splitQualifiedName } from './names.js';
import { createGatewayServer, gatewayErrorOf, type GatewayServerParts, type RequestContext } from './gateway-server.js';
import type { ToolResult, ToolSource } from './tool-loop.js';
import { UpstreamFailure, type ServerHealth } from './upstream-server.js';
import { ProjectToolLists } from './project-tool-lists.js';
import { ServerSet, type ServerSummary } from './server-set.js';
import type { McpServerStore } from './server-store.js';
import { McpSessions } from './sessions.js';
import { ToolAccess } from './tool-access.js';
import { ToolCallLog, type ToolCallSinks } from './tool-call-log.js';
import { ToolUnion } from './tool-union.js';
import { policedFetch } from './upstream-transport.js';
import type { ServerSetOptions } from './server-set.js';

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

const DEFAULT_PROBE_INTERVAL_MS = 30_000;
const DEFAULT_STORE_REFRESH_MS = 10_000;

/**
 * The MCP gateway (docs/mcp.md): the upstream servers, and `/mcp` sessions that serve their
 * tools, prompts and resources to each key within its allow-lists.
 */
export class McpGateway {
  private readonly servers: ServerSet;
  private readonly sessions: McpSessions;
  private readonly union: ToolUnion;
  private readonly projectLists: ProjectToolLists;
  private readonly parts: GatewayServerParts;
  private readonly closeFetch: () => Promise<void>;
  private configured: readonly McpServerConfig[];
  private added: readonly McpServerConfig[] = [];
  private storeTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: McpGatewayOptions) {
    let policy: AddressPolicy;
    try {
      policy = new AddressPolicy(options.settings.allowAddresses, 'mcp.allowAddresses');
    } catch (error) {
      if (error instanceof AddressPolicyError) throw new ConfigError(`invalid setting ${error.message}`);
      throw error;
    }
    const fetch = policedFetch(policy, options.resolver);
    this.closeFetch = fetch.close;
    this.servers = new ServerSet({
      env: options.env,
      fetch: fetch.fetch,
      clientInfo: options.product,
      log: options.log,
      probeIntervalMs: options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS,
    });
    this.union = new ToolUnion(this.servers);
    this.sessions = new McpSessions({ idleMs: options.settings.sessionIdleMs, maxSessions: options.settings.maxSessions });
    this.projectLists = new ProjectToolLists(options.projectAllowedTools, options.projectListRefreshMs);
    this.parts = {
      union: this.union,
      log: new ToolCallLog(options.sinks),
      serverInfo: options.product,
      callTool: (call, access, args, onprogress) =>
        guardToolCall(options.guardrails, { ...call, arguments: args }, (checked) => this.union.callTool(access, call.tool, checked, call.signal, onprogress)),
      admitToolCall: async (principal) => {
        const admission = await options.limits.admit(heldTo(principal, 'per-minute'), { tokens: 0, costUsd: 0 });
        await admission.settle({ tokens: 0, costUsd: 0 });
      },
    };
    this.servers.onListChanged((server, kind) => this.tellSessions(server, kind));
    options.sinks.metrics.watchServers(() => this.servers.summaries().map(({ name, health }) => ({ name, up: health.state === 'ready' })));
    this.configured = options.settings.servers;
    this.servers.apply(this.configured);
  }

  /**
   * Reads the servers added through the admin API and keeps re-reading them (changes made
   * through other instances). One that no longer applies (its variable unset here) is logged
   * and left out; the others are served.
   */
  async start(): Promise<void> {
    const { store } = this.options;
    if (store === undefined) return;
    await this.refreshAdded(store);
    this.storeTimer = setInterval(() => void this.refreshAdded(store).catch(() => undefined), this.options.storeRefreshMs ?? DEFAULT_STORE_REFRESH_MS);
    this.storeTimer.unref();
  }

  /** Replaces the config file's servers (start-up, SIGHUP, a changed config file); throws a ConfigError naming the field when one is invalid. */
  applyServers(servers: readonly McpServerConfig[]): void {
    this.servers.apply(servers, this.added);
    this.configured = servers;
  }

  /** Adds (or replaces) a server through the admin API; throws a ConfigError saying what is wrong with it. */
  async addServer(server: McpServerConfig): Promise<void> {
    const store = this.storeOrFail();
    const added = [...this.added.filter((other) => other.name !== server.name), server];
    this.servers.apply(this.configured, added);
    await store.put(server);
    this.added = added;
  }

  /** Removes a server added through the admin API; false when there is none of this name. */
  async removeServer(name: string): Promise<boolean> {
    const removed = await this.storeOrFail().remove(name);
    this.added = this.added.filter((server) => server.name !== name);
    this.servers.apply(this.configured, this.added);
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
        this.servers.apply(this.configured, [...this.added.filter((other) => other.name !== server.name), server]);
        return true;
      } catch (error) {
        this.options.log.warn({ mcpServer: server.name, reason: (error as Error).message }, `MCP server ${server.name} (admin API) is not served here: ${(error as Error).message}`);
        return false;
      }
    });
    this.servers.apply(this.configured, usable);
    this.added = stored;
  }

  /** Every server with its transport and health, for /readyz, `modelgate status`, the admin API and metrics. */
  summaries(): ServerSummary[] {
    return this.servers.summaries();
  }

  /** Told of every change of a server's health (metrics, tests). */
  onHealthChanged(listener: (server: string, health: ServerHealth) => void): void {
    this.servers.onHealthChanged(listener);
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
    const context: RequestContext = { principal, access, requestId: request.requestId, platform: request.platform, headers: request.headers };
    const auth: AuthInfo = {
      token: principal.fingerprint,
      clientId: principal.kind === 'key' ? principal.keyId : 'anonymous',
      scopes: ['mcp:use'],
      extra: { context },
    };
    const sessionHeader = request.headers['mcp-session-id'];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    if (sessionId !== undefined) {
      const session = this.sessions.find(sessionId, principal);
      if (session === undefined) {
        throw new GatewayError('mcp_session_not_found', 'There is no MCP session with this Mcp-Session-Id for this key (it expired, was closed, or never existed). Start a new one with initialize.');
      }
      session.access = access;
      return (raw, response) => session.transport.handleRequest(Object.assign(raw, { auth }), response, request.body);
    }
    if (request.method !== 'POST' || !isInitializeRequest(request.body)) {
      throw new GatewayError(
        'invalid_body',
        request.method === 'POST'
          ? 'A request without an Mcp-Session-Id header must be an initialize request: start a session first.'
          : `${request.method} /mcp needs the Mcp-Session-Id header of a session this key opened.`,
        { param: 'Mcp-Session-Id' },
      );
    }
    const transport = this.sessions.open(principal, access, () => createGatewayServer(this.parts));
    return (raw, response) => transport.handleRequest(Object.assign(raw, { auth }), response, request.body);
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
    for (const server of narrowing.servers ?? []) {
      if (this.union.server(server) === undefined || !access.seesServer(server)) {
        throw new GatewayError('tool_not_found', `There is no MCP server "${server}" this key may use. GET /admin/v1/mcp/servers (admins) or tools/list at /mcp names the servers.`, {
          param: narrowing.param?.(server) ?? null,
        });
      }
    }
    return {
      list: async (signal) => {
        const listed = await this.union.listTools(access, signal);
        return { tools: listed.items.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })), unavailable: listed.unavailable };
      },
      call: async (name, args, signal) => {
        await this.parts.admitToolCall(principal);
        const started = performance.now();
        const server = splitQualifiedName(name)?.server ?? 'other';
        const ended = (outcome: 'ok' | 'tool_error' | ErrorCode) => {
          const latencyMs = performance.now() - started;
          this.options.sinks.metrics.toolCallEnded(server, splitQualifiedName(name)?.name ?? 'other', outcome, latencyMs / 1000);
          narrowing.onCallEnded?.({ tool: name, server, latencyMs: Math.round(latencyMs), outcome });
        };
        try {
          const caller = principal.kind === 'key' ? { kind: 'key' as const, keyId: principal.keyId, projectId: principal.projectId } : { kind: 'anonymous' as const };
          const guarded = { caller, tool: name, requestId: narrowing.request?.id ?? null, signal, record: narrowing.request?.guarded ?? (() => undefined) };
          const result: { content?: unknown; toolResult?: unknown; isError?: unknown } = await this.parts.callTool(guarded, access, args, undefined);
          ended(result.isError === true ? 'tool_error' : 'ok');
          // A server of the protocol's first version may answer `toolResult` instead of `content`.
          return Array.isArray(result.content) ? (result as ToolResult) : { content: [{ type: 'text', text: JSON.stringify(result.toolResult ?? null) }] };
        } catch (error) {
          const failure = error instanceof UpstreamFailure ? gatewayErrorOf(error) : error;
          ended(failure instanceof GatewayError ? failure.code : 'internal_error');
          throw failure;
        }
      },
    };
  }

  async close(): Promise<void> {
    clearInterval(this.storeTimer);
    await this.sessions.closeAll();
    await this.servers.close();
    await this.closeFetch();
  }

  /** A server's list changed (or servers came or went): sessions whose caller may see it are told. */
  private tellSessions(server: string, kind: 'tools' | 'prompts' | 'resources'): void {
    for (const session of this.sessions.all()) {
      const visible = kind === 'resources' ? session.access.seesResourcesOf(server) : session.access.seesServer(server);
      if (!visible) continue;
      const sent =
        kind === 'tools' ? session.server.sendToolListChanged() : kind === 'prompts' ? session.server.sendPromptListChanged() : session.server.sendResourceListChanged();
      void sent.catch(() => undefined);
    }
  }
}
