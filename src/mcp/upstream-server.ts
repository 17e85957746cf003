import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ErrorCode,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/index.js';
import { redactText } from '../redaction/index.js';
import type { ServerCredentials } from './credentials.js';
import { serverFetch, upstreamTransport } from './upstream-transport.js';

/** What the gateway last knew of a server: `connecting` until its first connection is made or fails. */
export interface ServerHealth {
  state: 'connecting' | 'ready' | 'unavailable';
  /** Epoch ms of the last change of state. */
  since: number;
  /** Why it is unavailable (operator detail: redacted, never shown to keys). */
  reason: string | null;
}

export type ListKind = 'tools' | 'prompts' | 'resources';

/**
 * A call to a server that did not succeed: `unavailable` when it could not be reached, timed
 * out or went away (the server is then reported unavailable until it answers again), `error`
 * when it answered with a JSON-RPC error of its own.
 */
export class UpstreamFailure extends Error {
  override name = 'UpstreamFailure';
  constructor(
    readonly server: string,
    readonly kind: 'unavailable' | 'error',
    message: string,
    /** The server's own JSON-RPC error code, for `error`. */
    readonly upstreamCode: number | null = null,
    /** `unavailable` because no answer came within the server's timeout (the message says how long). */
    readonly timedOut = false,
  ) {
    super(message);
  }
}

export interface UpstreamServerOptions {
  config: McpServerConfig;
  credentials: ServerCredentials;
  /** The policed fetch (mcp.allowAddresses) every HTTP request of the server goes through. */
  fetch: FetchLike;
  /** How the gateway names itself to the server. */
  clientInfo: { name: string; version: string };
  onListChanged: (server: string, kind: ListKind) => void;
  onHealthChanged: (server: string, health: ServerHealth) => void;
  log: { warn(fields: Record<string, unknown>, message: string): void; debug(fields: Record<string, unknown>, message: string): void };
}

/** Pages of one list read at most, so a server handing out cursors forever cannot hold a request. */
const MAX_PAGES = 100;
/** Longest stderr line of a stdio server kept in the process log. */
const MAX_STDERR_LINE = 2000;

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return redactText(`${message}${cause}`).slice(0, 500);
}

/**
 * One upstream MCP server, reached through the official SDK's client. The connection is made
 * when first needed (and at start-up), and made again by the next request after it failed or
 * the server went away — a stdio server's process is started again then. Every request waits
 * at most the server's `timeoutMs`.
 */
export class UpstreamServer {
  readonly name: string;
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private health: ServerHealth = { state: 'connecting', since: Date.now(), reason: null };
  private readonly fetch: FetchLike;
  private closed = false;
  private listedTools = new Set<string>();

  constructor(private readonly options: UpstreamServerOptions) {
    this.name = options.config.name;
    this.fetch = serverFetch(options.credentials, options.fetch);
  }

  get config(): McpServerConfig {
    return this.options.config;
  }

  get state(): ServerHealth {
    return this.health;
  }

  /** Connects now if not connected; failures only change the health. */
  async probe(): Promise<void> {
    await this.connected().catch(() => undefined);
  }

  async listTools(signal?: AbortSignal): Promise<Tool[]> {
    const tools = await this.allPages(signal, async (client, cursor, options) => {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, options);
      return { items: page.tools, next: page.nextCursor };
    }, 'tools');
    this.listedTools = new Set(tools.map((tool) => tool.name));
    return tools;
  }

  /** Whether the server listed this tool last time it was asked (bounded metric labels). */
  listed(tool: string): boolean {
    return this.listedTools.has(tool);
  }

  async listPrompts(signal?: AbortSignal): Promise<Prompt[]> {
    return this.allPages(signal, async (client, cursor, options) => {
      const page = await client.listPrompts(cursor === undefined ? {} : { cursor }, options);
      return { items: page.prompts, next: page.nextCursor };
    }, 'prompts');
  }

  async listResources(signal?: AbortSignal): Promise<Resource[]> {
    return this.allPages(signal, async (client, cursor, options) => {
      const page = await client.listResources(cursor === undefined ? {} : { cursor }, options);
      return { items: page.resources, next: page.nextCursor };
    }, 'resources');
  }

  async listResourceTemplates(signal?: AbortSignal): Promise<ResourceTemplate[]> {
    return this.allPages(signal, async (client, cursor, options) => {
      const page = await client.listResourceTemplates(cursor === undefined ? {} : { cursor }, options);
      return { items: page.resourceTemplates, next: page.nextCursor };
    }, 'resources');
  }

  callTool(name: string, args: Record<string, unknown> | undefined, signal?: AbortSignal, onprogress?: RequestOptions['onprogress']) {
    return this.request(signal, (client, options) =>
      client.callTool({ name, ...(args !== undefined ? { arguments: args } : {}) }, undefined, { ...options, ...(onprogress !== undefined ? { onprogress, resetTimeoutOnProgress: true } : {}) }),
    );
  }

  getPrompt(name: string, args: Record<string, string> | undefined, signal?: AbortSignal) {
    return this.request(signal, (client, options) => client.getPrompt({ name, ...(args !== undefined ? { arguments: args } : {}) }, options));
  }

  readResource(uri: string, signal?: AbortSignal) {
    return this.request(signal, (client, options) => client.readResource({ uri }, options));
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  /** Capabilities the server declared: a list it does not offer is empty, not an error. */
  private offers(client: Client, kind: ListKind): boolean {
    const capabilities = client.getServerCapabilities();
    return capabilities?.[kind] !== undefined;
  }

  private async allPages<T>(
    signal: AbortSignal | undefined,
    page: (client: Client, cursor: string | undefined, options: RequestOptions) => Promise<{ items: T[]; next: string | undefined }>,
    kind: ListKind,
  ): Promise<T[]> {
    return this.request(signal, async (client, options) => {
      if (!this.offers(client, kind)) return [];
      const items: T[] = [];
      let cursor: string | undefined;
      for (let count = 0; count < MAX_PAGES; count += 1) {
        const result = await page(client, cursor, options);
        items.push(...result.items);
        cursor = result.next;
        if (cursor === undefined) break;
      }
      return items;
    });
  }

  private async request<T>(signal: AbortSignal | undefined, call: (client: Client, options: RequestOptions) => Promise<T>): Promise<T> {
    const client = await this.connected();
    try {
      const result = await call(client, { timeout: this.options.config.timeoutMs, ...(signal !== undefined ? { signal } : {}) });
      this.setHealth('ready', null);
      return result;
    } catch (error) {
      if (signal?.aborted === true) throw error;
      throw this.failure(error, client);
    }
  }

  /** Classifies a failed request; one that means the server is gone drops the connection. */
  private failure(error: unknown, client: Client): UpstreamFailure {
    if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed && error.code !== ErrorCode.RequestTimeout) {
      return new UpstreamFailure(this.name, 'error', redactText(error.message), error.code);
    }
    const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout;
    const reason = timedOut ? `no answer within ${this.options.config.timeoutMs} ms` : describe(error);
    this.dropConnection(client, reason);
    return new UpstreamFailure(this.name, 'unavailable', reason, null, timedOut);
  }

  private connected(): Promise<Client> {
    if (this.closed) return Promise.reject(new UpstreamFailure(this.name, 'unavailable', 'the gateway is shutting down'));
    if (this.client !== undefined) return Promise.resolve(this.client);
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(): Promise<Client> {
    const { config, credentials } = this.options;
    const client = new Client(this.options.clientInfo, { capabilities: {} });
    const { transport, stderr } = upstreamTransport(config, credentials, this.fetch);
    if (stderr !== null) {
      createInterface({ input: stderr }).on('line', (line) =>
        this.options.log.debug({ mcpServer: this.name, stderr: redactText(line.slice(0, MAX_STDERR_LINE)) }, 'MCP server wrote to stderr'),
      );
    }
    client.onclose = () => this.dropConnection(client, 'the server closed the connection');
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.options.onListChanged(this.name, 'tools'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => this.options.onListChanged(this.name, 'prompts'));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => this.options.onListChanged(this.name, 'resources'));
    try {
      await client.connect(transport, { timeout: config.timeoutMs });
    } catch (error) {
      const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout;
      const reason = timedOut ? `no answer within ${config.timeoutMs} ms` : describe(error);
      client.onclose = undefined;
      await client.close().catch(() => undefined);
      this.setHealth('unavailable', reason);
      throw new UpstreamFailure(this.name, 'unavailable', reason, null, timedOut);
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      throw new UpstreamFailure(this.name, 'unavailable', 'the gateway is shutting down');
    }
    this.client = client;
    this.setHealth('ready', null);
    return client;
  }

  private dropConnection(client: Client, reason: string): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.onclose = undefined;
    void client.close().catch(() => undefined);
    if (!this.closed) this.setHealth('unavailable', reason);
  }

  private setHealth(state: ServerHealth['state'], reason: string | null): void {
    if (this.health.state === state && this.health.reason === reason) return;
    const changed = this.health.state !== state;
    this.health = { state, since: changed ? Date.now() : this.health.since, reason };
    if (state === 'unavailable') this.options.log.warn({ mcpServer: this.name, reason }, `MCP server ${this.name} is unavailable: ${reason}`);
    if (changed) this.options.onHealthChanged(this.name, this.health);
  }
}
