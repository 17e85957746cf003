import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { redactText, redactValue } from '../src/logs/index.js';

// Fake values with real shapes, assembled at run time so the source holds no key-shaped string.
const join = (...parts: string[]) => parts.join('');
const alnum = (length: number, seed = 'aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z') => seed.repeat(Math.ceil(length / seed.length)).slice(0, length);
const upper = (length: number) => 'Q7WX3ZR9K2MB5TLA8PYD'.repeat(2).slice(0, length);
const AWS_SECRET = 'FAKEfake00/+'.repeat(4).slice(0, 40);

/**
 * Each family: texts holding a secret (`found`: the secret must be gone, the text around it
 * kept) and ordinary texts like it that must come back unchanged (`kept`).
 */
const FAMILIES: Record<string, { found: [text: string, secret: string][]; kept: string[] }> = {
  jwt: {
    found: [[`token ${join('eyJ', 'hbGciOiJIUzI1NiJ9', '.', 'eyJ', 'zdWIiOiIxMjM0NTY3ODkwIn0', '.', 'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U')} ok`, 'zdWIiOiIxMjM0NTY3ODkwIn0']],
    kept: ['The keys are eyJ-prefixed in JWTs; see RFC 7519 section 3.', 'hey Jude.eyJeans'],
  },
  aws: {
    found: [
      [`id ${join('ASIA', upper(16))} and ${join('AKIA', upper(16))}`, upper(16)],
      [`aws_secret_access_key = ${alnum(40)}`, alnum(40)],
      [`{"AccessKeyId": "x", "SecretAccessKey": "${alnum(40)}", "SessionToken": "${alnum(60)}"}`, alnum(40)],
    ],
    kept: ['ASIAN cuisine and AKIAN art', 'Set aws_secret_access_key in ~/.aws/credentials.'],
  },
  // A bare AWS secret access key in prose: 40 base64 characters after "aws" or "secret".
  awssecret: {
    found: [
      [`My AWS keys: ${join('AKIA', upper(16))} and the secret ${AWS_SECRET} — keep it safe.`, AWS_SECRET],
      [`aws creds for the build box:\n${AWS_SECRET}`, AWS_SECRET],
      [`Secret is ${AWS_SECRET}.`, AWS_SECRET],
      [`export AWS_SECRET_ACCESS_KEY=${AWS_SECRET}`, AWS_SECRET],
      [`The secret (${AWS_SECRET}) rotates monthly`, AWS_SECRET],
    ],
    kept: [
      `secret commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b is the fix`,
      `secret digest n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg= (SHA-256, base64)`,
      `aws blob ${alnum(64)} of 48 bytes`,
      `AWS regions: eu-west-1, us-east-1; the secret sauce is documentation.`,
      `a token ${AWS_SECRET} with no word of the cloud before it`,
      `aws ${'x'.repeat(70)} ${AWS_SECRET}`,
      `secret: ${'abcdefghij'.repeat(4)} is all lower case`,
      `SECRET: ${'ABCDEFGHIJ'.repeat(4)}`,
    ],
  },
  github: {
    found: [
      [`push with ${join('github_', 'pat_', alnum(82))}`, alnum(82)],
      [`old ${join('gh', 'p_', alnum(36))}`, alnum(36)],
    ],
    kept: ['github_pat_ tokens are fine-grained; ghp_ ones are classic.'],
  },
  gitlab: { found: [[`CI ${join('glpat', '-', alnum(20))}`, alnum(20)]], kept: ['glpat- is GitLab\'s prefix.'] },
  slack: {
    found: [
      [`bot ${join('xo', 'xb-', '1234567890123-1234567890123-', alnum(24))}`, alnum(24)],
      [`user ${join('xo', 'xp-', '1234567890-', alnum(20))}`, alnum(20)],
      [`hook ${join('https://hooks.', 'slack.com/services/', 'T0000/B0000/', alnum(24))}`, alnum(24)],
    ],
    kept: ['xoxo, see you soon', 'Slack tokens start with xoxb- or xoxp-.'],
  },
  stripe: {
    found: [
      [`charge with ${join('sk', '_live_', alnum(24))}`, alnum(24)],
      [`restricted ${join('rk', '_live_', alnum(24))}`, alnum(24)],
      [`webhook ${join('whsec', '_', alnum(32))}`, alnum(32)],
    ],
    kept: [`publishable ${join('pk', '_live_', alnum(24))} is public`, 'use sk_live_ keys only on servers'],
  },
  pem: {
    found: [
      [`key:\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n${alnum(64)}\n-----END PGP PRIVATE KEY BLOCK-----\nbye`, alnum(64)],
      [`cut off: -----BEGIN PRIVATE KEY-----\n${alnum(64)}\n${alnum(30, 'Zz9')}`, alnum(30, 'Zz9')],
      [`-----BEGIN OPENSSH PRIVATE KEY-----\n${alnum(70)}\n-----END OPENSSH PRIVATE KEY-----`, alnum(70)],
    ],
    kept: ['-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----', '-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----'],
  },
  assigned: {
    found: [
      ['My password: hunter2 and nothing else', 'hunter2'],
      ['DB_PASSWORD=s3cr3t-Value', 's3cr3t-Value'],
      ['{"client_secret": "abc123def456"}', 'abc123def456'],
      ['api_key = "k-123456789"', 'k-123456789'],
    ],
    kept: [
      'const password = process.env.DB_PASSWORD;',
      'interface Login { password: string; }',
      'password = getPassword()',
      'Set api_key: ${API_KEY} in the file.',
      'password: *** (hidden)',
      'Enter your password: it must have 12 characters.',
      'The secret: practice every day.',
      'max_tokens: 256 and the tokens: 12',
    ],
  },
  url: {
    found: [
      ['connect to postgres://app:Pa55word@db.internal:5432/prod now', 'Pa55word'],
      ['see https://alice:hunter22@example.com/x.png', 'hunter22'],
      ['redis://:r3dis-pass@cache:6379', 'r3dis-pass'],
    ],
    kept: ['see https://example.com:8443/path?q=1 and mailto:someone@example.com', 'ssh://git@example.com/repo.git'],
  },
  query: {
    found: [
      ['GET https://api.example.com/v1?api_key=abc123xyz&q=1', 'abc123xyz'],
      ['https://maps.example.com/js?key=AbC123dEf456', 'AbC123dEf456'],
      ['callback#state=1&access_token=tok-98765&x', 'tok-98765'],
      ['https://bucket.example.com/o?X-Amz-Signature=deadbeef01&X-Amz-Credential=AK%2F2024', 'deadbeef01'],
      ['https://blob.example.com/c?sv=2022&sig=Zm9vYmFy%3D', 'Zm9vYmFy%3D'],
    ],
    kept: ['https://example.com/search?q=cats&page=2&sort=desc', 'Why? Because a&b=c is algebra.'],
  },
  bearer: {
    found: [
      ['Authorization: Bearer abc.def-ghi_jkl123', 'abc.def-ghi_jkl123'],
      [`Authorization: Basic ${Buffer.from('user:password').toString('base64')}`, Buffer.from('user:password').toString('base64')],
    ],
    kept: ['Bearer instruments and Basic instructions', 'Bearer tokens are sent in a header; Basic auth too.'],
  },
  google: {
    found: [
      [`client ${join('GOC', 'SPX-', alnum(28))}`, alnum(28)],
      [`access ${join('ya', '29.', alnum(60))}`, alnum(60)],
      [`key ${join('AI', 'za', alnum(35))}`, alnum(35)],
    ],
    kept: ['ya29 is a prefix; GOCSPX is another.'],
  },
  npm: { found: [[`//registry/:_authToken=${join('np', 'm_', alnum(36))}`, alnum(36)]], kept: ['npm_config_cache and npm_lifecycle_event'] },
  sendgrid: { found: [[`mail ${join('S', 'G.', alnum(22), '.', alnum(43))}`, alnum(43)]], kept: ['SG.1 is a section number; see SG.2.'] },
  huggingface: { found: [[`hub ${join('h', 'f_', alnum(34))}`, alnum(34)]], kept: ['hf_transfer is a package name'] },
  openai: {
    found: [[`key ${join('sk', '-proj-', alnum(40))}`, alnum(40)]],
    kept: ['task-management and sk-learn'],
  },
};

/** Ordinary text of every kind: none of it may change. */
const ORDINARY = [
  'Explain in two sentences why the sky is blue, and mention Rayleigh scattering by name.',
  'Request 3f2504e0-4f89-11d3-9a0c-0305e82c3301 failed; sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.',
  'function login(user, password) {\n  if (!password) throw new Error("password required");\n  return hash(password);\n}',
  'SELECT key, value FROM settings WHERE key = $1 AND token_count > 10;',
  'curl https://example.com/api/v1/items?limit=10&offset=20 -H "Accept: application/json"',
  'The base64 of "hello" is aGVsbG8=, and SGVsbG8gd29ybGQ= is "Hello world".',
  'Tokens: the model reads 4,096 tokens; the API key goes in a header, never in the prompt.',
  '| name | value |\n|---|---|\n| temperature | 0.7 |\n| max_tokens | 256 |',
  'Use `Authorization: Bearer $API_KEY` with the key from your dashboard.',
];

describe('secret patterns: each family', () => {
  for (const [family, { found, kept }] of Object.entries(FAMILIES)) {
    test(family, () => {
      for (const [text, secret] of found) {
        const redacted = redactText(text);
        assert.ok(!redacted.includes(secret), `${family}: ${JSON.stringify(text.slice(0, 80))} → ${JSON.stringify(redacted)}`);
        assert.match(redacted, /\[redacted/, `${family}: a marker stands where the secret was`);
        assert.equal(redactText(redacted), redacted, `${family}: redacting again changes nothing`);
      }
      for (const text of kept) assert.equal(redactText(text), text, `${family} must leave ${JSON.stringify(text)} alone`);
    });
  }

  test('ordinary prose, code, identifiers and short base64 are left alone', () => {
    for (const text of ORDINARY) assert.equal(redactText(text), text);
    const value = { messages: ORDINARY.map((content) => ({ role: 'user', content })) };
    assert.equal(redactValue(value), value, 'nothing changed, so nothing was copied');
  });

  test('the text around a secret is kept, with the name or user in front of the marker', () => {
    assert.equal(redactText('My password: hunter2 and nothing else'), 'My password: [redacted] and nothing else');
    assert.equal(redactText('postgres://app:Pa55word@db:5432/prod'), 'postgres://app:[redacted]@db:5432/prod');
    assert.equal(redactText('https://x.example/?key=abc&q=1'), 'https://x.example/?key=[redacted]&q=1');
  });
});

describe('JSON inside a string', () => {
  test('tool-call arguments and tool results are read as JSON and redacted by field name', () => {
    const request = {
      messages: [
        { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'login', arguments: '{"user":"ann","password":"x1","api_key":"k","depth":{"access_token":"t"}}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '[{"ok":true,"password":"pw"}]' },
      ],
    };
    const redacted = redactValue(request) as typeof request;
    const args = JSON.parse(redacted.messages[0]!.tool_calls![0]!.function.arguments) as Record<string, unknown>;
    assert.deepEqual(args, { user: 'ann', password: '[redacted]', api_key: '[redacted]', depth: { access_token: '[redacted]' } });
    assert.deepEqual(JSON.parse(redacted.messages[1]!.content!), [{ ok: true, password: '[redacted]' }]);
  });

  test('JSON with nothing to redact is kept byte for byte; text that only looks like JSON is searched as text', () => {
    const args = '{ "city": "Paris",  "unit": "celsius" }';
    assert.deepEqual(redactValue({ arguments: args }), { arguments: args });
    assert.deepEqual(redactValue({ content: '{not json, password: hunter2}' }), { content: '{not json, password: [redacted]}' });
  });

  test('a member name holding a secret is found too', () => {
    const key = join('sk', '-proj-', alnum(40));
    assert.ok(!String((redactValue({ arguments: `{"${key}": 1}` }) as { arguments: string }).arguments).includes(key));
  });
});

describe('redaction runs once', () => {
  test('a placeholder is never redacted again: media references keep their size and digest', () => {
    const png = Buffer.alloc(3000, 7);
    png.write('\x89PNG', 0, 'latin1');
    const once = redactValue({ data: [{ b64_json: png.toString('base64') }], image: `data:image/png;base64,${png.toString('base64')}` });
    assert.match(JSON.stringify(once), /\[omitted image\/png: 3000 bytes/);
    assert.deepEqual(redactValue(once), once);
    for (const placeholder of ['[redacted]', '[redacted: 12 characters]', '[redacted private key]', '[omitted: nested too deep]']) {
      assert.equal(redactText(placeholder), placeholder);
      assert.deepEqual(redactValue({ b64_json: placeholder, password_hint: placeholder }), { b64_json: placeholder, password_hint: placeholder });
    }
  });

  test('VETTING\'s context.sessionId is a session credential, redacted by name', () => {
    assert.deepEqual(redactValue({ metadata: { sessionId: 'opaque-session-value', userId: 'user-42' } }), {
      metadata: { sessionId: '[redacted]', userId: 'user-42' },
    });
  });
});
