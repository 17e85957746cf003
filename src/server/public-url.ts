import type { FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config/index.js';

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * The base URL of the URLs the gateway hands out (its documentation, agent assets): the
 * configured `server.publicUrl`, else the listen address. Never the request's `Host` or
 * `X-Forwarded-*`: a caller could point them anywhere, and a client that follows an asset
 * URL sends its key there. On a wildcard listen address, the local address the connection
 * reached (the kernel's, which no header changes).
 */
export function publicBaseUrl(config: GatewayConfig, request: FastifyRequest): string {
  if (config.server.publicUrl !== undefined) return config.server.publicUrl;
  const { localAddress, localPort } = request.socket;
  const host = WILDCARD_HOSTS.has(config.server.host) ? (localAddress ?? '127.0.0.1') : config.server.host;
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${bracketed}:${localPort ?? config.server.port}`;
}
