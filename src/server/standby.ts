import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../errors/index.js';
import { randomHex } from '../crypto/index.js';
import { describeStorage, type GatewayConfig } from '../config/index.js';

/** What the standby server says while the gateway waits for its database. */
export interface StandbyWait {
  /** The database, in words (describeStorage): never its URL or credentials. */
  database: string;
  /** Whether Redis is configured: readiness then reports it unchecked, not absent. */
  redisConfigured: boolean;
}

/**
 * The listener of a gateway whose database does not answer at start-up (decisions §11): it
 * listens at once, so orchestrators see a live process that is not ready yet, instead of a
 * port that refuses. `GET /healthz` is 200, `GET /readyz` 503 naming what it waits for, and
 * every other request 503 `storage_unavailable` (the §4 body, with `Retry-After` and
 * `x-request-id`). Once the database answers, the gateway closes it and its own app listens
 * on the same address.
 */
export class StandbyServer {
  private constructor(
    private readonly server: Server,
    readonly host: string,
    readonly port: number,
  ) {}

  static async start(host: string, port: number, wait: StandbyWait): Promise<StandbyServer> {
    const server = createServer((request, response) => {
      const path = (request.url ?? '/').split('?')[0];
      const requestId = `req_${randomHex(16)}`;
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        const text = JSON.stringify(body);
        response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'x-request-id': requestId, ...headers });
        response.end(text);
      };
      if (request.method === 'GET' && path === '/healthz') return send(200, { status: 'alive' });
      if (request.method === 'GET' && path === '/readyz') {
        return send(503, {
          status: 'not_ready',
          checks: { storage: 'waiting', redis: wait.redisConfigured ? 'unchecked' : 'not_configured', providers: 'unchecked' },
          missing: [`waiting for the database (${wait.database}) to answer; the gateway migrates and serves as soon as it does (check DATABASE_URL and that the database is up)`],
        });
      }
      const error = new GatewayError('storage_unavailable', 'The gateway is starting and waits for its database; it cannot serve requests yet. Try again shortly.', { retryAfterSeconds: 1 });
      send(error.status, error.toBody(requestId), { 'retry-after': '1' });
    });
    server.keepAliveTimeout = 1_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    return new StandbyServer(server, host, address.port);
  }

  get url(): string {
    const address = this.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  /** Stops listening and ends its connections, so the gateway's own app can take the address. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/** The wait for the database at start-up, with a standby listener from its first failure on. */
export interface StandbyWhileWaiting {
  /** For whenStorageAnswers: logs the wait (`log`) and, the first time, starts listening. */
  waiting(error: unknown, retryInMs: number): Promise<void>;
  /** Closes the standby listener, if one started; resolves with the port it had (the app takes it over). */
  close(): Promise<number | undefined>;
}

/**
 * Listens on the configured address while the database does not answer (`StandbyServer`),
 * from the first failed attempt on; `onListening` is told its URL.
 */
export function standbyWhileWaiting(
  config: GatewayConfig,
  log: (error: unknown, retryInMs: number) => void,
  onListening: (url: string) => void,
): StandbyWhileWaiting {
  let standby: StandbyServer | undefined;
  return {
    async waiting(error, retryInMs) {
      log(error, retryInMs);
      if (standby !== undefined) return;
      standby = await StandbyServer.start(config.server.host, config.server.port, { database: describeStorage(config), redisConfigured: config.redisUrl !== undefined });
      onListening(standby.url);
    },
    async close() {
      const closing = standby;
      standby = undefined;
      await closing?.close();
      return closing?.port;
    },
  };
}
