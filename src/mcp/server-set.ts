import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ConfigError, checkMcpServers, type McpServerConfig } from '../config/index.js';
import { addKnownSecrets } from '../redaction/index.js';
import { resolveCredentials } from './credentials.js';
import { UpstreamServer, type ListKind, type ServerHealth, type UpstreamServerOptions } from './upstream-server.js';

export interface ServerSetOptions {
  /** Where `{ env: NAME }` values are read (the gateway's environment). */
  env: NodeJS.ProcessEnv;
  fetch: FetchLike;
  clientInfo: { name: string; version: string };
  log: UpstreamServerOptions['log'];
  /** How often servers that are unavailable are tried again in the background. */
  probeIntervalMs: number;
}

export interface ServerSummary {
  name: string;
  transport: 'http' | 'stdio';
  /** Where the server is declared: the config file, or the admin API (dashboard). */
  source: 'config' | 'admin';
  health: ServerHealth;
  /** Its entry (names of variables, never their values). */
  config: McpServerConfig;
}

type Listener = (server: string, kind: ListKind) => void;

/** What a server's entry is compared by on reload: a changed entry gets a new connection. */
const fingerprintOf = (server: McpServerConfig) => JSON.stringify(server);

/**
 * The upstream servers in force: the config file's `mcp.servers` and those an administrator
 * added. Replaced whole on reload (SIGHUP, a changed file, an admin change); a server whose
 * entry did not change keeps its connection, a removed one is closed. Every problem — a
 * missing variable, a bad entry — is found before anything changes.
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

  /** Applies the servers of the config file and of the admin API; throws a ConfigError naming the field when one is invalid. */
  apply(configured: readonly McpServerConfig[], added: readonly McpServerConfig[] = []): void {
    const entries = [
      ...configured.map((config, index) => ({ config, field: `mcp.servers[${index}]`, source: 'config' as const })),
      ...added.map((config) => ({ config, field: `MCP server "${config.name}"`, source: 'admin' as const })),
    ];
    checkMcpServers(configured);
    checkMcpServers(added, (index) => `MCP server "${added[index]!.name}"`);
    const taken = new Set(configured.map((server) => server.name));
    for (const { config, field } of entries.slice(configured.length)) {
      if (taken.has(config.name)) throw new ConfigError(`invalid setting ${field}.name: the config file declares a server named "${config.name}" already`);
      taken.add(config.name);
    }
    const credentials = entries.map(({ config, field }) => resolveCredentials(config, field, this.options.env));
    const next = new Map<string, { server: UpstreamServer; fingerprint: string; source: ServerSummary['source'] }>();
    const started: UpstreamServer[] = [];
    for (const [index, { config, source }] of entries.entries()) {
      const fingerprint = fingerprintOf(config);
      const current = this.servers.get(config.name);
      if (current !== undefined && current.fingerprint === fingerprint) {
        next.set(config.name, { ...current, source });
        continue;
      }
      addKnownSecrets(credentials[index]!.secrets);
      const server = new UpstreamServer({
        config,
        credentials: credentials[index]!,
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
    return [...this.servers.values()].map(({ server, source }) => ({
      name: server.name,
      transport: server.config.url !== undefined ? 'http' : 'stdio',
      source,
      health: server.state,
      config: server.config,
    }));
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
