import { describe, test } from 'node:test';
import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkTurnImages, cleanFilename } from '../src/agents/media/ingest.js';
import { FilesystemMediaStore, newStorageKey } from '../src/agents/media/media-store.js';
import { withAssetReferences } from '../src/agents/media/payload.js';
import { AgentMedia } from '../src/agents/media/agent-media.js';
import type { MediaStore } from '../src/agents/media/media-store.js';
import { historyMessages } from '../src/agents/runtime/messages.js';
import type { AssetRecords, AssetRow } from '../src/agents/store/asset-records.js';
import { GatewayError } from '../src/errors/index.js';
import { PNG_1X1 } from './helpers/scripted-provider.js';

const uri = (mime: string, bytes: Buffer) => `data:${mime};base64,${bytes.toString('base64')}`;
const image = (url: string, index = 0) => ({ url, filename: null, param: `input[${index}].image_url` });
const HEIC = Buffer.concat([Buffer.from('000000186674797068656963000000006d69663168656963', 'hex'), Buffer.alloc(64)]);
const MIF1 = Buffer.concat([Buffer.from('00000018667479706d69663100000000686569636d696631', 'hex'), Buffer.alloc(64)]);
const GIF = Buffer.from(`GIF89a${'\0'.repeat(20)}`, 'latin1');
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 '), Buffer.alloc(30)]);

function rejects(code: string, message: RegExp) {
  return (error: unknown) => error instanceof GatewayError && error.code === code && message.test(error.message);
}

describe('agent media checks', () => {
  test('accepted types whose signature matches the declared type', async () => {
    const checked = await checkTurnImages([
      image(uri('image/png', PNG_1X1)), image(uri('image/jpg', Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex')), 1),
      image(uri('image/heic', HEIC), 2), image(uri('image/heif', HEIC), 3), image(uri('image/heic', MIF1), 4),
      image(uri('image/gif', GIF), 5), image(uri('image/webp', WEBP), 6), image('https://images.example.com/x.png', 7),
    ]);
    assert.deepEqual(checked.map((item) => (item.kind === 'inline' ? item.mimeType : item.url)), [
      'image/png', 'image/jpeg', 'image/heic', 'image/heif', 'image/heic', 'image/gif', 'image/webp', 'https://images.example.com/x.png',
    ]);
  });

  test('size limits: 8 MiB each, 10 MiB per turn', async () => {
    const big = Buffer.concat([PNG_1X1, Buffer.alloc(8 * 1024 * 1024)]);
    await assert.rejects(checkTurnImages([image(uri('image/png', big))]), rejects('request_too_large', /8 MiB per image/));
    const six = Buffer.concat([PNG_1X1, Buffer.alloc(6 * 1024 * 1024)]);
    await assert.rejects(checkTurnImages([image(uri('image/png', six)), image(uri('image/png', six), 1)]), rejects('request_too_large', /10 MiB together/));
  });

  test('mislabelled, unknown, malformed and credentialed images are refused, naming the field', async () => {
    const cases: [string, RegExp][] = [
      [uri('image/gif', PNG_1X1), /declared as image\/gif but its content is an image\/png/],
      [uri('image/png', HEIC), /declared as image\/png but its content is an image\/heic/],
      [uri('image/png', Buffer.from('%PDF-1.7 hello')), /not an accepted image/],
      [uri('image/svg+xml', Buffer.from('<svg/>')), /PNG, JPEG, WebP, GIF, HEIC and HEIF/],
      ['data:image/png,rawtext', /base64 image data URI/],
      ['data:image/png;base64,@@@@', /not valid base64/],
      // The input policy of every model call words these (src/calls/input-policy.ts).
      ['https://u:p@example.com/a.png', /must not contain a username or password/],
      ['ftp://example.com/a.png', /must use https/],
      ['http://example.com/a.png', /https URL/],
      ['not a url', /not a valid URL/],
    ];
    for (const [url, message] of cases) {
      await assert.rejects(checkTurnImages([image(url, 3)]), (error: unknown) => rejects('invalid_image_url', message)(error) && (error as GatewayError).param === 'input[3].image_url', url);
    }
  });

  test('file names are metadata only, cleaned of control characters', () => {
    assert.equal(cleanFilename('../../etc/passwd\u0000'), '../../etc/passwd');
    assert.equal(cleanFilename('\u0001'), null);
  });
});

describe('filesystem media store', () => {
  test('stores byte-for-byte under keys it made, refuses any other key', async () => {
    const root = mkdtempSync(join(tmpdir(), 'modelgate-media-'));
    try {
      const store = new FilesystemMediaStore(root);
      const key = newStorageKey();
      await store.put(key, PNG_1X1);
      assert.deepEqual(await store.get(key), PNG_1X1);
      assert.equal(await store.get(newStorageKey()), null);
      assert.deepEqual(readdirSync(join(root, key.slice(0, 2))), [key]);
      assert.equal(statSync(join(root, key.slice(0, 2), key)).mode & 0o777, 0o600);
      for (const bad of ['../../etc/passwd', 'asset_1', `${key}/..`, key.toUpperCase()]) {
        await assert.rejects(store.get(bad), /32 hex characters/);
        await assert.rejects(store.put(bad, PNG_1X1), /32 hex characters/);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

test('earlier images over the 8 MiB per request are labelled without being read from storage', async () => {
  // 20 turns of 5 MiB each would otherwise read 100 MiB from the media store for every llm call.
  const MiB = 1024 * 1024;
  const reads: string[] = [];
  const store: MediaStore = {
    put: async () => undefined,
    get: async (key) => {
      reads.push(key);
      return Buffer.alloc(5 * MiB);
    },
  };
  const rows = new Map<string, AssetRow>();
  const history = Array.from({ length: 20 }, (_, index) => {
    const id = `asset_${index}`;
    rows.set(id, {
      id, agent_id: 'agt_1', conversation_id: 'conv_1', run_id: `run_${index}`, owner: 'key:k', created_at: index, source: 'inline',
      mime_type: 'image/png', bytes: 5 * MiB, sha256: '0'.repeat(64), storage_key: `key_${index}`, source_url: null, filename: null,
    });
    return { role: 'user' as const, text: `turn ${index}`, assetIds: [id] };
  });
  const records = { get: async (id: string) => rows.get(id) } as unknown as AssetRecords;
  const media = new AgentMedia(store, records, { agentId: 'agt_1', conversationId: 'conv_1', runId: 'run_x', owner: 'key:k' }, (id) => id);
  const messages = await historyMessages(history, { acceptsImages: true, acceptsImageUrls: false }, media);
  assert.deepEqual(reads, ['key_19'], 'only the newest image, the one that fits, is read');
  assert.equal(JSON.stringify(messages).match(/exceed the 8 MiB/g)?.length, 19);
});

test('logged run bodies reference archived images by asset id, never base64', () => {
  const body = { input: [{ type: 'input_image', image_url: uri('image/png', PNG_1X1) }, { type: 'input_image', image_url: 'https://x.example/a.png' }] };
  const logged = withAssetReferences(body, [
    { asset_id: 'asset_abc', url: '', mime_type: 'image/png', bytes: PNG_1X1.length, sha256: createHash('sha256').update(PNG_1X1).digest('hex'), source: 'inline' },
    { asset_id: 'asset_other', url: '', mime_type: 'image/png', bytes: 1, sha256: '0'.repeat(64), source: 'inline' },
  ]);
  assert.deepEqual(logged, { input: [{ type: 'input_image', image_url: 'asset:asset_abc' }, { type: 'input_image', image_url: 'https://x.example/a.png' }] });
});
