import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { API_REFERENCE_PATH, OPENAPI_DOCUMENT_PATH } from './docs-branding.js';
import type { EndpointSchema } from './routes/status-schemas.js';

export type PublicEndpoint = Static<typeof EndpointSchema>;

/** The reference pages, served by the documentation plugin rather than a route module. */
const REFERENCE_PAGES: readonly PublicEndpoint[] = [
  { method: 'GET', path: OPENAPI_DOCUMENT_PATH, auth: 'none', scope: null, description: 'OpenAPI 3.1 description of this API.' },
  { method: 'GET', path: API_REFERENCE_PATH, auth: 'none', scope: null, description: `Interactive API reference rendered from ${OPENAPI_DOCUMENT_PATH}.` },
];

/**
 * The public API's endpoints, read from the route table as routes are added: every route the
 * OpenAPI document shows outside the admin API, with the scope it needs and its description.
 * Called before any route is registered, so the docs metadata lists what the OpenAPI document
 * shows and a new route appears in both.
 */
export function collectPublicEndpoints(app: FastifyInstance): readonly PublicEndpoint[] {
  const endpoints: PublicEndpoint[] = [...REFERENCE_PAGES];
  app.addHook('onRoute', (route) => {
    const endpoint = publicEndpointOf(route);
    if (endpoint !== null) endpoints.push(endpoint);
  });
  return endpoints;
}

function publicEndpointOf(route: RouteOptions): PublicEndpoint | null {
  const schema = route.schema as { hide?: boolean; tags?: readonly string[]; description?: string; summary?: string } | undefined;
  const methods = [route.method].flat().filter((method) => method !== 'HEAD');
  if (schema === undefined || schema.hide === true || schema.tags?.includes('admin') === true || methods.length !== 1) return null;
  const path = documentedPath(route);
  // The gateway's own API under /v1/, and every route of a public API format wherever its vendor puts it (/v1beta/…).
  // (The playground relays the model routes under /admin/: those are the admin API's, whatever
  // path their documentation transform gives them.)
  if (route.url.startsWith('/admin/')) return null;
  if (path !== '/' && !path.startsWith('/v1/') && route.config?.format === undefined) return null;
  const scope = route.config?.scope ?? null;
  return { method: methods[0]!, path, auth: scope === null ? 'none' : 'api_key', scope, description: [schema.summary, schema.description].filter((text) => text !== undefined).join('. ') };
}

/** The path as the OpenAPI document writes it: `{name}` parameters, a wildcard route under the name it documents. */
export function documentedPath(route: Pick<RouteOptions, 'url' | 'schema' | 'config'>): string {
  const transform = (route.config as { swaggerTransform?: unknown } | undefined)?.swaggerTransform;
  const url = typeof transform === 'function' ? ((transform as (input: { schema: unknown; url: string }) => { url?: string })({ schema: route.schema, url: route.url }).url ?? route.url) : route.url;
  // `::` is a colon of the path itself, and a parameter may carry its pattern (`/v1beta/models/:model(.+)::generateContent`), as the OpenAPI plugin reads them.
  return url.replace(/::|:([A-Za-z0-9_]+)(?:\([^)]*\))?/g, (_match, name: string | undefined) => (name === undefined ? ':' : `{${name}}`));
}
