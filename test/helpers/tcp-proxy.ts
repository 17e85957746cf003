import { createServer, Socket, type Server } from 'node:net';
import { once } from 'node:events';

/**
 * A TCP proxy in front of a real server (PostgreSQL, Redis) that a test can turn against its
 * clients the way networks and failovers do.
 */
export interface TcpProxy {
  readonly port: number;
  /** Connections refused so far. */
  readonly refusals: number;
  /** Connections stay open but carry nothing either way, new ones too (a failover in progress, a NAT that forgot the flow). */
  silence(): void;
  /** Resets every connection (RST) and refuses new ones until `restore` (the server is away). */
  refuse(): void;
  /** Passes traffic again; connections opened from now on reach the server. */
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let mode: 'pass' | 'silent' | 'refuse' = 'pass';
  let refusals = 0;
  const server: Server = createServer((client) => {
    client.on('error', () => undefined);
    if (mode === 'refuse') {
      refusals += 1;
      return void client.resetAndDestroy();
    }
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (mode === 'silent') return; // accepted, and never answered
    const upstream = new Socket();
    upstream.on('error', () => undefined);
    upstream.connect(target.port, target.host);
    sockets.add(upstream);
    client.on('data', (data: Buffer) => mode === 'pass' && upstream.write(data));
    upstream.on('data', (data: Buffer) => mode === 'pass' && client.write(data));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    get refusals() {
      return refusals;
    },
    silence() {
      mode = 'silent';
    },
    refuse() {
      mode = 'refuse';
      for (const socket of sockets) socket.resetAndDestroy();
      sockets.clear();
    },
    restore() {
      mode = 'pass';
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** The URL of `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  return proxied.toString();
}
