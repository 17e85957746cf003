import type { Readable } from 'node:stream';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Agent, fetch as undiciFetch } from 'undici';
import type { McpServerConfig } from '../config/index.js';
import { AddressRefusedError, checkedLookup, literalAddressRefusal, type AddressPolicy, type Resolver } from '../network/index.js';
import { ClientCredentialsTokens } from './client-credentials.js';
import type { ServerCredentials } from './credentials.js';

const CONNECT_TIMEOUT_MS = 5_000;

/**
 * fetch for one server's URLs (MCP endpoint, token endpoint): every address a host resolves to
 * passes the address policy (mcp.allowAddresses), and the socket connects to exactly the
 * address checked.
 */
export function policedFetch(policy: AddressPolicy, resolver?: Resolver): { fetch: FetchLike; close: () => Promise<void> } {
  const dispatcher = new Agent({ connect: { lookup: checkedLookup(policy, resolver), timeout: CONNECT_TIMEOUT_MS }, connections: 16 });
  const fetch: FetchLike = async (url, init) => {
    const target = new URL(String(url));
    const refusal = literalAddressRefusal(policy, target);
    if (refusal !== null) throw new AddressRefusedError(`${target.host} refused: ${refusal}`);
    return (await undiciFetch(url, { ...(init as object), dispatcher })) as unknown as Response;
  };
  return { fetch, close: () => dispatcher.close() };
}

/** Adds the bearer of the client credentials grant; a 401 gets one more try with a new token. */
export function withClientCredentials(fetch: FetchLike, tokens: ClientCredentialsTokens): FetchLike {
  const send = async (url: string | URL, init: RequestInit | undefined, token: string) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(url, { ...init, headers });
  };
  return async (url, init) => {
    const token = await tokens.token();
    const response = await send(url, init, token);
    if (response.status !== 401) return response;
    tokens.invalidate(token);
    await response.body?.cancel();
    return send(url, init, await tokens.token());
  };
}

export interface UpstreamTransport {
  transport: Transport;
  /** The stderr of a stdio server's process (read into the process log), null for HTTP. */
  stderr: Readable | null;
}

/** The fetch of one server: policed, with the client credentials grant's bearer when it has oauth. */
export function serverFetch(credentials: ServerCredentials, fetch: FetchLike): FetchLike {
  return credentials.oauth === undefined ? fetch : withClientCredentials(fetch, new ClientCredentialsTokens(credentials.oauth, fetch));
}

/** A new transport to the server: Streamable HTTP through the server's fetch, or a stdio child process. */
export function upstreamTransport(server: McpServerConfig, credentials: ServerCredentials, fetch: FetchLike): UpstreamTransport {
  if (server.url !== undefined) {
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      fetch,
      requestInit: { headers: credentials.headers },
      // A server that went away is reported, not waited for: the next request connects again.
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
    });
    return { transport, stderr: null };
  }
  const [command, ...args] = server.command!;
  const transport = new StdioClientTransport({ command: command!, args, env: { ...getDefaultEnvironment(), ...credentials.env }, stderr: 'pipe' });
  return { transport, stderr: transport.stderr as Readable | null };
}
