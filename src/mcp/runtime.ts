import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError, type ErrorCode } from '../errors/index.js';
import type { Principal } from '../keys/index.js';
import { heldTo } from '../limits/index.js';
import { guardToolCall } from '../guardrails/index.js';
import type { AddressPolicy } from '../network/index.js';
import { splitQualifiedName } from './names.js';
import { createGatewayServer, gatewayErrorOf, type GatewayServerParts, type RequestContext } from './gateway-server.js';
import type { McpGatewayOptions, McpHttpRequest, ToolNarrowing } from './service.js';
import type { ToolResult, ToolSource } from './tool-loop.js';
import { UpstreamFailure, type ServerHealth } from './upstream-server.js';
import type { ServerEntry, ServerSummary } from './server-entries.js';
import { ServerSet } from './server-set.js';
import { McpSessions } from './sessions.js';
import type { ToolAccess } from './tool-access.js';
import { ToolCallLog } from './tool-call-log.js';
import { ToolUnion } from './tool-union.js';
import { policedFetch } from './upstream-transport.js';

const DEFAULT_PROBE_INTERVAL_MS = 30_000;

/**
 * The part of the MCP gateway built on the SDK: the upstream connections and the `/mcp`
 * sessions. McpGateway loads it once MCP is used (decisions/0036).
 */
export class McpRuntime {
  private readonly servers: ServerSet;
  private readonly sessions: McpSessions;
  private readonly union: ToolUnion;
  private readonly parts: GatewayServerParts;
  private readonly closeFetch: () => Promise<void>;

  constructor(
    private readonly options: McpGatewayOptions,
    policy: AddressPolicy,
    onHealthChanged: (server: string, health: ServerHealth) => void,
  ) {
    const fetch = policedFetch(policy, options.resolver);
    this.closeFetch = fetch.close;
    this.servers = new ServerSet({
      fetch: fetch.fetch,
      clientInfo: options.product,
      log: options.log,
      probeIntervalMs: options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS,
    });
    this.union = new ToolUnion(this.servers);
    this.sessions = new McpSessions({ idleMs: options.settings.sessionIdleMs, maxSessions: options.settings.maxSessions });
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
    this.servers.onHealthChanged(onHealthChanged);
  }

  apply(entries: readonly ServerEntry[]): void {
    this.servers.apply(entries);
  }

  summaries(): ServerSummary[] {
    return this.servers.summaries();
  }

  /** McpGateway.prepare, once the caller's access is known. */
  prepare(request: McpHttpRequest, access: ToolAccess): (raw: IncomingMessage, response: ServerResponse) => Promise<void> {
    const { principal } = request;
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

  /** McpGateway.toolSource, once the caller's access (narrowed by the request) is known. */
  toolSource(principal: Principal, access: ToolAccess, narrowing: ToolNarrowing): ToolSource {
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
