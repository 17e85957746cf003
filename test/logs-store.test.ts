import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openStorage, type Database, type Storage } from '../src/storage/index.js';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { EXPORT_BATCH_BYTES } from '../src/logs/log-export.js';
import { LogStore, RetentionJob, SizeCapJob, parseCursor, type LogCursor, type RequestLogRow } from '../src/logs/index.js';
import { listRecords } from '../src/logs/log-queries.js';
import { logRow } from './helpers/log-rows.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';
import pino from 'pino';

const DAY = 86_400_000;
const NOW = Date.UTC(2025, 4, 20, 12, 0, 0); // 2025-05-20T12:00Z

function row(id: string, overrides: Partial<RequestLogRow> = {}): RequestLogRow {
  return logRow(id, { started_at: NOW, project_id: 'alpha', requested_model: 'service-1', request_payload: '{"messages":[]}', response_payload: '{"choices":[]}' }, overrides);
}

const ALL = { projectId: null };

for (const backend of STORAGE_BACKENDS) {
  describe(`request log store on ${backend.name}`, { skip: backend.skip }, () => {
    let shared: SharedStorage;
    let storage: Storage;
    let store: LogStore;

    before(async () => {
      shared = await backend.create();
      storage = await openStorage({ databaseUrl: shared.env.DATABASE_URL, dataDir: shared.dataDir });
      store = new LogStore(storage);
      await store.insertBatch([
        row('r1', { started_at: NOW - 3 * DAY }),
        row('r2', { started_at: NOW - DAY, status: 429, error_code: 'rate_limit_exceeded', total_tokens: null, prompt_tokens: null, completion_tokens: null, cost_micro_usd: 0 }),
        row('r3', { started_at: NOW - 1000, key_id: 'key_b', requested_model: 'gpt-4o-mini', resolved_model: 'gpt-4o-mini', cost_micro_usd: 250 }),
        row('r4', { started_at: NOW - 500, project_id: 'beta', key_id: 'key_c', cost_micro_usd: null, resolved_model: 'gpt-9-preview' }),
        row('r5', { started_at: NOW - 500, total_tokens: 40, cost_micro_usd: 1_000_001 }),
      ]);
    });
    after(async () => {
      await storage.close();
      await shared.dispose();
    });

    test('a batch is one transaction, and a record written twice keeps its first row', async () => {
      await store.insertBatch([row('dup', { started_at: NOW - 10 * DAY, status: 200 })]);
      await store.insertBatch([row('dup', { started_at: NOW - 10 * DAY, status: 500 })]);
      assert.equal((await store.get('dup', ALL))?.status, 200);
      await store.deleteOlderThan(NOW - 9 * DAY, 10);
    });

    test('a batch of any size is written whole, and a row the database refuses leaves out only itself', async () => {
      // 123 rows: on PostgreSQL one statement of 100 rows, two of 10 and three of 1.
      const old = NOW - 20 * DAY;
      const rows = Array.from({ length: 123 }, (_, index) => row(`batch-${index}`, { started_at: old, latency_ms: index }));
      rows[110] = row('batch-5', { started_at: old, latency_ms: 999 }); // a repeat of a row earlier in the batch
      await store.insertBatch(rows);
      try {
        const stored = await store.list({ until: old + 1 }, ALL, 200);
        assert.equal(stored.rows.length, 122);
        assert.deepEqual(
          stored.rows.map((found) => found.latency_ms).sort((a, b) => a - b),
          Array.from({ length: 123 }, (_, index) => index).filter((index) => index !== 110),
        );
        // Rows the database refuses in a batch of 13 (endpoint is NOT NULL; U+0000 in text and a
        // fraction in an integer column, which PostgreSQL refuses and SQLite stores): the batch
        // fails, its rows are written one at a time, and only the refused ones are left out and reported.
        const mixed = Array.from({ length: 13 }, (_, index) => row(`mixed-${index}`, { started_at: old }));
        mixed[3] = row('mixed-3', { started_at: old, endpoint: null as unknown as string });
        mixed[7] = row('mixed-7', { started_at: old, platform: 'a\u0000b' });
        mixed[12] = row('mixed-12', { started_at: old, prompt_tokens: 12.5 });
        const refused = await store.insertBatch(mixed);
        const refusedIds = backend.name === 'PostgreSQL' ? ['mixed-3', 'mixed-7', 'mixed-12'] : ['mixed-3'];
        assert.deepEqual(refused.map((found) => found.requestId), refusedIds);
        assert.ok(refused.every((found) => found.reason.length > 0));
        const kept = (await store.list({ until: old + 1 }, ALL, 200)).rows.filter((found) => found.request_id.startsWith('mixed-'));
        assert.equal(kept.length, 13 - refusedIds.length);
        // The store keeps working after the refusal.
        await store.insertBatch([row('after-failure', { started_at: old })]);
        assert.ok((await store.get('after-failure', ALL)) !== undefined);
      } finally {
        await store.deleteOlderThan(NOW - 19 * DAY, 500);
      }
    });

    test('paging cannot skip a record written after a page was read (a long stream that ends later)', async () => {
      const project = { projectId: 'paging' };
      const at = (id: string, ago: number) => row(id, { project_id: 'paging', started_at: NOW - 60 * DAY - ago });
      await store.insertBatch([at('page-b', 90), at('page-c', 70), at('page-d', 60)]);
      const first = await store.list(project, ALL, 2);
      assert.deepEqual(first.rows.map((found) => found.request_id), ['page-d', 'page-c']);
      // A stream that started between page-c and page-d ends now: its record is written last.
      await store.insertBatch([at('page-stream', 65)]);
      const later: string[] = [];
      for (let cursor = first.next; cursor !== null; ) {
        const page = await store.list(project, ALL, 2, cursor);
        later.push(...page.rows.map((found) => found.request_id));
        cursor = page.next;
      }
      // A poll reads the first page again, down to the first record it has seen.
      const seen = new Set(first.rows.map((found) => found.request_id));
      const polled = (await store.list(project, ALL, 10)).rows.map((found) => found.request_id);
      const fresh = polled.slice(0, polled.findIndex((id) => seen.has(id)));
      assert.deepEqual(fresh, ['page-stream']);
      assert.deepEqual(later, ['page-b']);
      await store.deleteOlderThan(NOW - 50 * DAY, 100);
    });

    test('a batch waits for another instance to commit its batch: the write sequence is commit order', { skip: backend.name === 'PostgreSQL' ? false : 'instances share PostgreSQL; SQLite has one writer at a time' }, async () => {
      const other = new pg.Client({ connectionString: shared.env.DATABASE_URL });
      await other.connect();
      try {
        // Another instance in the middle of its batch: it took its sequence number and has not committed.
        await other.query('begin');
        const held = Number((await other.query('update request_log_totals set last_seq = last_seq + 1 where id = 1 returning last_seq')).rows[0].last_seq);
        await other.query(`insert into request_logs (request_id, seq, started_at, endpoint, status, latency_ms, streaming) values ('held-batch', $1, $2, '/v1/chat/completions', 200, 1, 0)`, [held, NOW - 60 * DAY]);
        const writing = store.insertBatch([row('after-held', { started_at: NOW - 60 * DAY })]);
        // This batch waits for the other one's lock (seen from a third connection).
        for (;;) {
          const waiting = await storage.pg!.query(`select count(*) as count from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
          if (Number(waiting.rows[0].count) > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await other.query('commit');
        await writing;
        const written = await store.get('after-held', ALL);
        assert.ok(Number(written?.seq) > held, `${written?.seq} after ${held}`);
      } finally {
        await other.end();
        await store.deleteOlderThan(NOW - 50 * DAY, 100);
      }
    });

    test('records written before the write sequence follow the sequenced ones by start time, and an old cursor still pages', async () => {
      const legacy = (id: string, startedAt: number) =>
        sql`insert into request_logs (request_id, started_at, endpoint, project_id, status, latency_ms, streaming, request_payload, response_payload)
            values (${id}, ${startedAt}, '/v1/chat/completions', 'legacy', 200, 1, 0, '{"q":"old"}', '{"a":"old"}')`.execute(storage.db);
      const old = NOW - 60 * DAY;
      // Records written before stored their gateway ids whole.
      await legacy('req_legacy-1', old - 30);
      await legacy('req_legacy-2', old - 20);
      await store.insertBatch([row('legacy-new', { project_id: 'legacy', started_at: old - 100 })]);
      const project = { projectId: 'legacy' };
      const pages: string[][] = [];
      for (let cursor: LogCursor | null | undefined = undefined; cursor !== null; ) {
        const page: Awaited<ReturnType<LogStore['list']>> = await store.list(project, ALL, 1, cursor);
        pages.push(page.rows.map((found) => found.request_id));
        cursor = page.next;
      }
      assert.deepEqual(pages, [['legacy-new'], ['req_legacy-2'], ['req_legacy-1']]);
      // The cursor pages returned before the upgrade ([started_at, request_id]) still work.
      const before = parseCursor(Buffer.from(JSON.stringify([old - 20, 'req_legacy-2'])).toString('base64url'));
      assert.deepEqual((await store.list(project, ALL, 5, before)).rows.map((found) => found.request_id), ['req_legacy-1']);
      // Their text payloads read as before.
      assert.equal((await store.get('req_legacy-1', ALL))?.request_payload, '{"q":"old"}');
      await store.deleteOlderThan(NOW - 50 * DAY, 100);
    });

    test("a SQLite connection keeps SQLite's own page cache, not the 16 MiB better-sqlite3 builds in", { skip: backend.name !== 'SQLite' }, () => {
      // The log's writes filled the larger one within seconds of load, and it is never given back.
      assert.equal(storage.sqlite!.pragma('cache_size', { simple: true }), -2000);
    });

    test('every column is stored where it was written', async () => {
      // A different value in every column, so a value bound to the wrong column shows.
      const written: RequestLogRow = row('columns', {
        started_at: NOW - 10 * DAY, mode: 'm', platform: 'p', key_id: 'k', project_id: 'pr', fingerprint: 'f', requested_model: 'rq', resolved_model: 'rs',
        provider: 'pv', status: 201, error_code: 'e', latency_ms: 3, upstream_latency_ms: 4, streaming: 1, prompt_tokens: 5, completion_tokens: 6,
        cached_tokens: 7, total_tokens: 8, image_count: 9, audio_seconds: 10.5, cost_micro_usd: 11, cost_flag: 'cf', media: '{"m":1}', provider_request_id: 'req_vendor_12', agent: 'ag',
        request_payload: '{"q":1}', response_payload: '{"r":1}', detail: '{"d":1}',
      });
      await store.insertBatch([written]);
      try {
        const stored = (await store.get('columns', ALL)) as Record<string, unknown> | undefined;
        assert.ok(stored !== undefined);
        for (const [column, value] of Object.entries(written)) {
          // PostgreSQL gives bigint columns back as strings.
          assert.equal(typeof value === 'number' ? Number(stored[column]) : stored[column], value, column);
        }
      } finally {
        await store.deleteOlderThan(NOW - 9 * DAY, 10);
      }
    });

    test('lists newest first and pages with a cursor that never repeats or skips rows', async () => {
      const first = await store.list({}, ALL, 2);
      assert.deepEqual(first.rows.map((r) => r.request_id), ['r5', 'r4']);
      assert.ok(first.next !== null);
      const second = await store.list({}, ALL, 2, first.next);
      assert.deepEqual(second.rows.map((r) => r.request_id), ['r3', 'r2']);
      const third = await store.list({}, ALL, 2, second.next!);
      assert.deepEqual(third.rows.map((r) => r.request_id), ['r1']);
      assert.equal(third.next, null);
      assert.equal('request_payload' in first.rows[0]!, false, 'list rows stay lean');
    });

    test('filters: key, model (requested or resolved), project, time range and status', async () => {
      const ids = async (filter: Parameters<LogStore['list']>[0]) => (await store.list(filter, ALL, 100)).rows.map((r) => r.request_id).sort();
      assert.deepEqual(await ids({ keyId: 'key_b' }), ['r3']);
      assert.deepEqual(await ids({ model: 'service-1' }), ['r1', 'r2', 'r4', 'r5']);
      assert.deepEqual(await ids({ model: 'gpt-4o-mini' }), ['r3']);
      assert.deepEqual(await ids({ projectId: 'beta' }), ['r4']);
      assert.deepEqual(await ids({ since: NOW - 2 * DAY, until: NOW - 600 }), ['r2', 'r3']);
      assert.deepEqual(await ids({ status: { min: 400, max: 499 } }), ['r2']);
      assert.deepEqual(await ids({ status: { min: 100, max: 399 } }), ['r1', 'r3', 'r4', 'r5']);
      // r4 asked for service-1 and was served by gpt-9-preview: found by either.
      assert.deepEqual(await ids({ model: 'gpt-9-preview' }), ['r4']);
    });

    test('the request id, the resolved model and the fingerprint are stored compacted and read whole; older rows read as stored', async () => {
      const at = NOW - 30 * DAY;
      await store.insertBatch([
        row('req_0compact', { started_at: at, key_id: 'key_z', fingerprint: 'key_z…wxyz', requested_model: 'same-model', resolved_model: 'same-model' }),
        row('req_1compact', { started_at: at, key_id: 'key_z', fingerprint: 'anonymous', requested_model: 'alias-model', resolved_model: 'real-model' }),
        // Ids of another shape are kept whole, and so is one whose rest would read as a whole id.
        row('2compact-none', { started_at: at, key_id: null, fingerprint: 'anonymous', requested_model: 'same-model', resolved_model: null, status: 404 }),
        row('req_req_3compact', { started_at: at, key_id: null, fingerprint: 'anonymous', requested_model: 'same-model', resolved_model: null, status: 404 }),
      ]);
      await sql`insert into request_logs (request_id, started_at, endpoint, key_id, fingerprint, requested_model, resolved_model, status, latency_ms, streaming)
          values ('req_4compact', ${at}, '/v1/chat/completions', 'key_z', 'key_z…abcd', 'same-model', 'same-model', 200, 1, 0)`.execute(storage.db);
      try {
        const stored = await sql<{ request_id: string; fingerprint: string | null; resolved_model: string | null }>`
          select request_id, fingerprint, resolved_model from request_logs where request_id like '%compact%' order by fingerprint, request_id`.execute(storage.db);
        assert.deepEqual(
          stored.rows.map((found) => [found.request_id, found.fingerprint, found.resolved_model]),
          [
            ['1compact', 'anonymous', 'real-model'],
            ['=2compact-none', 'anonymous', null],
            ['=req_req_3compact', 'anonymous', null],
            ['req_4compact', 'key_z…abcd', 'same-model'],
            ['0compact', '…wxyz', ''],
          ],
        );
        const read = async (id: string) => {
          const found = (await store.get(id, ALL))!;
          return [found.request_id, found.fingerprint, found.resolved_model];
        };
        assert.deepEqual(await read('req_0compact'), ['req_0compact', 'key_z…wxyz', 'same-model']);
        assert.deepEqual(await read('req_1compact'), ['req_1compact', 'anonymous', 'real-model']);
        assert.deepEqual(await read('2compact-none'), ['2compact-none', 'anonymous', null]);
        assert.deepEqual(await read('req_req_3compact'), ['req_req_3compact', 'anonymous', null]);
        assert.deepEqual(await read('req_4compact'), ['req_4compact', 'key_z…abcd', 'same-model']);
        assert.equal(await store.get('0compact', ALL), undefined);
        const listed = (await store.list({ keyId: 'key_z' }, ALL, 10)).rows.map((found) => [found.request_id, found.fingerprint, found.resolved_model]);
        assert.deepEqual(listed, [
          ['req_1compact', 'anonymous', 'real-model'],
          ['req_0compact', 'key_z…wxyz', 'same-model'],
          ['req_4compact', 'key_z…abcd', 'same-model'],
        ]);
        const exported: string[] = [];
        for await (const found of store.export({ keyId: 'key_z' }, ALL)) exported.push(`${found.request_id} ${found.request_payload}`);
        assert.deepEqual(exported, ['req_1compact {"messages":[]}', 'req_0compact {"messages":[]}', 'req_4compact null']);
        const ids = async (model: string) => (await store.list({ model, until: at + 1 }, ALL, 10)).rows.map((found) => found.request_id).sort();
        assert.deepEqual(await ids('same-model'), ['2compact-none', 'req_0compact', 'req_4compact', 'req_req_3compact']);
        assert.deepEqual(await ids('real-model'), ['req_1compact']);
        assert.deepEqual(await ids('alias-model'), ['req_1compact']);
        const usage = await store.usage('model', { since: at, until: at + 1 }, ALL);
        assert.deepEqual(usage.map((entry) => [entry.group, entry.requests]).sort(), [['real-model', 1], ['same-model', 4]]);
      } finally {
        await store.deleteOlderThan(NOW - 29 * DAY, 100);
      }
    });

    test('the model, status and platform filters read their indexes, which hold only the records they can find', async () => {
      // The list's own queries, as compiled, planned by the database (PostgreSQL told to avoid a
      // sequential scan, which it would choose for a table this small).
      const queries: { sql: string; parameters: readonly unknown[] }[] = [];
      const log = (event: { level: string; query: { sql: string; parameters: readonly unknown[] } }) => {
        if (event.level === 'query') queries.push(event.query);
      };
      const pool = storage.kind === 'postgres' ? new pg.Pool({ connectionString: shared.env.DATABASE_URL, max: 1 }) : undefined;
      const db = new Kysely<Database>({ dialect: pool !== undefined ? new PostgresDialect({ pool }) : new SqliteDialect({ database: storage.sqlite! }), log });
      try {
        if (pool !== undefined) await sql`set enable_seqscan = off`.execute(db);
        const plan = async (filter: Parameters<typeof listRecords>[1]) => {
          queries.length = 0;
          await listRecords(db, filter, ALL, 10);
          const query = queries[0]!;
          if (pool !== undefined) {
            const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`explain ${query.sql}`, [...query.parameters]);
            return rows.map((line) => line['QUERY PLAN']).join('\n');
          }
          return storage
            .sqlite!.prepare(`explain query plan ${query.sql}`)
            .all(...query.parameters.map((value) => (typeof value === 'boolean' ? Number(value) : value)))
            .map((line) => (line as { detail: string }).detail)
            .join('\n');
        };
        const model = await plan({ model: 'gpt-9-preview' });
        assert.match(model, /request_logs_resolved_model_seq/);
        assert.match(model, /request_logs_requested_model_seq/);
        assert.match(await plan({ status: { min: 400, max: 499 } }), /request_logs_status_seq/);
        assert.match(await plan({ platform: 'claude-code' }), /request_logs_platform_seq/);
      } finally {
        // Only the pool is this test's own: destroying the SQLite dialect would close the store's database.
        if (pool !== undefined) await db.destroy();
      }
      const entries = async (index: string) => {
        if (storage.kind === 'postgres') {
          const { rows } = await storage.pg!.query<{ definition: string }>('select pg_get_indexdef(indexrelid) as definition from pg_index where indexrelid = $1::regclass', [index]);
          return rows[0]!.definition;
        }
        return (storage.sqlite!.prepare('select sql from sqlite_master where name = ?').get(index) as { sql: string }).sql;
      };
      assert.match(await entries('request_logs_resolved_model_seq'), /WHERE \(?\(?resolved_model\)?(::text)? <> ''/i);
      assert.match(await entries('request_logs_status_seq'), /WHERE \(?status >= 400/i);
      assert.match(await entries('request_logs_platform_seq'), /WHERE \(?platform IS NOT NULL/i);
    });

    test('a project-scoped caller never sees another project, whatever its filters say', async () => {
      const alpha = { projectId: 'alpha' };
      const ids = async (filter: Parameters<LogStore['list']>[0]) => (await store.list(filter, alpha, 100)).rows.map((r) => r.request_id).sort();
      assert.deepEqual(await ids({}), ['r1', 'r2', 'r3', 'r5']);
      assert.deepEqual(await ids({ projectId: 'beta' }), []);
      assert.deepEqual(await ids({ keyId: 'key_c' }), []);
      assert.equal(await store.get('r4', alpha), undefined);
      const exported: string[] = [];
      for await (const exportedRow of store.export({}, alpha)) exported.push(exportedRow.request_id);
      assert.ok(!exported.includes('r4'));
      const usage = await store.usage('key', {}, alpha);
      assert.ok(!usage.some((entry) => entry.group === 'key_c'));
    });

    test('export reads every matching row with payloads, page by page', async () => {
      const many = Array.from({ length: 1203 }, (_, index) => row(`bulk_${String(index).padStart(5, '0')}`, { started_at: NOW - 20 * DAY, project_id: 'bulk' }));
      await store.insertBatch(many);
      const seen: string[] = [];
      for await (const exported of store.export({ projectId: 'bulk' }, ALL)) {
        assert.equal(exported.request_payload, '{"messages":[]}');
        seen.push(exported.request_id);
      }
      assert.equal(seen.length, 1203);
      assert.equal(new Set(seen).size, 1203);
    });

    test('an export holds the payloads of at most EXPORT_BATCH_BYTES of records at a time, whatever its size', async () => {
      // The store's own queries, seen through a query builder on the same connection.
      const contentQueries: unknown[][] = [];
      const dialect = storage.sqlite !== undefined ? new SqliteDialect({ database: storage.sqlite }) : new PostgresDialect({ pool: storage.pg! });
      const observed = new Kysely<Database>({
        dialect,
        log: (event) => {
          if (event.query.sql.includes('"payloads_omitted"') && !event.query.sql.includes('"latency_ms"')) contentQueries.push([...event.query.parameters]);
        },
      });
      const observedStore = new LogStore({ db: observed, ...(storage.sqlite !== undefined ? { sqlite: storage.sqlite } : { pg: storage.pg! }) });
      // 40 records of ~200 KB of payload that does not compress (random bytes as hex).
      const big = Array.from({ length: 40 }, (_, index) =>
        row(`big_${String(index).padStart(3, '0')}`, {
          project_id: 'big-export',
          started_at: NOW - 60 * DAY,
          request_payload: JSON.stringify({ text: randomBytes(100_000).toString('hex') }),
        }),
      );
      await store.insertBatch(big);
      let exported = 0;
      for await (const record of observedStore.export({ projectId: 'big-export' }, ALL)) {
        assert.equal(record.request_payload, big.find((written) => written.request_id === record.request_id)?.request_payload);
        exported += 1;
      }
      assert.equal(exported, 40);
      const sizes = new Map(
        (await sql<{ request_id: string; bytes: number }>`select request_id, length(payloads) as bytes from request_logs where project_id = 'big-export'`.execute(storage.db)).rows.map(
          (found) => [found.request_id, Number(found.bytes)],
        ),
      );
      const total = [...sizes.values()].reduce((sum, bytes) => sum + bytes, 0);
      assert.ok(total > 3 * EXPORT_BATCH_BYTES && contentQueries.length >= Math.ceil(total / EXPORT_BATCH_BYTES), `${total} bytes read in ${contentQueries.length} queries`);
      for (const ids of contentQueries) {
        const bytes = ids.reduce<number>((sum, id) => sum + (sizes.get(String(id)) ?? 0), 0);
        assert.ok(ids.length === 1 || bytes <= EXPORT_BATCH_BYTES, `one read held ${bytes} bytes of ${ids.length} records`);
      }
      // Not destroyed: it shares the test's connection.
      await store.deleteOlderThan(NOW - 50 * DAY, 100);
    });

    test('usage per day, model and key: requests, errors, tokens, exact cost, unpriced requests', async () => {
      const filter = { since: NOW - 5 * DAY };
      const byKey = await store.usage('key', filter, ALL);
      const keyA = byKey.find((entry) => entry.group === 'key_a')!;
      assert.deepEqual(
        { requests: keyA.requests, errors: keyA.errors, total: keyA.totalTokens, cost: keyA.costMicroUsd },
        { requests: 3, errors: 1, total: 55, cost: 1_000_101 },
      );
      const byModel = await store.usage('model', filter, ALL);
      assert.equal(byModel.find((entry) => entry.group === 'gpt-9-preview')?.unpricedRequests, 1);
      const byDay = await store.usage('day', filter, ALL);
      assert.deepEqual(
        byDay.map((entry) => [Number(entry.group), entry.requests]),
        [
          [Math.floor((NOW - 3 * DAY) / DAY), 1],
          [Math.floor((NOW - DAY) / DAY), 1],
          [Math.floor(NOW / DAY), 3],
        ],
      );
      // A stream the client left after the answer began, without usage: unpriced, not free.
      await store.insertBatch([row('left', { started_at: NOW - 4 * DAY, resolved_model: 'gpt-4.1', status: 499, error_code: 'client_closed', cost_micro_usd: null })]);
      const left = (await store.usage('model', filter, ALL)).find((entry) => entry.group === 'gpt-4.1');
      assert.deepEqual({ requests: left?.requests, errors: left?.errors, unpriced: left?.unpricedRequests }, { requests: 1, errors: 1, unpriced: 1 });
    });

    test("limit seeds: today's tokens and this month's cost per key", async () => {
      const seeds = await store.limitSeeds(NOW);
      const keyA = seeds.find((seed) => seed.keyId === 'key_a')!;
      // Today (UTC): r5 (40 tokens); this month: r1 (100) + r2 (0) + r5 (1,000,001) micro-USD.
      assert.deepEqual(keyA, { keyId: 'key_a', dayTokens: 40, monthCostMicroUsd: 1_000_101 });
    });

    test('retention deletes expired rows in bounded batches and keeps the rest', async () => {
      const old = Array.from({ length: 25 }, (_, index) => row(`old_${index}`, { started_at: NOW - 40 * DAY }));
      await store.insertBatch(old);
      const batches: number[] = [];
      const counting = { deleteOlderThan: async (cutoff: number, size: number) => {
        const deleted = await store.deleteOlderThan(cutoff, size);
        batches.push(deleted);
        return deleted;
      } };
      const job = new RetentionJob(counting, { retentionDays: 30, batchSize: 10, intervalMs: 60_000, firstRunDelayMs: 60_000 }, pino({ level: 'silent' }));
      assert.equal(await job.runOnce(NOW), 25);
      assert.deepEqual(batches, [10, 10, 5]);
      assert.equal((await store.list({ until: NOW - 30 * DAY }, ALL, 10)).rows.length, 0);
      assert.ok((await store.get('r1', ALL)) !== undefined);
      await job.stop();
    });

    test('size cap: oldest payloads go first (records kept, marked), then oldest records; counts follow; SQLite gives the pages back', async () => {
      const own = await backend.create();
      const capped = await openStorage({ databaseUrl: own.env.DATABASE_URL, dataDir: own.dataDir });
      try {
        const capStore = new LogStore(capped);
        // The file of every table and index with no rows: what no cap can give back.
        const fileEmpty = (await capStore.size()).databaseBytes;
        const noise = () => JSON.stringify({ text: randomBytes(5_000).toString('base64') });
        const written = Array.from({ length: 200 }, (_, index) => row(`cap_${String(index).padStart(3, '0')}`, { request_payload: noise(), response_payload: '{"ok":true}' }));
        for (let start = 0; start < written.length; start += 50) await capStore.insertBatch(written.slice(start, start + 50));
        const full = await capStore.size();
        assert.equal(full.records, 200);
        assert.ok(full.payloadBytes > 200 * 5_000, `${full.payloadBytes} payload bytes`);
        const fileBefore = full.databaseBytes;

        // A cap that holds about half of the payloads.
        const maxBytes = Math.floor(full.payloadBytes / 2) + 200 * capStore.recordOverheadBytes;
        await new SizeCapJob(capStore, { maxBytes, batchSize: 10, intervalMs: 60_000 }, pino({ level: 'silent' })).runOnce();
        const half = await capStore.size();
        assert.equal(half.records, 200, 'records are kept while payloads can go');
        assert.ok(half.payloadBytes + 200 * capStore.recordOverheadBytes <= maxBytes);
        assert.ok(half.payloadBytes > full.payloadBytes / 3);
        const oldest = await capStore.get('cap_000', ALL);
        assert.deepEqual([oldest?.request_payload, oldest?.payloads_omitted], [null, 'size_cap']);
        const newest = await capStore.get('cap_199', ALL);
        assert.deepEqual([newest?.request_payload, newest?.payloads_omitted], [written[199]!.request_payload, null]);
        // Dropped strictly oldest first: every record that kept its payloads is newer than every one that lost them.
        const all = (await capStore.list({}, ALL, 1000)).rows.reverse();
        const kept = await Promise.all(all.map(async (summary) => (await capStore.get(summary.request_id, ALL))?.request_payload !== null));
        assert.deepEqual(kept, [...kept].sort((a, b) => Number(a) - Number(b)));

        // A cap below what the records alone take: the oldest records go too.
        await new SizeCapJob(capStore, { maxBytes: 50 * capStore.recordOverheadBytes, batchSize: 10, intervalMs: 60_000 }, pino({ level: 'silent' })).runOnce();
        const small = await capStore.size();
        assert.equal(small.payloadBytes, 0);
        assert.ok(small.records <= 50 && small.records >= 40, `${small.records} records left`);
        assert.ok((await capStore.get('cap_199', ALL)) !== undefined, 'the newest records stay');
        assert.equal(await capStore.get('cap_000', ALL), undefined);
        // Retention's deletes are counted too (triggers).
        await capStore.deleteOlderThan(NOW + 1, 1000);
        assert.deepEqual([(await capStore.size()).records, (await capStore.size()).payloadBytes], [0, 0]);
        if (capped.sqlite !== undefined) {
          assert.equal(capStore.reclaimsFreePages(), true, 'a new SQLite database is in incremental auto-vacuum mode');
          await new SizeCapJob(capStore, { maxBytes: 0, batchSize: 10, intervalMs: 60_000 }, pino({ level: 'silent' })).runOnce();
          const after = (await capStore.size()).databaseBytes;
          assert.ok(after - fileEmpty < (fileBefore - fileEmpty) / 4, `file ${fileBefore} -> ${after} bytes (${fileEmpty} with no rows)`);
        }
      } finally {
        await capped.close();
        await own.dispose();
      }
    });

    test('usage rows come in the same order on both databases: requests without a key or model last', async () => {
      // SQLite sorts NULL first and PostgreSQL last: `usage --by key` differed by database.
      await store.insertBatch([
        row('order_1', { project_id: 'gamma', key_id: 'key_b', resolved_model: 'gpt-4o-mini' }),
        row('order_2', { project_id: 'gamma', key_id: null, resolved_model: null, requested_model: null, status: 401 }),
        row('order_3', { project_id: 'gamma', key_id: 'key_a', resolved_model: 'gpt-4o' }),
      ]);
      const filter = { projectId: 'gamma' };
      assert.deepEqual((await store.usage('key', filter, ALL)).map((entry) => entry.group), ['key_a', 'key_b', null]);
      assert.deepEqual((await store.usage('model', filter, ALL)).map((entry) => entry.group), ['gpt-4o', 'gpt-4o-mini', null]);
    });
  });
}
