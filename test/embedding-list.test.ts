import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readEmbeddingList, type EmbeddingList } from '../src/providers/openai/embedding-list.js';

/*
 * The OpenAI adapter's embeddings reader: what JSON.parse would make of a response (the
 * members other than `data`, how many embeddings, the first one's size) without reading the
 * float vectors into numbers, and a rejection wherever JSON.parse rejects or there is no
 * `data` list (no embeddings response at all).
 */

/** The oracle: JSON.parse of the whole text, as the adapter read responses before. */
function parsed(text: string): EmbeddingList | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { data, ...response } = value as Record<string, unknown>;
  if (!Array.isArray(data)) return undefined;
  const items = data as unknown[];
  const first = items[0];
  const embedding = typeof first === 'object' && first !== null ? (first as { embedding?: unknown }).embedding : undefined;
  return { response, vectors: { count: items.length, dimensions: Array.isArray(embedding) ? embedding.length : null } };
}

function readsAsJsonParse(text: string): EmbeddingList | undefined {
  const expected = parsed(text);
  assert.deepEqual(readEmbeddingList(text), expected, text);
  return expected;
}

/** The texts JSON.parse is given while `run` runs. */
function textsParsed(run: () => void): string[] {
  const parse = JSON.parse;
  const texts: string[] = [];
  JSON.parse = (text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    texts.push(text);
    return parse(text, reviver) as unknown;
  };
  try {
    run();
  } finally {
    JSON.parse = parse;
  }
  return texts;
}

const item = (index: number, embedding: string) => `{"object":"embedding","index":${index},"embedding":${embedding}}`;
const list = (...items: string[]) => `{"object":"list","data":[${items.join(',')}],"model":"text-embedding-3-small","usage":{"prompt_tokens":3,"total_tokens":3}}`;
const USAGE = { prompt_tokens: 3, total_tokens: 3 };
const RESPONSE = { object: 'list', model: 'text-embedding-3-small', usage: USAGE };

describe('readEmbeddingList', () => {
  test('float vectors: the other members, the count and the first vector size, without JSON.parse reading the floats', () => {
    const text = list(item(0, '[0.1,-0.25,1e-7,-0.5E+3,0,-0,12e0]'), item(1, '[ \n\t0.5 ,\r\n 2 ]'), item(2, '[]'));
    let result: EmbeddingList | undefined;
    const texts = textsParsed(() => {
      result = readEmbeddingList(text);
    });
    assert.deepEqual(result, { response: RESPONSE, vectors: { count: 3, dimensions: 7 } });
    assert.equal(texts.length, 1);
    assert.equal(texts[0]?.replace(/"embedding":"[^"]*:(\d+)"/g, '"embedding":$1'), list(item(0, '7'), item(1, '2'), item(2, '0')), 'JSON.parse sees each vector as its length');
  });

  test('an empty first vector has size 0, an empty list no embeddings; no data, or data that is not a list, is rejected', () => {
    assert.deepEqual(readsAsJsonParse(list(item(0, '[ ]'), item(1, '[1]')))?.vectors, { count: 2, dimensions: 0 });
    assert.deepEqual(readsAsJsonParse('{"object":"list","data":[]}'), { response: { object: 'list' }, vectors: { count: 0, dimensions: null } });
    assert.equal(readsAsJsonParse('{"object":"list","data":{"embedding":[1,2]}}'), undefined);
    assert.equal(readsAsJsonParse('{"object":"list"}'), undefined);
  });

  test('base64 vectors are read as they were (one string each): no size', () => {
    const base64 = Buffer.from(new Float32Array([0.1, 0.2, 0.3]).buffer).toString('base64');
    const result = readsAsJsonParse(list(item(0, `"${base64}"`), item(1, `"${base64}"`)));
    assert.deepEqual(result, { response: RESPONSE, vectors: { count: 2, dimensions: null } });
  });

  test('usage before data, spacing everywhere JSON allows it', () => {
    const text = ' {\n  "usage" : { "prompt_tokens" : 3 , "total_tokens" : 3 } ,\n  "data" : [ { "embedding"\t:\r\n[ 1 , 2 ] , "index" : 0 } ] ,\n  "object" : "list"\n}\n';
    assert.deepEqual(readsAsJsonParse(text), { response: { usage: USAGE, object: 'list' }, vectors: { count: 1, dimensions: 2 } });
  });

  test('a malformed number in a vector is rejected, as JSON.parse rejects it', () => {
    const malformed = ['1.', '01', '.5', '1e', 'NaN', '+1', '1..2', '-', '1e+', '0x1', 'Infinity', '-.5', '1.e5', '2,', ',2', '1 2', '"1"1', '1\u00a0', '\v1', '1\f'];
    for (const number of malformed) {
      for (const text of [list(item(0, `[0.1,${number},0.3]`)), list(item(0, `[${number}]`)), list(item(0, '[1,2]'), item(1, `[${number}]`))]) {
        assert.throws(() => JSON.parse(text), SyntaxError, text);
        assert.equal(readEmbeddingList(text), undefined, text);
      }
    }
    for (const text of [list(item(0, '[1,2')), list(item(0, '[1,2]]')), `${list(item(0, '[1]'))},`, list(item(0, '[1,2]')).slice(0, -1), '']) {
      assert.equal(readEmbeddingList(text), undefined, text);
    }
  });

  test('a body that is not a JSON object is rejected', () => {
    for (const text of ['[]', '"embedding"', 'null', '42', `[${list(item(0, '[1]'))}]`]) assert.equal(readEmbeddingList(text), undefined, text);
  });

  test('the vector syntax inside a string, or under another key, is not taken for a vector', () => {
    const decoys = [
      // In a string value (its quotes escaped), at the top level and in an item.
      `{"object":"list","note":"a \\"embedding\\":[1,2] b","data":[${item(0, '[1,2,3]')}]}`,
      `{"object":"list","data":[{"embedding":[1,2,3],"note":"\\"embedding\\": [4]"}]}`,
      // A key that ends in `"embedding` (escaped quote): its value stays a list.
      `{"object":"list","\\"embedding":[1,2],"data":[${item(0, '[1,2,3]')}]}`,
      `{"object":"list","data":[{"embedding":2,"\\"embedding":[1,2]}]}`,
      // An `embedding` member outside the data items.
      `{"object":"list","usage":{"embedding":[1,2]},"data":[${item(0, '[1,2,3]')}]}`,
      `{"object":"list","usage":{"embedding":[1,2]},"data":[{"embedding":2}]}`,
      `{"object":"list","data":[{"embedding":2,"x":{"embedding":[1,2]}}]}`,
      `{"object":"list","data":[[{"embedding":[1,2]}],${item(1, '[1]')}]}`,
      // A key spelled with an escape is not seen by the search, JSON.parse reads it.
      `{"object":"list","data":[{"embedd\\u0069ng":[1,2,3]},{"embedding":[1]}]}`,
    ];
    for (const text of decoys) readsAsJsonParse(text);
    assert.deepEqual(readEmbeddingList(decoys[4]!)?.response.usage, { embedding: [1, 2] });
    assert.deepEqual(readEmbeddingList(decoys[6]!)?.vectors, { count: 1, dimensions: null }, 'a number as embedding is no vector size');
  });

  test('a repeated embedding key: the last one counts, as for JSON.parse (a number is no vector size)', () => {
    for (const text of [
      list('{"embedding":[1,2,3],"embedding":[1]}'),
      list('{"embedding":[1,2,3],"embedding":"AAAA"}'),
      list('{"embedding":"AAAA","embedding":[1,2]}'),
      list('{"embedding":[1],"embedding":[1,2]}', item(1, '[1,2]')),
      list('{"embedding":[1,2],"embedding":2}'),
      list('{"embedding":[1,2],"embedd\\u0069ng":2}'),
    ]) {
      readsAsJsonParse(text);
    }
  });
});

describe('readEmbeddingList against JSON.parse on generated bodies', () => {
  /** mulberry32: the same bodies on every run. */
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state + 0x6d2b79f5) | 0;
      let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
      mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
      return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
    };
  }
  const next = random(20_240_607);
  const pick = <T>(choices: readonly T[]): T => choices[Math.floor(next() * choices.length)]!;
  const digits = (min: number) => Array.from({ length: min + Math.floor(next() * 4) }, () => pick([...'0123456789'])).join('');
  const space = () => pick(['', '', '', ' ', '\n', '\r\n', '\t', '  ']);

  function number(): string {
    const integer = next() < 0.3 ? '0' : pick([...'123456789']) + digits(0);
    const fraction = next() < 0.6 ? `.${digits(1)}` : '';
    const exponent = next() < 0.3 ? `${pick(['e', 'E'])}${pick(['', '+', '-'])}${digits(1)}` : '';
    return `${next() < 0.4 ? '-' : ''}${integer}${fraction}${exponent}`;
  }

  const vector = () => `[${space()}${Array.from({ length: Math.floor(next() * 6) }, () => number()).join(`${space()},${space()}`)}${space()}]`;
  const base64 = () => JSON.stringify(Buffer.from(Array.from({ length: 3 * Math.floor(next() * 4) }, () => Math.floor(next() * 256))).toString('base64'));
  const decoy = () => JSON.stringify(pick(['"embedding":[1,2]', 'text "embedding" : [ 3 ] ', 'embedding', '[1,2]', 'é \u2028']));
  const object = (members: string[]) => `{${space()}${members.sort(() => next() - 0.5).join(`${space()},${space()}`)}${space()}}`;
  const member = (key: string, value: string) => `${JSON.stringify(key)}${space()}:${space()}${value}`;

  function embeddingItem(index: number): string {
    const members = [member('object', '"embedding"'), member('index', String(index)), member('embedding', next() < 0.8 ? vector() : base64())];
    if (next() < 0.1) members.push(member('note', decoy()));
    if (next() < 0.05) members.push(member('embedding', vector()));
    return object(members);
  }

  function body(): string {
    const items = Array.from({ length: Math.floor(next() * 4) }, (_, index) => embeddingItem(index));
    const members = [
      member('object', '"list"'),
      member('data', `[${space()}${items.join(`${space()},${space()}`)}${space()}]`),
      member('model', '"text-embedding-3-small"'),
      member('usage', object([member('prompt_tokens', digits(1).replace(/^0+(?=.)/, '')), member('total_tokens', '8')])),
    ];
    if (next() < 0.1) members.push(member('note', decoy()));
    if (next() < 0.05) members.push(member('extra', object([member('embedding', vector())])));
    return `${space()}${object(members)}${space()}`;
  }

  /** One edit: a character dropped, doubled, replaced or added, inside a vector more often than not. */
  function corrupted(text: string): string {
    const vectors = [...text.matchAll(/\[[^[\]{}"]*\]/g)];
    const inVector = vectors.length > 0 && next() < 0.7;
    const span = inVector ? pick(vectors) : undefined;
    const at = span !== undefined ? span.index + Math.floor(next() * span[0].length) : Math.floor(next() * text.length);
    const character = pick(['.', 'e', 'E', '-', '+', '0', '1', ',', '[', ']', '"', ' ', '\u00a0', '\v', '\f', 'x', '\\']);
    switch (pick(['drop', 'double', 'replace', 'add'])) {
      case 'drop':
        return text.slice(0, at) + text.slice(at + 1);
      case 'double':
        return text.slice(0, at) + text.slice(at, at + 1) + text.slice(at);
      case 'replace':
        return text.slice(0, at) + character + text.slice(at + 1);
      default:
        return text.slice(0, at) + character + text.slice(at);
    }
  }

  test('valid bodies read as JSON.parse reads them, vectors as their counts', () => {
    for (let run = 0; run < 3000; run += 1) assert.notEqual(readsAsJsonParse(body()), undefined);
  });

  test('corrupted bodies are rejected exactly when JSON.parse rejects them', () => {
    let rejected = 0;
    for (let run = 0; run < 20_000; run += 1) {
      if (readsAsJsonParse(corrupted(body())) === undefined) rejected += 1;
    }
    assert.ok(rejected > 5000 && rejected < 19_000, `both kinds were generated (${rejected} rejected)`);
  });
});
