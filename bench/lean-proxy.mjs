// A reference below the bare proxy: what the transport alone costs in Node when it is done
// the way modelgate does it. node:http in, undici's dispatch API out (no response stream
// object), the request body collected and sent with its length, the response's chunks
// written as they come. No auth, no parsing, no logging. Run with `npm run bench -- --lean`.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const pool = new Pool(process.env.UPSTREAM, { connections: 128, keepAliveTimeout: 60_000 });
const FORWARDED = ['content-type', 'content-length', 'cache-control'];

function forward(res) {
  return {
    onRequestStart() {},
    onResponseStart(_controller, statusCode, headers) {
      const out = {};
      for (const name of FORWARDED) if (headers[name] !== undefined) out[name] = headers[name];
      res.writeHead(statusCode, out);
    },
    onResponseData(_controller, chunk) {
      res.write(chunk);
    },
    onResponseEnd() {
      res.end();
    },
    onResponseError() {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    },
  };
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const headers = { 'content-type': req.headers['content-type'] ?? 'application/json' };
    pool.dispatch({ method: req.method, path: req.url, headers, body: req.method === 'GET' ? undefined : body }, forward(res));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
