// The floor any Node gateway is measured against: node:http in, an undici pool out, no auth,
// no parsing beyond forwarding, no logging.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const upstream = process.env.UPSTREAM;
const pool = new Pool(upstream, { connections: 128, keepAliveTimeout: 60_000 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length']);

const server = createServer(async (req, res) => {
  try {
    const headers = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP.has(name)) headers[name] = value;
    const response = await pool.request({ method: req.method, path: req.url, headers, body: req.method === 'GET' ? undefined : req });
    const out = {};
    for (const [name, value] of Object.entries(response.headers)) if (!HOP.has(name)) out[name] = value;
    res.writeHead(response.statusCode, out);
    for await (const chunk of response.body) res.write(chunk);
    res.end();
  } catch {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
