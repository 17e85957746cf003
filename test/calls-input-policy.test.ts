import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkImageUrl, inspectMessages, parseDataUri } from '../src/calls/index.js';
import { GatewayError } from '../src/errors/index.js';

const VISION = { acceptsRemoteImageUrls: true, inputModalities: ['text', 'image', 'pdf'] };

function refusedWith(run: () => unknown, code: string, param: string): void {
  assert.throws(run, (error: unknown) => error instanceof GatewayError && error.code === code && error.param === param);
}

describe('input policy of model calls', () => {
  test('data URIs: type and decoded size without decoding', () => {
    assert.deepEqual(parseDataUri('data:image/png;base64,aGVsbG8='), { mimeType: 'image/png', bytes: 5 });
    assert.deepEqual(parseDataUri('data:application/pdf;name=a.pdf;base64,AAAA'), { mimeType: 'application/pdf', bytes: 3 });
    assert.equal(parseDataUri('data:text/plain,hello'), 'not-base64');
    assert.equal(parseDataUri('https://example.com/a.png'), null);
  });

  test('image URLs: credentials, schemes and providers that cannot fetch are refused', () => {
    assert.equal(checkImageUrl('https://example.com/a.png', 'p', true), null);
    refusedWith(() => checkImageUrl('https://user:pw@example.com/a.png', 'p', true), 'invalid_image_url', 'p');
    refusedWith(() => checkImageUrl('https://user@example.com/a.png', 'p', true), 'invalid_image_url', 'p');
    refusedWith(() => checkImageUrl('file:///etc/passwd', 'p', true), 'invalid_image_url', 'p');
    refusedWith(() => checkImageUrl('not a url', 'p', true), 'invalid_image_url', 'p');
    refusedWith(() => checkImageUrl('https://example.com/a.png', 'p', false), 'invalid_image_url', 'p');
    assert.deepEqual(checkImageUrl('data:image/jpeg;base64,AAAA', 'p', false), { mimeType: 'image/jpeg', bytes: 3 });
    assert.throws(
      () => checkImageUrl('https://user:hunter2@example.com/a.png', 'p', true),
      (error: Error) => !error.message.includes('hunter2'),
    );
  });

  test('media summary: counts, types and bytes of every image and file part', () => {
    const summary = inspectMessages(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Compare' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
        { role: 'assistant', content: null, tool_calls: [] },
        { role: 'user', content: [{ type: 'input_file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,AAAAAAAA' } }] },
        { role: 'user', content: [{ type: 'file', file: { filename: 'b.pdf', mime_type: 'application/pdf', file_data: 'AAAA' } }] },
      ],
      VISION,
    );
    assert.deepEqual(summary, { images: 1, files: 2, mimeTypes: ['image/png', 'application/pdf'], bytes: 12 });
    assert.equal(inspectMessages([{ role: 'user', content: 'text only' }], VISION), null);
  });

  test('file parts: remote files, file ids and untyped base64 are refused with the field named', () => {
    const file = (value: object) => [{ role: 'user', content: [{ type: 'file', file: value }] }];
    refusedWith(() => inspectMessages(file({ file_id: 'file-1' }), VISION), 'invalid_body', 'messages[0].content[0].file.file_id');
    refusedWith(() => inspectMessages(file({ file_url: 'https://x/a.pdf' }), VISION), 'invalid_body', 'messages[0].content[0].file.file_url');
    refusedWith(() => inspectMessages(file({ file_data: 'gs://bucket/a.pdf' }), VISION), 'invalid_body', 'messages[0].content[0].file.file_data');
    refusedWith(() => inspectMessages(file({ file_data: 'AAAA' }), VISION), 'invalid_body', 'messages[0].content[0].file.mime_type');
    refusedWith(() => inspectMessages(file({}), VISION), 'invalid_body', 'messages[0].content[0].file.file_data');
  });

  test('media the model does not take → unsupported_input_modality', () => {
    const textOnly = { acceptsRemoteImageUrls: true, inputModalities: ['text'] };
    const image = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }];
    refusedWith(() => inspectMessages(image, textOnly), 'unsupported_input_modality', 'messages[0].content[0]');
    const zip = [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/zip;base64,AAAA' } }] }];
    refusedWith(() => inspectMessages(zip, VISION), 'unsupported_input_modality', 'messages[0].content[0]');
  });
});
