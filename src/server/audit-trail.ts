import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditActor, AuditChange, AuditStore } from '../audit/index.js';
import type { GatewayConfig } from '../config/index.js';
import { adminPrincipalOf, type AdminPrincipal } from './admin-auth.js';

/**
 * The audit log's side of the admin API (docs/admin-api.md#audit-log): a route that changes
 * something records the change with `recordChange` before it answers. A route that writes
 * nothing an operator audits (a model call of the playground, a validation) says why in its
 * config's `auditExempt`; any other admin route that answers a change with a success and
 * recorded none is reported in the process log, and the audit test fails on it.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Why this admin route that is not a GET records no audit entry (it changes nothing an operator audits). */
    auditExempt?: string;
  }
}

const audited = new WeakSet<FastifyRequest>();

export function actorOf(principal: AdminPrincipal): AuditActor {
  return principal.kind === 'token' ? { kind: 'token' } : { kind: 'user', id: principal.user.id, email: principal.user.email };
}

/** Records a change made by this admin request; `actor` defaults to the request's principal (sign-in names its own). */
export async function recordChange(audit: AuditStore, request: FastifyRequest, change: AuditChange, actor?: AuditActor): Promise<void> {
  await audit.record(actor ?? actorOf(adminPrincipalOf(request)), change, { requestId: request.id, address: request.ip });
  audited.add(request);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** onResponse of the admin scopes: a change answered with a success that recorded no audit entry is a fault of the route. */
export function unauditedChangeHook(report: (fields: Record<string, unknown>, message: string) => void) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (!SAFE_METHODS.has(request.method) && reply.statusCode < 400 && request.routeOptions.config.auditExempt === undefined && !audited.has(request)) {
      report({ method: request.method, route: request.routeOptions.url, requestId: request.id }, 'an admin route made a change without an audit entry');
    }
    done();
  };
}

/**
 * A reload of the configuration (SIGHUP, a changed config file) as the audit log records it:
 * the parts a reload applies, before and after (variable names, never their values).
 */
export function configReloadChange(trigger: string, file: string | undefined, before: GatewayConfig, after: GatewayConfig, process?: string): AuditChange {
  const parts = (config: GatewayConfig) => ({ routing: config.routing, mcp_servers: config.mcp.servers });
  return {
    action: 'config.reload',
    target: { type: 'config', id: file ?? null },
    before: parts(before),
    after: { ...parts(after), trigger, ...(process === undefined ? {} : { process }) },
  };
}
