// A reference between the bare proxy and modelgate: the bare proxy's work (the body passed
// through, the upstream's answer written as it comes) inside Fastify, the framework modelgate
// is built on, with modelgate's node flags. No auth, no parsing, no logging: the gap between
// it and the bare proxy is what the framework alone costs. Run with `npm run bench -- --fastify`.
import Fastify from 'fastify';
import { Pool } from 'undici';

const pool = new Pool(process.env.UPSTREAM, { connections: 128, keepAliveTimeout: 60_000 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length']);

// Bodies as large as modelgate takes by default (the image scenario sends 1.4 MB).
const app = Fastify({ logger: false, keepAliveTimeout: 60_000, bodyLimit: 20 * 1024 * 1024 });
// The body as its bytes, as a pass-through proxy needs it.
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/*', async (request, reply) => {
  const headers = {};
  for (const [name, value] of Object.entries(request.headers)) if (!HOP.has(name)) headers[name] = value;
  const response = await pool.request({ method: 'POST', path: request.url, headers, body: request.body });
  for (const [name, value] of Object.entries(response.headers)) if (!HOP.has(name)) reply.header(name, value);
  return reply.code(response.statusCode).send(response.body);
});
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ port: app.server.address().port })}\n`);
