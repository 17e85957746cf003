import { ConfigError } from './config-error.js';
import type { McpServerConfig } from './schema.js';

/**
 * What the schema cannot say about `mcp.servers` (docs/mcp.md): one transport each, credentials
 * only where they can be sent, and names that split `server__tool` one way only. The first
 * problem stops start-up, a reload or an admin change with a message naming the field.
 */
export function checkMcpServers(servers: readonly McpServerConfig[], fieldOf: (index: number) => string = (index) => `mcp.servers[${index}]`): void {
  const names = new Map<string, number>();
  for (const [index, server] of servers.entries()) {
    const at = fieldOf(index);
    const fail = (path: string, reason: string) => {
      throw new ConfigError(`invalid setting ${at}.${path}: ${reason}`);
    };
    // Tool names are split at the first "__": a server name holding one, or ending in "_", would make one name mean two tools.
    if (server.name.includes('__') || server.name.startsWith('_') || server.name.endsWith('_')) {
      fail('name', `"${server.name}" must not contain "__" nor start or end with "_" (tools are named <server>__<tool>)`);
    }
    const earlier = names.get(server.name);
    if (earlier !== undefined) fail('name', `"${server.name}" is already the name of ${fieldOf(earlier)}; give each server its own name`);
    names.set(server.name, index);
    if ((server.url === undefined) === (server.command === undefined)) fail('url', 'give either url (Streamable HTTP) or command (stdio), not both or neither');
    if (server.url !== undefined) {
      const url = new URL(server.url);
      if (url.username !== '' || url.password !== '') fail('url', 'must not carry credentials; use headers, tokenEnv or oauth');
      if (Object.keys(server.env).length > 0) fail('env', 'is for stdio servers (command); an HTTP server gets headers');
    } else {
      for (const setting of ['tokenEnv', 'oauth'] as const) if (server[setting] !== undefined) fail(setting, 'is for HTTP servers (url); a stdio server gets env');
      if (Object.keys(server.headers).length > 0) fail('headers', 'are for HTTP servers (url); a stdio server gets env');
    }
    if (server.tokenEnv !== undefined && server.oauth !== undefined) fail('tokenEnv', 'give a static token or oauth, not both');
    const authorization = Object.keys(server.headers).find((name) => name.toLowerCase() === 'authorization');
    if (authorization !== undefined && (server.tokenEnv !== undefined || server.oauth !== undefined)) {
      fail(`headers.${authorization}`, 'is set by tokenEnv or oauth already; give one of them');
    }
  }
}
