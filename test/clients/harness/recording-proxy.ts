/**
 * A loopback HTTP proxy between a coding agent and the gateway that keeps every exchange:
 * the request exactly as the agent sent it (method, path, headers, body) and the gateway's
 * status and answer. The tests read it to say which request failed and why; captures of it
 * (secrets replaced) show what each agent really sends. WebSocket upgrades are passed through
 * as raw bytes, their answer's status line kept.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type AddressInfo } from 'node:net';

export interface Exchange {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
  responseHeaders: IncomingHttpHeaders;
  /** The answer's first bytes (a stream is cut at ANSWER_KEPT). */
  answer: string;
  /** Whether the request asked to switch to a WebSocket. */
  upgrade: boolean;
}

/** How much of each answer is kept: enough for an error body and a stream's first events. */
const ANSWER_KEPT = 64 * 1024;

export interface RecordingProxy {
  readonly url: string;
  readonly exchanges: Exchange[];
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const exchanges: Exchange[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const exchange: Exchange = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: body.toString('utf8'), status: 0, responseHeaders: {}, answer: '', upgrade: false };
    exchanges.push(exchange);
    const forwarded = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      exchange.status = answer.statusCode ?? 0;
      exchange.responseHeaders = answer.headers;
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on('data', (chunk: Buffer) => {
        if (exchange.answer.length < ANSWER_KEPT) exchange.answer += chunk.toString('utf8');
        res.write(chunk);
      });
      answer.on('end', () => res.end());
      answer.on('error', () => res.destroy());
    });
    forwarded.on('error', (error) => {
      exchange.answer = `proxy: ${error.message}`;
      res.destroy();
    });
    forwarded.end(body);
  });
  server.on('upgrade', (req, socket, head) => {
    const exchange: Exchange = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: '', status: 0, responseHeaders: {}, answer: '', upgrade: true };
    exchanges.push(exchange);
    const gateway = connect(Number(upstream.port), upstream.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`, ...Object.entries(req.headers).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((item) => `${name}: ${item}`))];
      gateway.write(`${lines.join('\r\n')}\r\n\r\n`);
      gateway.write(head);
      gateway.once('data', (chunk: Buffer) => {
        const text = chunk.toString('latin1');
        exchange.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
        exchange.answer = text.slice(0, ANSWER_KEPT);
      });
      gateway.pipe(socket);
      socket.pipe(gateway);
    });
    const end = () => {
      gateway.destroy();
      socket.destroy();
    };
    gateway.on('error', end);
    socket.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
