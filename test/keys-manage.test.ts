import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { adminKeysRoutes } from '../src/server/routes/admin-keys.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { probePath, probeRoutes } from './helpers/probe-routes.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';

/**
 * Keys as operators manage them, over HTTP on both databases and across two instances sharing
 * one: an expiry and a rotation's grace period hold on every instance (each reads its own clock),
 * a rotation keeps the key's id and settings, tags and metadata are kept and filtered on.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read many response shapes; each asserts what it reads
type Loose = any;

async function probe(gateway: TestGateway, secret: string): Promise<{ status: number; code: string | null }> {
  const response = await fetch(`${gateway.url}${probePath('model:request')}`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: '{}' });
  const body = (await response.json()) as Loose;
  return { status: response.status, code: body.error?.code ?? null };
}

/** Waits (bounded) until `check` holds: a change reaches another instance by announcement or its next refresh. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`never: ${what}`);
}

/** How far before a deadline a check that it has not passed yet is still made. */
const MARGIN_MS = 1000;

async function until(time: number): Promise<void> {
  while (Date.now() <= time) await new Promise((resolve) => setTimeout(resolve, Math.max(5, time - Date.now() + 5)));
}

for (const backend of STORAGE_BACKENDS) {
  describe(`keys as operators manage them (${backend.name})`, { skip: backend.skip }, () => {
    let storage: SharedStorage;
    let a: TestGateway;
    let b: TestGateway;

    before(async () => {
      storage = await backend.create();
      const options = { env: storage.env, dataDir: storage.dataDir, routes: [adminKeysRoutes, probeRoutes] };
      a = await startTestGateway(options);
      b = await startTestGateway(options);
    });
    after(async () => {
      await a.close();
      await b.close();
      await storage.dispose();
    });

    async function create(body: Record<string, unknown>): Promise<Loose> {
      const created = await a.admin('POST', '/admin/v1/keys', { scopes: ['model:request'], ...body });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      return created.body;
    }

    test('a key past its expires_at is refused with 401 key_expired on every instance, without any change announced', async () => {
      const expiresAt = Date.now() + 3000;
      const key = await create({ name: 'expiring', expires_at: new Date(expiresAt).toISOString() });
      assert.equal(key.expires_at, new Date(expiresAt).toISOString());
      // Before the expiry (checked with a margin: a slow machine may get there late) both take it.
      for (const instance of [a, b]) if (Date.now() < expiresAt - MARGIN_MS) assert.equal((await probe(instance, key.secret)).status, 200);
      await until(expiresAt);
      for (const instance of [a, b]) {
        const refused = await fetch(`${instance.url}${probePath('model:request')}`, { method: 'POST', headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' }, body: '{}' });
        assert.equal(refused.status, 401);
        const body = (await refused.json()) as Loose;
        assert.equal(body.error.code, 'key_expired');
        assert.equal(body.error.type, 'authentication_error');
        assert.match(body.error.message, /expired at \d{4}-/);
      }
      // A later expiry set on one instance lets it in again everywhere.
      const extended = await a.admin('PATCH', `/admin/v1/keys/${key.id}`, { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
      assert.equal(extended.status, 200);
      await eventually('the extended key works on b', async () => (await probe(b, key.secret)).status === 200);
      assert.equal((await probe(a, key.secret)).status, 200);
      const cleared = await a.admin('PATCH', `/admin/v1/keys/${key.id}`, { expires_at: null });
      assert.equal(cleared.body.expires_at, null);
    });

    test('expires_at that is not a time, or already past at creation, is a 400 naming it', async () => {
      for (const expires of ['tomorrow', '2027-13-45', new Date(Date.now() - 1000).toISOString()]) {
        const refused = await a.admin('POST', '/admin/v1/keys', { name: 'bad', scopes: ['model:request'], expires_at: expires });
        assert.equal(refused.status, 400, expires);
        assert.equal(refused.body.error.code, 'invalid_body');
        assert.equal(refused.body.error.param, 'expires_at');
      }
    });

    test('rotation: a new secret for the same key id and settings; the old one works through the grace period on every instance, then not', async () => {
      const key = await create({ name: 'rotated', limits: { rpm: 1000 }, tags: ['team-a'] });
      assert.equal((await probe(b, key.secret)).status, 200); // b holds the key now

      const rotated = await a.admin('POST', `/admin/v1/keys/${key.id}/rotate`, { grace_period_seconds: 3 });
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      const graceEnds = Date.parse(rotated.body.previous_secret_expires_at);
      assert.equal(rotated.body.id, key.id);
      assert.deepEqual([rotated.body.name, rotated.body.limits.rpm, rotated.body.tags, rotated.body.status], ['rotated', 1000, ['team-a'], 'active']);
      assert.notEqual(rotated.body.secret, key.secret);
      assert.notEqual(rotated.body.fingerprint, key.fingerprint);
      for (const instance of [a, b]) {
        assert.equal((await probe(instance, rotated.body.secret)).status, 200);
        if (Date.now() < graceEnds - MARGIN_MS) assert.equal((await probe(instance, key.secret)).status, 200);
      }
      await until(graceEnds);
      for (const instance of [a, b]) assert.deepEqual(await probe(instance, key.secret), { status: 401, code: 'invalid_api_key' });
      assert.equal((await probe(b, rotated.body.secret)).status, 200);

      // Without a grace period the replaced secret stops at once here, and everywhere once told.
      const again = await a.admin('POST', `/admin/v1/keys/${key.id}/rotate`, {});
      assert.equal(again.body.previous_secret_expires_at, null);
      assert.deepEqual(await probe(a, rotated.body.secret), { status: 401, code: 'invalid_api_key' });
      await eventually('b refuses the replaced secret', async () => (await probe(b, rotated.body.secret)).status === 401);
      assert.equal((await probe(b, again.body.secret)).status, 200);

      const revoked = await a.admin('POST', `/admin/v1/keys/${key.id}/revoke`);
      assert.equal(revoked.status, 200);
      const refused = await a.admin('POST', `/admin/v1/keys/${key.id}/rotate`, {});
      assert.equal(refused.status, 409);
      for (const grace of [-1, 30 * 86_400 + 1, 'soon']) {
        assert.equal((await a.admin('POST', `/admin/v1/keys/${key.id}/rotate`, { grace_period_seconds: grace })).status, 400);
      }
    });

    test('a secret rotated on one instance works at once on an instance that never held the key', async () => {
      const key = await create({ name: 'fresh' });
      const rotated = await a.admin('POST', `/admin/v1/keys/${key.id}/rotate`, { grace_period_seconds: 600 });
      // b looks up a secret it does not hold: by the current hash and the replaced one alike.
      assert.equal((await probe(b, rotated.body.secret)).status, 200);
      assert.equal((await probe(b, key.secret)).status, 200);
    });

    test("a project's keys paused, resumed and revoked in one action, on every instance", async () => {
      const first = await create({ name: 'class-1', project: 'class' });
      const second = await create({ name: 'class-2', project: 'class' });
      const elsewhere = await create({ name: 'elsewhere', project: 'other-class' });
      await a.admin('POST', `/admin/v1/keys/${second.id}/pause`);
      for (const key of [first, elsewhere]) assert.equal((await probe(b, key.secret)).status, 200);

      const paused = await a.admin('POST', '/admin/v1/projects/class/keys/pause');
      assert.equal(paused.status, 200);
      assert.deepEqual(paused.body.data.map((key: Loose) => [key.id, key.status]), [[first.id, 'paused']]);
      await eventually('b refuses the paused project key', async () => (await probe(b, first.secret)).code === 'key_paused');
      assert.equal((await probe(b, elsewhere.secret)).status, 200);

      const resumed = await a.admin('POST', '/admin/v1/projects/class/keys/resume');
      assert.deepEqual(resumed.body.data.map((key: Loose) => key.id).sort(), [first.id, second.id].sort());
      await eventually('b takes the resumed key', async () => (await probe(b, second.secret)).status === 200);

      const revoked = await a.admin('POST', '/admin/v1/projects/class/keys/revoke');
      assert.equal(revoked.body.data.length, 2);
      for (const key of [first, second]) await eventually('b refuses the revoked key', async () => (await probe(b, key.secret)).code === 'key_revoked');
      assert.equal((await probe(a, elsewhere.secret)).status, 200);
      assert.deepEqual((await a.admin('POST', '/admin/v1/projects/class/keys/revoke')).body.data, []);
      assert.equal((await a.admin('POST', '/admin/v1/projects/no-such-project/keys/pause')).status, 404);
    });

    test('tags and metadata are kept, changed, and filtered on', async () => {
      const tagged = await create({ name: 'tagged', project: 'tags', tags: ['course:cs101', 'student'], metadata: { owner: 'ada', cohort: '2026' } });
      await create({ name: 'untagged', project: 'tags' });
      assert.deepEqual([tagged.tags, tagged.metadata], [['course:cs101', 'student'], { owner: 'ada', cohort: '2026' }]);
      const listed = await a.admin('GET', '/admin/v1/keys?project=tags&tag=student');
      assert.deepEqual(listed.body.data.map((key: Loose) => key.name), ['tagged']);
      // A tag is matched whole: "stud" and LIKE's own characters match nothing.
      for (const tag of ['stud', 'course_cs101']) assert.deepEqual((await a.admin('GET', `/admin/v1/keys?tag=${tag}`)).body.data, []);

      const changed = await a.admin('PATCH', `/admin/v1/keys/${tagged.id}`, { tags: ['alumni'], metadata: { owner: 'grace' } });
      assert.deepEqual([changed.body.tags, changed.body.metadata], [['alumni'], { owner: 'grace' }]);
      assert.deepEqual((await a.admin('GET', '/admin/v1/keys?tag=student')).body.data, []);
      assert.deepEqual((await a.admin('GET', '/admin/v1/keys?tag=alumni')).body.data.map((key: Loose) => key.id), [tagged.id]);
      assert.deepEqual((await a.admin('GET', `/admin/v1/keys/${tagged.id}`)).body.metadata, { owner: 'grace' });

      for (const body of [{ tags: ['has space'] }, { tags: Array.from({ length: 51 }, (_, index) => `t${index}`) }, { metadata: { owner: 7 } }, { metadata: { '': 'x' } }]) {
        const refused = await a.admin('PATCH', `/admin/v1/keys/${tagged.id}`, body);
        assert.equal(refused.status, 400, JSON.stringify(body));
        assert.equal(refused.body.error.code, 'invalid_body');
      }
    });
  });
}
