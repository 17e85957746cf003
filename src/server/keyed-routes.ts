import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import type { CredentialLocations } from '../formats/index.js';
import type { Scope } from '../keys/index.js';
import type { GatewayApp } from './app.js';
import { documentedPath } from './public-endpoints.js';

export type RequestHook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/**
 * Adds an onRequest hook to every route that declares a scope (a keyed route), made once per
 * route with what it needs to know about it. Cheaper than an app-wide hook: other routes
 * skip it, and nothing asks Fastify for the route's options per request (each
 * `request.routeOptions` builds a new object). Hooks run in the order they were added.
 */
export function addKeyedRouteHook(app: GatewayApp, make: (route: KeyedRoute) => RequestHook): void {
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope;
    if (scope === undefined) return;
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...existing, make({ url: route.url, path: loggedPath(route), scope, credentials: route.config?.format?.credentials })];
  });
}

/** A route's path as logged: its URL, or for a wildcard route documented under another name, that name. */
function loggedPath(route: RouteOptions): string {
  return (route.config as { swaggerTransform?: unknown } | undefined)?.swaggerTransform === undefined ? route.url : documentedPath(route);
}

/** What a keyed route's hooks know of it. */
export interface KeyedRoute {
  /** The URL it was registered with (a wildcard route's `*`). */
  url: string;
  /** Its path as the request log names it: the URL, or the name a wildcard route is documented under (`/v1beta/models/{model}:generateContent`). */
  path: string;
  scope: Scope;
  /** Where its format's clients send the key besides the headers every route reads. */
  credentials: CredentialLocations | undefined;
}
