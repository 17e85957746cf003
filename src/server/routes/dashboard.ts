import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/index.js';
import type { RouteModule } from '../app.js';

/**
 * The dashboard (docs/dashboard.md): the static files `npm install` built into dist/web, served
 * under /dashboard/. Hashed assets are cached for a year; index.html never, so a new build is
 * picked up at the next load. Every path under /dashboard/ that is not a file is the app
 * (its router draws the page). All of it comes from this gateway, which the
 * Content-Security-Policy below holds the browser to.
 */

/** Where the dashboard is served. */
export const DASHBOARD_PATH = '/dashboard/';

// src/server/routes and dist/server/routes are both three levels below the package root.
const WEB_ROOT = fileURLToPath(new URL('../../../dist/web/', import.meta.url));

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

export const dashboardRoutes: RouteModule = async (app) => {
  app.get('/dashboard', { schema: { hide: true } }, async (_request, reply) => reply.redirect(DASHBOARD_PATH, 301));

  if (!existsSync(`${WEB_ROOT}index.html`)) {
    app.get(`${DASHBOARD_PATH}*`, { schema: { hide: true } }, async () => {
      throw new GatewayError('not_found', 'The dashboard is not built. Run npm install (or npm run build) in the gateway’s directory and restart it.');
    });
    return;
  }

  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.headers(SECURITY_HEADERS);
      return payload;
    });
    await scope.register(fastifyStatic, {
      root: WEB_ROOT,
      prefix: DASHBOARD_PATH,
      wildcard: false,
      index: false,
      cacheControl: false,
      setHeaders(response, path) {
        const hashed = path.includes('/assets/');
        response.setHeader('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
    // The app's own paths (/dashboard/keys, /dashboard/logs/req_…): index.html, which routes them.
    const page = async (_request: FastifyRequest, reply: FastifyReply) => reply.header('cache-control', 'no-cache').sendFile('index.html');
    scope.get(DASHBOARD_PATH, { schema: { hide: true } }, page);
    scope.get(`${DASHBOARD_PATH}*`, { schema: { hide: true } }, page);
  });
};
