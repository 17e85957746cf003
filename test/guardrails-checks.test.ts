import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCheck as buildAnyCheck, CallGuard, findPii, ibanValid, luhn, maskSpans, parseGuardrails, runStage, type GuardrailConfig, type PiiKind, type SpanCheck } from '../src/guardrails/index.js';

/** A built-in check (they find spans, synchronously). */
const buildCheck = (spec: Parameters<typeof buildAnyCheck>[0], field: string) => buildAnyCheck(spec, field, { env: {} }) as SpanCheck;
const NO_SCOPE = { metadata: { requestId: null, keyId: null, projectId: null, model: null, capability: 'chat' } };

// Key-shaped values assembled at run time, so the source holds none.
const join = (...parts: string[]) => parts.join('');

/** Each kind: texts that hold one (the matched text given) and look-alikes that hold none. */
const PII: Record<PiiKind, { found: [text: string, match: string][]; kept: string[] }> = {
  email: {
    found: [
      ['write to ada.lovelace@example.org today', 'ada.lovelace@example.org'],
      ['<bob+tag@mail.co.uk>', 'bob+tag@mail.co.uk'],
    ],
    kept: ['@Override public void run()', 'import x from "@types/node"', 'see icon@2x.png', 'user@localhost', 'npm i lodash@4.17.21', 'a @ b.com'],
  },
  phone: {
    found: [
      ['call +44 20 7946 0958 now', '+44 20 7946 0958'],
      ['US (212) 555-0187 office', '(212) 555-0187'],
      ['cell 415-555-0132.', '415-555-0132'],
    ],
    kept: ['released 2024-01-15', 'version 1.2.3', 'order 12345', 'pi is 3.14159265', '+1 more'],
  },
  card: {
    found: [
      ['visa 4111 1111 1111 1111 exp', '4111 1111 1111 1111'],
      ['mc 5555-5555-5555-4444', '5555-5555-5555-4444'],
      ['amex 378282246310005', '378282246310005'],
    ],
    kept: ['4111 1111 1111 1112 fails Luhn', 'tracking 1234567890123456', 'uuid 0000000000000000', 'ts 1700000000000'],
  },
  iban: {
    found: [
      ['pay to DE89 3704 0044 0532 0130 00 please', 'DE89 3704 0044 0532 0130 00'],
      ['GB82WEST12345698765432', 'GB82WEST12345698765432'],
    ],
    kept: ['DE89 3704 0044 0532 0130 01 has a wrong check', 'ID AB12CDEFGHIJKLMNOP'],
  },
  ip: {
    found: [
      ['from 192.168.10.42 at noon', '192.168.10.42'],
      ['host 2001:db8::8a2e:370:7334 up', '2001:db8::8a2e:370:7334'],
    ],
    kept: ['version 1.2.3.4.5', '999.1.1.1', 'time 12:30:45', 'a::b is C++', 'std::vector'],
  },
  us_ssn: {
    found: [['SSN 123-45-6789 on file', '123-45-6789']],
    kept: ['000-12-3456', '666-12-3456', '123-00-4567', 'date 2024-01-1234'],
  },
  uk_nino: {
    found: [['NI number JG 10 37 25 A', 'JG 10 37 25 A'], ['AB123456D', 'AB123456D']],
    kept: ['GB123456A', 'DA123456A', 'AB123456E', 'QQ 12 34 56 C'],
  },
  es_dni: {
    found: [['DNI 12345678Z', '12345678Z']],
    kept: ['12345678A', 'ref 87654321B'],
  },
};

describe('PII check', () => {
  for (const [kind, cases] of Object.entries(PII) as [PiiKind, (typeof PII)[PiiKind]][]) {
    test(`${kind}: found and look-alikes`, () => {
      for (const [text, match] of cases.found) {
        const spans = findPii(text, [kind]);
        assert.deepEqual(
          spans.map((span) => text.slice(span.start, span.end)),
          [match],
          `${kind} in ${JSON.stringify(text)}`,
        );
      }
      for (const text of cases.kept) assert.deepEqual(findPii(text, [kind]), [], `no ${kind} in ${JSON.stringify(text)}`);
    });
  }

  test('masking replaces each finding by its kind', () => {
    const text = 'mail ada@example.org, card 4111111111111111.';
    assert.equal(maskSpans(text, findPii(text, ['email', 'card'])), 'mail [email], card [card].');
  });

  test('check digits', () => {
    assert.equal(luhn('79927398713'), true);
    assert.equal(luhn('79927398710'), false);
    assert.equal(ibanValid('FR14 2004 1010 0505 0001 3M02 606'), true);
    assert.equal(ibanValid('FR14 2004 1010 0505 0001 3M02 607'), false);
  });
});

describe('secrets check (the request log\'s credential patterns)', () => {
  const check = buildCheck({ check: 'secrets', options: {} }, 'guardrails[0]');
  test('finds credentials and keeps what names them', () => {
    const key = join('sk-', 'proj-', 'A1b2C3d4E5f6G7h8I9j0K1l2');
    const text = `use ${key} and Authorization: Bearer ${join('abc', '123.def456')}`;
    assert.equal(maskSpans(text, check.find(text)), 'use [secret] and Authorization: Bearer [secret]');
  });
  test('ordinary text and code that reads a secret pass', () => {
    for (const text of ['The API key goes in the header.', 'password: process.env.DB_PASSWORD', 'Bearer instruments', 'sk-short']) {
      assert.deepEqual(check.find(text), [], text);
    }
  });
});

describe('keyword and regex checks', () => {
  test('keywords are whole words, case-insensitive unless asked', () => {
    const check = buildCheck({ check: 'keywords', options: { words: ['Project X', 'secret'], caseSensitive: false } }, 'g');
    assert.equal(check.find('about project x today').length, 1);
    assert.equal(check.find('the secretary and Project Xylophone').length, 0);
    const sensitive = buildCheck({ check: 'keywords', options: { words: ['ACME'], caseSensitive: true } }, 'g');
    assert.equal(sensitive.find('acme corp').length, 0);
    assert.equal(sensitive.find('ACME corp').length, 1);
  });
  test('regex patterns', () => {
    const check = buildCheck({ check: 'regex', options: { patterns: ['ticket-\\d+', 'internal only'], caseSensitive: false } }, 'g');
    const text = 'see TICKET-42, INTERNAL ONLY';
    assert.equal(maskSpans(text, check.find(text)), 'see [match], [match]');
    assert.deepEqual(check.find('ticket-x'), []);
  });
});

describe('JSON schema check', () => {
  const check = buildCheck(
    { check: 'json_schema', options: { schema: { type: 'object', required: ['answer'], properties: { answer: { type: 'string' } } } } },
    'g',
  );
  test('valid JSON of the schema passes, bare or fenced', () => {
    assert.deepEqual(check.find('{"answer": "yes"}'), []);
    assert.deepEqual(check.find('```json\n{"answer": "yes"}\n```'), []);
  });
  test('prose, broken JSON and JSON of another shape are found', () => {
    for (const text of ['The answer is yes.', '{"answer": "yes"', '{"answer": 1}', '[]', 'Here: {"answer": "yes"}']) assert.equal(check.find(text).length, 1, text);
  });
});

describe('guardrail settings', () => {
  const entry = (over: Partial<GuardrailConfig>): GuardrailConfig => ({
    name: 'g',
    check: 'pii',
    stage: ['input'],
    action: 'block',
    onError: 'closed',
    apply: { all: true, keys: [], projects: [], models: [] },
    window: 256,
    options: {},
    ...over,
  });
  const parse = (entries: GuardrailConfig[]) => parseGuardrails(entries, (policy, field) => void buildCheck(policy, field));

  test('defaults: every PII kind, fail closed', () => {
    const [policy] = parse([entry({})]);
    assert.equal(policy!.failClosed, true);
    assert.equal(policy!.check === 'pii' && policy!.options.kinds.length, 8);
  });
  test('each problem names its field', () => {
    assert.throws(() => parse([entry({}), entry({})]), /guardrails\[1\]\.name: "g" is already the name of guardrails\[0\]/);
    assert.throws(() => parse([entry({ options: { kinds: ['email', 'dna'] } })]), /guardrails\[0\]\.options\.kinds\.1/);
    assert.throws(() => parse([entry({ check: 'regex', options: { patterns: ['(unclosed'] } })]), /guardrails\[0\]\.options\.patterns\[0\]: not a valid regular expression/);
    assert.throws(() => parse([entry({ check: 'keywords', options: {} })]), /guardrails\[0\]\.options\.words/);
    assert.throws(() => parse([entry({ check: 'json_schema', stage: ['output'], options: { schema: { type: 'nonsense' } } })]), /options\.schema: not a JSON schema/);
    assert.throws(() => parse([entry({ check: 'json_schema', stage: ['input'], options: { schema: {} } })]), /stage: a json_schema guardrail checks the model's answer/);
    assert.throws(() => parse([entry({ apply: { all: false, keys: [], projects: [], models: [] } })]), /apply: attach the guardrail/);
  });
});

describe('guardrails in the config file', () => {
  test('an entry is read with its defaults; a bad one stops start-up naming the field', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join: joinPath } = await import('node:path');
    const { ConfigError, loadConfig } = await import('../src/config/index.js');
    const cwd = mkdtempSync(joinPath(tmpdir(), 'modelgate-guardrails-'));
    writeFileSync(joinPath(cwd, 'modelgate.yaml'), 'guardrails:\n  - name: no-pii\n    check: pii\n    action: mask\n    apply: { projects: [class-101] }\n');
    const config = loadConfig({ env: {}, cwd });
    assert.equal(config.guardrails[0]!.onError, 'closed');
    assert.deepEqual(config.guardrails[0]!.stage, ['input']);
    writeFileSync(joinPath(cwd, 'modelgate.yaml'), 'guardrails:\n  - name: words\n    check: regex\n    apply: { all: true }\n    options: { patterns: ["[a-"] }\n');
    assert.throws(() => loadConfig({ env: {}, cwd }), (error: unknown) => error instanceof ConfigError && /guardrails\[0\]\.options\.patterns\[0\]/.test(error.message));
    writeFileSync(joinPath(cwd, 'modelgate.yaml'), 'guardrails:\n  - name: x\n    check: pii\n    action: redact\n    apply: { all: true }\n');
    assert.throws(() => loadConfig({ env: {}, cwd }), /guardrails\.0\.action.*must be one of block, mask, log/);
  });
});

describe('a check that fails', () => {
  const failing = (onError: 'closed' | 'open') => {
    const [policy] = parseGuardrails(
      [{ name: 'flaky', check: 'keywords', stage: ['input'], action: 'log', onError, apply: { all: true, keys: [], projects: [], models: [] }, window: 256, options: { words: ['x'] } }],
      () => undefined,
    );
    return { policy: policy!, check: { kind: 'spans' as const, maskable: true, find: () => { throw new Error('checker down'); } } };
  };
  test('closed (the default): the call is blocked, whatever the action', async () => {
    const result = await runStage([failing('closed')], 'input', ['hello']);
    assert.equal(result.blocked?.code, 'guardrail_blocked');
    assert.equal(result.blocked?.status, 400);
    assert.match(result.blocked!.message, /"flaky" could not check this request and fails closed/);
    assert.deepEqual(result.verdicts.map((verdict) => [verdict.outcome, verdict.failed]), [['blocked', true]]);
  });
  test('open: it passes, recorded as an error', async () => {
    const result = await runStage([failing('open')], 'input', ['hello']);
    assert.equal(result.blocked, null);
    assert.deepEqual(result.verdicts.map((verdict) => verdict.outcome), ['error']);
  });
  test('on output the block is a 502', async () => {
    const guardrail = failing('closed');
    guardrail.policy.stages = new Set(['output']);
    const result = await runStage([guardrail], 'output', ['hello']);
    assert.equal(result.blocked?.status, 502);
    assert.equal(result.blocked?.type, 'api_error');
  });
});

describe('a guarded stream', () => {
  const chunk = (content: string) => ({ type: 'chunk-received', chunk: { choices: [{ index: 0, delta: { content } }] } });
  /** A provider stream whose batches the test pushes one at a time. */
  const scripted = () => {
    let reader: { onEvents(events: readonly unknown[]): boolean; onEnd(): void } | null = null;
    return {
      stream: { read: (r: typeof reader) => void (reader = r), resume: () => undefined },
      push: (...events: unknown[]) => reader!.onEvents(events),
      end: () => reader!.onEnd(),
    };
  };
  const guardOf = (window: number) => {
    const [policy] = parseGuardrails(
      [{ name: 'codename', check: 'keywords', stage: ['output'], action: 'block', onError: 'closed', apply: { all: true, keys: [], projects: [], models: [] }, window, options: { words: ['Nightingale'] } }],
      () => undefined,
    );
    const verdicts: string[] = [];
    const guard = new CallGuard('chat', [{ policy: policy!, check: buildCheck(policy!, 'g') }], (found) => verdicts.push(...found.map((verdict) => verdict.outcome)), NO_SCOPE);
    return { guard, verdicts };
  };
  const textOf = (events: unknown[]) => events.map((event) => ((event as ReturnType<typeof chunk>).chunk?.choices[0]?.delta.content ?? '')).join('');

  test('text is handed on once a window of text came after it; the rest at the end', async () => {
    const provider = scripted();
    const { guard, verdicts } = guardOf(16);
    const received: unknown[] = [];
    let ended = false;
    ((await guard.answer(provider.stream)) as typeof provider.stream).read({ onEvents: (events: readonly unknown[]) => (received.push(...events), true), onEnd: () => (ended = true) });
    provider.push(chunk('0123456789'));
    assert.equal(textOf(received), '', 'nothing before a window of text followed');
    provider.push(chunk('abcdefghij'), chunk('ABCDEFGHIJ'));
    assert.equal(textOf(received), '0123456789', 'the first piece, once 16 characters came after it');
    provider.end();
    assert.equal(textOf(received), '0123456789abcdefghijABCDEFGHIJ');
    assert.equal(ended, true);
    assert.deepEqual(verdicts, ['passed']);
  });

  test('a finding ends the stream with the guardrail error; what was found is never handed on', async () => {
    const provider = scripted();
    const { guard, verdicts } = guardOf(16);
    const received: unknown[] = [];
    ((await guard.answer(provider.stream)) as typeof provider.stream).read({ onEvents: (events: readonly unknown[]) => (received.push(...events), true), onEnd: () => undefined });
    provider.push(chunk('An opening that is '));
    provider.push(chunk('long enough. '));
    provider.push(chunk('Then Night'));
    assert.equal(textOf(received), 'An opening that is ', 'what lies a window before the end went out');
    provider.push(chunk('ingale and more text after it.'));
    const failure = received.at(-1) as { type: string; error: { code: string; status: number } };
    assert.equal(failure.type, 'stream-failed');
    assert.equal(failure.error.code, 'guardrail_blocked');
    assert.equal(failure.error.status, 502);
    assert.ok(!textOf(received).includes('Night'), textOf(received));
    assert.equal(textOf(received), 'An opening that is ');
    provider.push(chunk('late'));
    provider.end();
    assert.ok(!textOf(received).includes('late'));
    assert.deepEqual(verdicts, ['blocked']);
  });

  const maskOf = (capability: string) => {
    const [policy] = parseGuardrails(
      [{ name: 'no-pii', check: 'pii', stage: ['output'], action: 'mask', onError: 'closed', apply: { all: true, keys: [], projects: [], models: [] }, window: 24, options: { kinds: ['email'] } }],
      () => undefined,
    );
    const verdicts: string[] = [];
    return { guard: new CallGuard(capability, [{ policy: policy!, check: buildCheck(policy!, 'g') }], (found) => verdicts.push(...found.map((verdict) => verdict.outcome)), NO_SCOPE), verdicts };
  };

  test('mask on a chat stream: a finding within the window is replaced in the events that carry it, split or not', async () => {
    const provider = scripted();
    const { guard, verdicts } = maskOf('chat');
    const received: unknown[] = [];
    ((await guard.answer(provider.stream)) as typeof provider.stream).read({ onEvents: (events: readonly unknown[]) => (received.push(...events), true), onEnd: () => undefined });
    provider.push(chunk('Please write to ada.love'), chunk('lace@exam'), chunk('ple.org or to bob@example.org'));
    provider.push(chunk(' and wait for their answer, it may take a while.'));
    provider.end();
    assert.equal(textOf(received), 'Please write to [email] or to [email] and wait for their answer, it may take a while.');
    assert.ok(received.every((event) => (event as { type: string }).type === 'chunk-received'));
    assert.deepEqual(verdicts, ['masked']);
  });

  test('mask on a Responses stream blocks: its closing events repeat the whole text', async () => {
    const provider = scripted();
    const { guard } = maskOf('responses');
    const received: { type: string }[] = [];
    ((await guard.answer(provider.stream)) as typeof provider.stream).read({ onEvents: (events: readonly unknown[]) => (received.push(...(events as { type: string }[])), true), onEnd: () => undefined });
    const delta = (text: string) => ({ type: 'response-event-received', eventType: 'response.output_text.delta', json: JSON.stringify({ type: 'response.output_text.delta', delta: text }) });
    provider.push(delta('write to ada@example.org now, and some more text after it'));
    provider.end();
    assert.equal(received.at(-1)?.type, 'stream-failed');
  });
});
