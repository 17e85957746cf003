import { ConfigError, checkMcpServers, type McpServerConfig } from '../config/index.js';
import { resolveCredentials, type ServerCredentials } from './credentials.js';
import type { ServerHealth } from './upstream-server.js';

export interface ServerSummary {
  name: string;
  transport: 'http' | 'stdio';
  /** Where the server is declared: the config file, or the admin API (dashboard). */
  source: 'config' | 'admin';
  health: ServerHealth;
  /** Its entry (names of variables, never their values). */
  config: McpServerConfig;
}

/** A server to serve, checked: where it is declared, and what it reads from the environment. */
export interface ServerEntry {
  config: McpServerConfig;
  source: ServerSummary['source'];
  credentials: ServerCredentials;
}

/**
 * Checks the servers of the config file and of the admin API together, before anything
 * changes: throws a ConfigError naming the field of the first problem (a bad entry, a name the
 * config file has already, a variable unset here).
 */
export function serverEntries(configured: readonly McpServerConfig[], added: readonly McpServerConfig[], env: NodeJS.ProcessEnv): ServerEntry[] {
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
  return entries.map(({ config, field, source }) => ({ config, source, credentials: resolveCredentials(config, field, env) }));
}

export function summaryOf({ config, source }: Pick<ServerEntry, 'config' | 'source'>, health: ServerHealth): ServerSummary {
  return { name: config.name, transport: config.url !== undefined ? 'http' : 'stdio', source, health, config };
}
