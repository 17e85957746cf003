import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Scope } from '../keys/index.js';
import type { GatewayApp } from './app.js';

export type RequestHook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/**
 * Adds an onRequest hook to every route that declares a scope (a keyed route), made once per
 * route with what it needs to know about it. Cheaper than an app-wide hook: other routes
 * skip it, and nothing asks Fastify for the route's options per request (each
 * `request.routeOptions` builds a new object). Hooks run in the order they were added.
 */
export function addKeyedRouteHook(app: GatewayApp, make: (route: { url: string; scope: Scope }) => RequestHook): void {
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope;
    if (scope === undefined) return;
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...existing, make({ url: route.url, scope })];
  });
}
