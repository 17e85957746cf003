import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Principal } from '../keys/index.js';
import type { ToolAccess } from './tool-access.js';

/** One /mcp session: its SDK server and transport, and the key that opened it. */
export interface McpSession {
  readonly id: string;
  /** The key id that opened the session (`anonymous` in the migration window): only it may use the session. */
  readonly owner: string;
  readonly server: Server;
  readonly transport: StreamableHTTPServerTransport;
  /** The caller's access as of its last request: which list changes it is told about. */
  access: ToolAccess;
  lastUsedAt: number;
}

export function ownerOf(principal: Principal): string {
  return principal.kind === 'key' ? principal.keyId : 'anonymous';
}

export interface SessionLimits {
  idleMs: number;
  maxSessions: number;
}

/**
 * The open /mcp sessions of this instance. A session is found only by the key that opened it:
 * another key's request with its id gets the same answer as an unknown id. Sessions unused
 * for `idleMs` are closed, and beyond `maxSessions` the longest unused goes first.
 */
export class McpSessions {
  private readonly sessions = new Map<string, McpSession>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly limits: SessionLimits) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.min(limits.idleMs, 60_000));
    this.sweeper.unref();
  }

  /** A new session's server and transport; it is registered once the SDK has given it its id (initialize). */
  open(principal: Principal, access: ToolAccess, makeServer: () => Server): StreamableHTTPServerTransport {
    const owner = ownerOf(principal);
    const server = makeServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, { id, owner, server, transport, access, lastUsedAt: Date.now() });
        this.evictBeyondLimit();
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
    };
    void server.connect(transport);
    return transport;
  }

  /** The caller's session with this id, or undefined — for an unknown id and another key's alike. */
  find(id: string, principal: Principal): McpSession | undefined {
    const session = this.sessions.get(id);
    if (session === undefined || session.owner !== ownerOf(principal)) return undefined;
    session.lastUsedAt = Date.now();
    return session;
  }

  all(): IterableIterator<McpSession> {
    return this.sessions.values();
  }

  get size(): number {
    return this.sessions.size;
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(open.map((session) => session.server.close().catch(() => undefined)));
  }

  private closeIdle(): void {
    const oldest = Date.now() - this.limits.idleMs;
    for (const session of [...this.sessions.values()]) if (session.lastUsedAt < oldest) this.close(session);
  }

  private evictBeyondLimit(): void {
    if (this.sessions.size <= this.limits.maxSessions) return;
    const byAge = [...this.sessions.values()].sort((a, b) => a.lastUsedAt - b.lastUsedAt);
    for (const session of byAge.slice(0, this.sessions.size - this.limits.maxSessions)) this.close(session);
  }

  private close(session: McpSession): void {
    this.sessions.delete(session.id);
    void session.server.close().catch(() => undefined);
  }
}
