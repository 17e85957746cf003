import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from '../config/index.js';
import { addKnownSecrets } from '../redaction/index.js';
import { summaryOf, type ServerEntry, type ServerSummary } from './server-entries.js';
import { UpstreamServer, type ListKind, type ServerHealth, type UpstreamServerOptions } from './upstream-server.js';

export interface ServerSetOptions {
  fetch: FetchLike;
  clientInfo: { name: string; version: string };
  log: UpstreamServerOptions['log'];
  /** How often servers that are unavailable are tried again in the background. */
  probeIntervalMs: number;
}

type Listener = (server: string, kind: ListKind) => void;

/** What a server's entry is compared by on reload: a changed entry gets a new connection. */
const fingerprintOf = (server: McpServerConfig) => JSON.stringify(server);

/**
 * The upstream servers in force: the config file's `mcp.servers` and those an administrator
 * added. Replaced whole on reload (SIGHUP, a changed file, an admin change) by entries
 * checked before (serverEntries); a server whose entry did not change keeps its connection, a
 * removed one is closed.
 */
export class ServerSet {
  private servers = new Map<string, { server: UpstreamServer; fingerprint: string; source: ServerSummary['source'] }>();
  private readonly listeners = new Set<Listener>();
  private readonly healthListeners = new Set<(server: string, health: ServerHealth) => void>();
  private readonly probeTimer: NodeJS.Timeout;

  constructor(private readonly options: ServerSetOptions) {
    this.probeTimer = setInterval(() => {
      for (const { server } of this.servers.values()) if (server.state.state === 'unavailable') void server.probe();
    }, options.probeIntervalMs);
    this.probeTimer.unref();
  }

  /** Puts these servers in force (checked by serverEntries). */
  apply(entries: readonly ServerEntry[]): void {
    const next = new Map<string, { server: UpstreamServer; fingerprint: string; source: ServerSummary['source'] }>();
    const started: UpstreamServer[] = [];
    for (const { config, source, credentials } of entries) {
      const fingerprint = fingerprintOf(config);
      const current = this.servers.get(config.name);
      if (current !== undefined && current.fingerprint === fingerprint) {
        next.set(config.name, { ...current, source });
        continue;
      }
      addKnownSecrets(credentials.secrets);
      const server = new UpstreamServer({
        config,
        credentials,
        fetch: this.options.fetch,
        clientInfo: this.options.clientInfo,
        log: this.options.log,
        onListChanged: (name, kind) => {
          if (this.servers.get(name)?.server === server) for (const listener of this.listeners) listener(name, kind);
        },
        onHealthChanged: (name, health) => {
          if (this.servers.get(name)?.server === server) for (const listener of this.healthListeners) listener(name, health);
        },
      });
      next.set(config.name, { server, fingerprint, source });
      started.push(server);
    }
    const previous = this.servers;
    this.servers = next;
    for (const [name, { server }] of previous) if (next.get(name)?.server !== server) void server.close();
    // Connected in the background: health shows in /readyz and `modelgate status` from start-up on.
    for (const server of started) void server.probe();
    // Every server's tools may have changed for a session's caller.
    if (started.length > 0 || previous.size !== next.size) for (const listener of this.listeners) for (const name of new Set([...previous.keys(), ...next.keys()])) listener(name, 'tools');
  }

  get(name: string): UpstreamServer | undefined {
    return this.servers.get(name)?.server;
  }

  all(): UpstreamServer[] {
    return [...this.servers.values()].map((entry) => entry.server);
  }

  summaries(): ServerSummary[] {
    return [...this.servers.values()].map(({ server, source }) => summaryOf({ config: server.config, source }, server.state));
  }

  /** Told when a server says its tools, prompts or resources changed (and when servers come or go). */
  onListChanged(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onHealthChanged(listener: (server: string, health: ServerHealth) => void): void {
    this.healthListeners.add(listener);
  }

  async close(): Promise<void> {
    clearInterval(this.probeTimer);
    await Promise.all(this.all().map((server) => server.close()));
    this.servers.clear();
  }
}
