import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { auditCsvHeader, auditCsvLine, parseAuditCursor, toAuditView, type AuditFilter } from '../../audit/index.js';
import { invalidBody } from '../../errors/index.js';
import { parseTime } from '../../logs/index.js';
import type { RouteModule } from '../app.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';

/**
 * The audit log through the admin API (docs/admin-api.md#audit-log): newest first a page at a
 * time with filters, and the same filters exported as JSON lines or CSV. Administrators only:
 * the entries show who changed what.
 */

const Filter = Type.Optional(Type.String({ minLength: 1, maxLength: 400 }));
const FILTERS = {
  actor: Filter,
  action: Type.Optional(Type.String({ pattern: '^[a-z_]+(\\.[a-z_]+)?$', maxLength: 100, description: 'an action (key.revoke), or a target type for all its actions (key)' })),
  target: Filter,
  target_type: Type.Optional(Type.String({ pattern: '^[a-z_]+$', maxLength: 100 })),
  since: Filter,
  until: Filter,
};
const ListQuery = Type.Object(
  {
    ...FILTERS,
    limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]?|[1-4][0-9][0-9]|500)$', description: 'entries per page, 1 to 500 (default 50)' })),
    cursor: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
const ExportQuery = Type.Object(
  { ...FILTERS, format: Type.Optional(Type.Union([Type.Literal('jsonl'), Type.Literal('csv')], { description: 'jsonl (default) or csv' })) },
  { additionalProperties: false },
);

const DEFAULT_PAGE = 50;

type FilterQuery = { actor?: string; action?: string; target?: string; target_type?: string; since?: string; until?: string };

function filterOf(query: FilterQuery, now: number = Date.now()): AuditFilter {
  const filter: AuditFilter = {
    ...(query.actor !== undefined ? { actor: query.actor } : {}),
    ...(query.action !== undefined ? { action: query.action } : {}),
    ...(query.target !== undefined ? { target: query.target } : {}),
    ...(query.target_type !== undefined ? { targetType: query.target_type } : {}),
    ...(query.since !== undefined ? { since: parseTime(query.since, 'since', now) } : {}),
    ...(query.until !== undefined ? { until: parseTime(query.until, 'until', now) } : {}),
  };
  if (filter.since !== undefined && filter.until !== undefined && filter.until <= filter.since) throw invalidBody('until must be later than since.', 'until');
  return filter;
}

export const adminAuditRoutes: RouteModule = async (app, context) => {
  const { audit } = context;
  await registerAdminRoutes(app, context, (admin) => {
    admin.get(
      '/audit',
      { schema: { ...ADMIN_SCHEMA, summary: 'List audit log entries, newest first: who changed what, when, before and after', querystring: ListQuery } },
      async (request) => {
        const { query } = request;
        const { rows, next } = await audit.list(filterOf(query), query.limit === undefined ? DEFAULT_PAGE : Number(query.limit), parseAuditCursor(query.cursor));
        return { object: 'list' as const, data: rows.map(toAuditView), has_more: next !== null, next_cursor: next };
      },
    );

    admin.get(
      '/audit/export',
      { schema: { ...ADMIN_SCHEMA, summary: 'Export matching audit log entries, newest first, as JSON lines or CSV', querystring: ExportQuery } },
      async (request, reply) => {
        const format = request.query.format ?? 'jsonl';
        const rows = audit.export(filterOf(request.query));
        const lines = async function* () {
          if (format === 'csv') yield auditCsvHeader();
          for await (const row of rows) {
            const view = toAuditView(row);
            yield format === 'csv' ? auditCsvLine(view) : `${JSON.stringify(view)}\n`;
          }
        };
        return reply
          .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
          .header('content-disposition', `attachment; filename="modelgate-audit.${format}"`)
          .send(Readable.from(lines()));
      },
    );
  });
};
