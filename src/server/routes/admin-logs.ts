import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/index.js';
import {
  csvHeader,
  csvLine,
  encodeCursor,
  parseCursor,
  parseExportFormat,
  parseGrouping,
  parseLogFilter,
  parsePageSize,
  redactValue,
  REQUEST_ID_PATTERN,
  toDetailView,
  toSummaryView,
  toUsageView,
  type LogAccess,
  type LogDetailView,
  type StoredLogRow,
} from '../../logs/index.js';
import { EVERY_ROLE_MAY_CALL, isAdministrator } from '../admin-auth.js';
import type { RouteModule } from '../app.js';
import type { GatewayContext } from '../context.js';
import { ADMIN_SCHEMA, projectScopeOf, registerAdminRoutes, scopedProjectIds } from './admin-scope.js';

/**
 * The request log through the admin API: list with filters, one record in full, a streamed
 * JSONL export and usage aggregates. Authorised by the admin token, hidden from the public
 * OpenAPI document.
 */

const Text = Type.Optional(Type.String());
const FILTERS = { key: Text, key_name: Text, model: Text, project: Text, since: Text, until: Text, status: Text, endpoint: Text, platform: Text };
const ListQuery = Type.Object({ ...FILTERS, limit: Text, cursor: Text }, { additionalProperties: false });
const ExportQuery = Type.Object({ ...FILTERS, format: Text }, { additionalProperties: false });
const UsageQuery = Type.Object({ ...FILTERS, by: Text }, { additionalProperties: false });
const RecordParams = Type.Object({ requestId: Type.String({ pattern: REQUEST_ID_PATTERN }) });

/**
 * The records a request may read: every project's, or a team admin's teams' projects' only
 * (admin-scope.ts). The store applies it to every query whatever the filters say.
 */
async function accessOf(request: FastifyRequest, context: GatewayContext): Promise<LogAccess> {
  const projectIds = scopedProjectIds(await projectScopeOf(request, context));
  return projectIds === null ? { projectId: null } : { projectId: null, projectIds };
}

/**
 * Upstream detail (provider status and message) is for administrators; a viewer sees the record
 * without it, but with the fields a translation left out (`droppedFields`): the caller's own field
 * names, nothing of the provider's.
 */
function detailViewFor(request: FastifyRequest): (row: StoredLogRow) => LogDetailView {
  if (isAdministrator(request)) return toDetailView;
  return (row) => {
    const view = toDetailView(row);
    const dropped = view.detail?.droppedFields;
    return { ...view, detail: Array.isArray(dropped) ? { droppedFields: dropped } : null };
  };
}

export const adminLogsRoutes: RouteModule = async (app, context) => {
  const { store } = context.logs;

  await registerAdminRoutes(app, context, (admin) => {
    admin.get(
      '/logs',
      { config: EVERY_ROLE_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'List request log records, newest first', querystring: ListQuery } },
      async (request) => {
        const { query } = request;
        const filter = parseLogFilter(query);
        const { rows, next } = await store.list(filter, await accessOf(request, context), parsePageSize(query.limit), parseCursor(query.cursor));
        const names = await store.keyNames(rows.flatMap((row) => (row.key_id === null ? [] : [row.key_id])));
        return {
          object: 'list' as const,
          data: rows.map((row) => ({ ...toSummaryView(row), key_name: row.key_id === null ? null : (names.get(row.key_id) ?? null) })),
          has_more: next !== null,
          next_cursor: next === null ? null : encodeCursor(next),
        };
      },
    );

    admin.get(
      '/logs/export',
      { config: EVERY_ROLE_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'Export request log records: in full as JSON lines, or as CSV without payloads', querystring: ExportQuery } },
      async (request, reply) => {
        const format = parseExportFormat(request.query.format);
        const filter = parseLogFilter(request.query);
        const rows = store.export(filter, await accessOf(request, context));
        const view = detailViewFor(request);
        // Rows were redacted when written; exports go through the same redaction again so a
        // record written before a rule existed never leaves the gateway raw.
        const lines = async function* () {
          if (format === 'csv') yield csvHeader();
          for await (const row of rows) {
            const redacted = redactValue(view(row)) as LogDetailView;
            yield format === 'csv' ? csvLine(redacted) : `${JSON.stringify(redacted)}\n`;
          }
        };
        return reply
          .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
          .header('content-disposition', `attachment; filename="modelgate-logs.${format}"`)
          .send(Readable.from(lines()));
      },
    );

    admin.get(
      '/logs/storage',
      { schema: { ...ADMIN_SCHEMA, summary: 'Size of the request log on disk, its counts and its size cap' } },
      async () => {
        const size = await store.size();
        const maxBytes = context.config.logs.maxSizeMb * 1024 * 1024;
        return {
          object: 'log_storage' as const,
          database: store.kind,
          database_bytes: size.databaseBytes,
          records: size.records,
          payload_bytes: size.payloadBytes,
          counted_bytes: size.payloadBytes + size.records * store.recordOverheadBytes,
          max_bytes: maxBytes === 0 ? null : maxBytes,
          reclaims_free_pages: store.kind === 'sqlite' ? store.reclaimsFreePages() : null,
        };
      },
    );

    admin.get(
      '/logs/:requestId',
      { config: EVERY_ROLE_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'One request log record with payloads and upstream detail', params: RecordParams } },
      async (request) => {
        const row = await store.get(request.params.requestId, await accessOf(request, context));
        if (row === undefined) {
          throw new GatewayError(
            'not_found',
            `There is no log record with request id ${request.params.requestId}. Ids come from the x-request-id response header; records past the retention period are deleted.`,
          );
        }
        const names = await store.keyNames(row.key_id === null ? [] : [row.key_id]);
        return { ...detailViewFor(request)(row), key_name: row.key_id === null ? null : (names.get(row.key_id) ?? null) };
      },
    );

    admin.get(
      '/usage',
      { config: EVERY_ROLE_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'Requests, tokens and cost per day, model, key, project, team, agent or tag', querystring: UsageQuery } },
      async (request) => {
        const grouping = parseGrouping(request.query.by);
        const filter = parseLogFilter(request.query);
        const data = (await store.usage(grouping, filter, await accessOf(request, context))).map((row) => toUsageView(grouping, row));
        return {
          object: 'list' as const,
          by: grouping,
          since: filter.since === undefined ? null : new Date(filter.since).toISOString(),
          until: filter.until === undefined ? null : new Date(filter.until).toISOString(),
          data,
        };
      },
    );
  });
};
