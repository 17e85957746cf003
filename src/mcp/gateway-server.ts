import type { IncomingHttpHeaders } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra, RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../errors/index.js';
import type { GuardedToolCall, GuardrailVerdict } from '../guardrails/index.js';
import type { Principal } from '../keys/index.js';
import type { Caller } from '../logs/index.js';
import { splitQualifiedName } from './names.js';
import type { ToolAccess } from './tool-access.js';
import type { ToolCallLog } from './tool-call-log.js';
import type { ToolUnion, UnionList } from './tool-union.js';
import { UpstreamFailure } from './upstream-server.js';

/** What the route hands each request of a session (through the SDK's `authInfo.extra`). */
export interface RequestContext {
  principal: Principal;
  access: ToolAccess;
  requestId: string;
  platform: string | null;
  headers: IncomingHttpHeaders;
}

export interface GatewayServerParts {
  union: ToolUnion;
  /** Calls a tool the caller may use, the guardrails attached to it run on its arguments and result. */
  callTool: (call: Omit<GuardedToolCall, 'arguments'>, access: ToolAccess, args: Record<string, unknown> | undefined, onprogress: RequestOptions['onprogress']) => ReturnType<ToolUnion['callTool']>;
  log: ToolCallLog;
  /** Counts a tool call against the key's per-minute limit; throws the 429 GatewayError when it is reached. */
  admitToolCall: (principal: Principal) => Promise<void>;
  serverInfo: { name: string; version: string };
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The JSON-RPC code a gateway error is sent with (docs/mcp.md). */
function rpcCodeOf(error: GatewayError): number {
  switch (error.code) {
    case 'tool_not_found':
      return ErrorCode.InvalidParams;
    case 'mcp_server_error':
      return ErrorCode.InternalError;
    default:
      return ErrorCode.ConnectionClosed;
  }
}

/**
 * The JSON-RPC error of a gateway error: what the SDK sends for a handler's error is its
 * `code`, `message` and `data` (an McpError would prefix its message with its code).
 */
export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

/** A gateway error as the MCP error the client gets: its message, and the gateway's code in `data`. */
export function toMcpError(error: GatewayError): RpcError {
  return new RpcError(rpcCodeOf(error), error.message, {
    modelgate: { code: error.code, ...(error.retryAfterSeconds !== undefined ? { retry_after_seconds: error.retryAfterSeconds } : {}) },
  });
}

/**
 * An upstream failure as the caller sees it: the server named (it may see that server), the
 * operator's detail (addresses, the server's connection errors) left to the log.
 */
export function gatewayErrorOf(failure: UpstreamFailure): GatewayError {
  if (failure.kind === 'error') {
    return new GatewayError('mcp_server_error', `MCP server "${failure.server}" answered with an error: ${failure.message}`, { logDetail: { mcp_server: failure.server } });
  }
  const why = failure.timedOut ? failure.message : 'it could not be reached';
  return new GatewayError('mcp_server_unavailable', `MCP server "${failure.server}" is unavailable (${why}). Retry later.`, {
    logDetail: { mcp_server: failure.server, reason: failure.message },
  });
}

function contextOf(extra: Extra): RequestContext {
  const context = extra.authInfo?.extra?.context as RequestContext | undefined;
  // The route authenticates every request before the transport sees it.
  if (context === undefined) throw new McpError(ErrorCode.InternalError, 'The request reached the MCP server without its caller.');
  return context;
}

function callerOf(principal: Principal): Caller {
  return principal.kind === 'key'
    ? { keyId: principal.keyId, projectId: principal.projectId, fingerprint: principal.fingerprint }
    : { keyId: null, projectId: null, fingerprint: 'anonymous' };
}

/** A list's answer: its items, and the servers the caller may see whose part is missing (decisions §12). */
function listResult<T, K extends string>(key: K, list: UnionList<T>): { [P in K]: T[] } & { _meta: { modelgate: { unavailable: string[] } } } {
  return { [key]: list.items, _meta: { modelgate: { unavailable: list.unavailable } } } as { [P in K]: T[] } & { _meta: { modelgate: { unavailable: string[] } } };
}

/**
 * The MCP server of one /mcp session (the SDK's low-level server: the gateway relays what the
 * upstream servers declare rather than declaring tools of its own). Every handler answers for
 * the caller of its own HTTP request: its allow-lists, its per-minute limit, its record.
 */
export function createGatewayServer(parts: GatewayServerParts): Server {
  const server = new Server(parts.serverInfo, {
    capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } },
    instructions: 'Tools, prompts and resources of the MCP servers behind this gateway, named <server>__<name>.',
  });
  const failing = (error: unknown): never => {
    if (error instanceof UpstreamFailure) throw toMcpError(gatewayErrorOf(error));
    if (error instanceof GatewayError) throw toMcpError(error);
    throw error;
  };

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => listResult('tools', await parts.union.listTools(contextOf(extra).access, extra.signal)));
  server.setRequestHandler(ListPromptsRequestSchema, async (_request, extra) => listResult('prompts', await parts.union.listPrompts(contextOf(extra).access, extra.signal)));
  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) =>
    listResult('resources', await parts.union.listResources(contextOf(extra).access, extra.signal)),
  );
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (_request, extra) =>
    listResult('resourceTemplates', await parts.union.listResourceTemplates(contextOf(extra).access, extra.signal)),
  );

  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    try {
      return await parts.union.getPrompt(contextOf(extra).access, request.params.name, request.params.arguments, extra.signal);
    } catch (error) {
      return failing(error);
    }
  });
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    try {
      return await parts.union.readResource(contextOf(extra).access, request.params.uri, extra.signal);
    } catch (error) {
      return failing(error);
    }
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const context = contextOf(extra);
    const { name } = request.params;
    const named = splitQualifiedName(name);
    const known = named === null ? undefined : parts.union.server(named.server);
    const visible = known !== undefined && named !== null && context.access.allows(named.server, name);
    const recording = parts.log.begin({
      requestId: context.requestId,
      caller: callerOf(context.principal),
      platform: context.platform,
      // What a refused name says is kept for the operator; the metric labels stay bounded.
      server: visible ? named!.server : 'unknown',
      tool: named?.name ?? name,
      qualifiedName: name,
      arguments: request.params.arguments,
      headers: context.headers,
      toolLabel: () => (visible && known!.listed(named!.name) ? named!.name : 'other'),
    });
    const verdicts: GuardrailVerdict[] = [];
    try {
      await parts.admitToolCall(context.principal);
      const progressToken = request.params._meta?.progressToken;
      const onprogress =
        progressToken === undefined
          ? undefined
          : (progress: { progress: number; total?: number; message?: string }) =>
              void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => undefined);
      const caller = context.principal.kind === 'key' ? { kind: 'key' as const, keyId: context.principal.keyId, projectId: context.principal.projectId } : { kind: 'anonymous' as const };
      const guarded = { caller, tool: name, requestId: context.requestId, signal: extra.signal, record: (found: readonly GuardrailVerdict[]) => verdicts.push(...found) };
      const result = await parts.callTool(guarded, context.access, request.params.arguments, onprogress);
      recording.end({ outcome: result.isError === true ? 'tool_error' : 'ok', result, guardrails: verdicts });
      return result;
    } catch (error) {
      const gatewayError =
        error instanceof UpstreamFailure
          ? gatewayErrorOf(error)
          : error instanceof GatewayError
            ? error
            : new GatewayError('internal_error', 'The tool call failed inside the gateway.', { cause: error });
      recording.end({ outcome: 'failed', code: gatewayError.code, status: extra.signal.aborted ? 499 : gatewayError.status, message: gatewayError.message, guardrails: verdicts });
      throw toMcpError(gatewayError);
    }
  });
  return server;
}
