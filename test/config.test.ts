import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, resolveSecrets } from '../src/config/index.js';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'modelgate-config-'));
}

describe('configuration', () => {
  test('defaults match docs/configuration.md', () => {
    const cwd = tempDir();
    const config = loadConfig({ env: {}, cwd });
    assert.equal(config.server.host, '127.0.0.1');
    assert.equal(config.server.port, 8080);
    assert.equal(config.dataDir, join(cwd, '.modelgate'));
    assert.equal(config.requireKeys, true);
    assert.equal(config.logs.payloads, true);
    assert.equal(config.upstream.timeoutMs, 60000);
    assert.equal(config.providers.openai.baseUrl, 'https://api.openai.com/v1');
    assert.equal(config.providers.gemini.baseUrl, 'https://generativelanguage.googleapis.com');
    assert.equal(config.providers.anthropic.baseUrl, 'https://api.anthropic.com');
    assert.deepEqual(config.agents.httpAllowlist, []);
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.server));
  });

  test('precedence: flags > environment > config file > defaults', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'modelgate.yaml'), 'server:\n  port: 7000\n  host: 0.0.0.0\nlogs:\n  payloads: false\n');
    const fromFile = loadConfig({ env: {}, cwd });
    assert.equal(fromFile.server.port, 7000);
    assert.equal(fromFile.server.host, '0.0.0.0');
    assert.equal(fromFile.logs.payloads, false);

    const fromEnv = loadConfig({ env: { MODELGATE_PORT: '7100', MODELGATE_LOG_PAYLOADS: 'true' }, cwd });
    assert.equal(fromEnv.server.port, 7100);
    assert.equal(fromEnv.server.host, '0.0.0.0');
    assert.equal(fromEnv.logs.payloads, true);

    const fromFlags = loadConfig({ env: { MODELGATE_PORT: '7100' }, cwd, flags: { port: 7200 } });
    assert.equal(fromFlags.server.port, 7200);
  });

  test('PORT is honoured when MODELGATE_PORT is not set', () => {
    assert.equal(loadConfig({ env: { PORT: '9001' }, cwd: tempDir() }).server.port, 9001);
    assert.equal(loadConfig({ env: { PORT: '9001', MODELGATE_PORT: '9002' }, cwd: tempDir() }).server.port, 9002);
  });

  test('--config / MODELGATE_CONFIG choose the file; a missing explicit file is an error', () => {
    const cwd = tempDir();
    const path = join(cwd, 'other.yaml');
    writeFileSync(path, 'requireKeys: false\n');
    assert.equal(loadConfig({ env: { MODELGATE_CONFIG: path }, cwd }).requireKeys, false);
    assert.equal(loadConfig({ env: {}, cwd, flags: { configPath: path } }).requireKeys, false);
    assert.throws(() => loadConfig({ env: { MODELGATE_CONFIG: join(cwd, 'nope.yaml') }, cwd }), /does not exist/);
  });

  test('MODELGATE_CONFIG set but empty is unset, like every other variable', () => {
    // Compose files pass `MODELGATE_CONFIG: ${MODELGATE_CONFIG}` empty when it is not set: the
    // working directory was then read as the config file ("not valid YAML: EISDIR").
    const cwd = tempDir();
    writeFileSync(join(cwd, 'modelgate.yaml'), 'requireKeys: false\n');
    assert.equal(loadConfig({ env: { MODELGATE_CONFIG: '' }, cwd }).requireKeys, false);
  });

  test('lists come from comma-separated environment values', () => {
    const config = loadConfig({ env: { MODELGATE_AGENT_HTTP_ALLOWLIST: 'api.example.com, tools.example.com:8443' }, cwd: tempDir() });
    assert.deepEqual(config.agents.httpAllowlist, ['api.example.com', 'tools.example.com:8443']);
  });

  test('bad values stop start-up with one message naming the field and its source', () => {
    const cwd = tempDir();
    assert.throws(() => loadConfig({ env: { MODELGATE_PORT: 'eighty' }, cwd }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /MODELGATE_PORT must be a whole number/);
      return true;
    });
    assert.throws(() => loadConfig({ env: { MODELGATE_REQUIRE_KEYS: 'maybe' }, cwd }), /MODELGATE_REQUIRE_KEYS must be true or false/);
    assert.throws(() => loadConfig({ env: { MODELGATE_PORT: '70000' }, cwd }), /invalid setting server\.port \(from environment variable MODELGATE_PORT\)/);
    writeFileSync(join(cwd, 'modelgate.yaml'), 'upstream:\n  timeoutMs: -5\n');
    assert.throws(() => loadConfig({ env: {}, cwd }), /invalid setting upstream\.timeoutMs \(from config file .*modelgate\.yaml\)/);
    writeFileSync(join(cwd, 'modelgate.yaml'), 'server:\n  prot: 1\n');
    assert.throws(() => loadConfig({ env: {}, cwd }), /server\.prot.*not a known setting/);
    writeFileSync(join(cwd, 'modelgate.yaml'), 'server: [1, 2\n');
    assert.throws(() => loadConfig({ env: {}, cwd }), /not valid YAML/);
  });

  test('a duration longer than a Node timer can wait is refused, naming the setting', () => {
    // Node runs a timer of 2^31 ms or more after 1 ms: keys.cacheRefreshMs: 3000000000 re-read
    // every key each millisecond, and an upstream timeout that long ended every call at once.
    const cwd = tempDir();
    const durations = [
      'server.shutdownGraceMs',
      'server.requestTimeoutMs',
      'server.clientStallTimeoutMs',
      'upstream.timeoutMs',
      'upstream.streamIdleTimeoutMs',
      'keys.cacheRefreshMs',
      'logs.flushIntervalMs',
      'limits.redisCommandTimeoutMs',
      'agents.runTimeoutMs',
      'agents.httpTimeoutMs',
    ];
    for (const path of durations) {
      const [section, name] = path.split('.');
      writeFileSync(join(cwd, 'modelgate.yaml'), `${section}:\n  ${name}: 2147483648\n`);
      assert.throws(() => loadConfig({ env: {}, cwd }), new RegExp(`invalid setting ${path.replace('.', '\\.')} .*less or equal to 2147483647`));
      writeFileSync(join(cwd, 'modelgate.yaml'), `${section}:\n  ${name}: 2147483647\n`);
      const config = loadConfig({ env: {}, cwd }) as unknown as Record<string, Record<string, number>>;
      assert.equal(config[section!]![name!], 2147483647);
    }
    assert.throws(
      () => loadConfig({ env: { MODELGATE_UPSTREAM_TIMEOUT_MS: '3000000000' }, cwd: tempDir() }),
      /invalid setting upstream\.timeoutMs \(from environment variable MODELGATE_UPSTREAM_TIMEOUT_MS\)/,
    );
  });

  test('an unknown field gets the closest known name, and every problem of a file is reported at once', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'modelgate.yaml'), 'providers:\n  openai:\n    baseURL: https://example.com/v1\n');
    assert.throws(
      () => loadConfig({ env: {}, cwd }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /^invalid setting providers\.openai\.baseURL \(from config file .*modelgate\.yaml\): is not a known setting \(did you mean baseUrl\?\)$/.test(error.message),
    );
    writeFileSync(
      join(cwd, 'modelgate.yaml'),
      [
        'server:',
        '  port: eighty',
        '  bodyLimit: 10',
        'logs:',
        '  retentionDays: -1',
        'providers:',
        '  compatible:',
        '    - name: ollama',
        '      baseUrl: http://127.0.0.1:11434/v1',
        '      modls: []',
        'observability: {}',
        '',
      ].join('\n'),
    );
    let message = '';
    try {
      loadConfig({ env: {}, cwd });
    } catch (error) {
      message = (error as Error).message;
    }
    const lines = message.split('\n');
    assert.equal(lines[0], '5 settings are invalid:');
    assert.equal(lines.length, 6, message);
    assert.ok(lines.some((line) => /invalid setting server\.port .*: expected integer/.test(line)), message);
    assert.ok(lines.some((line) => /invalid setting server\.bodyLimit .*is not a known setting \(did you mean bodyLimitBytes\?\)/.test(line)), message);
    assert.ok(lines.some((line) => /invalid setting logs\.retentionDays .*greater or equal to 0/.test(line)), message);
    assert.ok(lines.some((line) => /invalid setting providers\.compatible\.0\.modls .*is not a known setting \(did you mean models\?\)/.test(line)), message);
    assert.ok(lines.some((line) => /invalid setting observability .*is not a known setting$/.test(line)), message);
  });

  test("a compatible provider may not take another provider's name", () => {
    const cwd = tempDir();
    const provider = (name: string) => `    - name: ${name}\n      baseUrl: http://127.0.0.1:11434/v1\n`;
    // Named after a vendor, it silently took over that vendor's whole catalog.
    writeFileSync(join(cwd, 'modelgate.yaml'), `providers:\n  compatible:\n${provider('openai')}`);
    assert.throws(() => loadConfig({ env: {}, cwd }), /invalid setting providers\.compatible\[0\]\.name: "openai" is already the name of a provider/);
    writeFileSync(join(cwd, 'modelgate.yaml'), `providers:\n  compatible:\n${provider('ollama')}${provider('ollama')}`);
    assert.throws(() => loadConfig({ env: {}, cwd }), /invalid setting providers\.compatible\[1\]\.name: "ollama"/);
    writeFileSync(join(cwd, 'modelgate.yaml'), `providers:\n  compatible:\n${provider('ollama')}${provider('vllm')}`);
    assert.deepEqual(loadConfig({ env: {}, cwd }).providers.compatible.map((entry) => entry.name), ['ollama', 'vllm']);
  });

  test('a setting that takes one of several kinds of value says what to send', () => {
    // These said "expected union value", and a bad price pointed at a price field that was fine.
    const cwd = tempDir();
    assert.throws(
      () => loadConfig({ env: { MODELGATE_LOG_LEVEL: 'verbose' }, cwd }),
      /invalid setting server\.logLevel \(from environment variable MODELGATE_LOG_LEVEL\): must be one of fatal, error, warn, info, debug, trace, silent$/,
    );
    const cases: [string, RegExp][] = [
      ['catalog:\n  models:\n    - id: x\n      pricing:\n        input_per_million: -1\n', /invalid setting catalog\.models\.0\.pricing\.input_per_million \(from config file .*\): expected number to be greater or equal to 0$/],
      ['catalog:\n  models:\n    - id: x\n      pricing:\n        status: guessed\n', /invalid setting catalog\.models\.0\.pricing\.status .*: must be one of documented, short_context, docs_inferred, starts_at$/],
      ['catalog:\n  models:\n    - id: x\n      context_window: 0\n', /invalid setting catalog\.models\.0\.context_window .*: expected integer to be greater or equal to 1$/],
      ['agents:\n  mediaStore:\n    kind: gcs\n', /invalid setting agents\.mediaStore\.kind .*: must be one of filesystem, s3$/],
    ];
    for (const [file, message] of cases) {
      writeFileSync(join(cwd, 'modelgate.yaml'), file);
      assert.throws(() => loadConfig({ env: {}, cwd }), message);
    }
  });

  test('a secret with a bad value is named without printing the secret', () => {
    const cwd = tempDir();
    const secretValue = 'postgres://user:SuperSecretPassword@db/x';
    try {
      loadConfig({ env: { DATABASE_URL: secretValue.replace('postgres', 'mysql') }, cwd });
      assert.fail('expected an error');
    } catch (error) {
      assert.match((error as Error).message, /databaseUrl/);
      assert.doesNotMatch((error as Error).message, /SuperSecretPassword/);
    }
  });

  test('PostgreSQL mode requires MODELGATE_ENCRYPTION_KEY', () => {
    assert.throws(
      () => loadConfig({ env: { DATABASE_URL: 'postgres://postgres@127.0.0.1/test' }, cwd: tempDir() }),
      /MODELGATE_ENCRYPTION_KEY is required/,
    );
  });

  test('embedded mode generates the encryption key and admin token once, mode 0600', () => {
    const cwd = tempDir();
    const config = loadConfig({ env: {}, cwd });
    const first = resolveSecrets(config);
    const second = resolveSecrets(config);
    assert.equal(first.encryptionKey.length, 32);
    assert.deepEqual(first.encryptionKey, second.encryptionKey);
    assert.equal(first.adminToken, second.adminToken);
    assert.ok(first.adminTokenFile !== undefined);
    assert.equal(statSync(first.adminTokenFile).mode & 0o777, 0o600);
    assert.equal(statSync(join(config.dataDir, 'encryption.key')).mode & 0o777, 0o600);
  });

  test('an admin token given by the operator is never written to disk', () => {
    const cwd = tempDir();
    const token = 'operator-token-0123456789abcdef';
    const config = loadConfig({ env: { MODELGATE_ADMIN_TOKEN: token }, cwd });
    const secrets = resolveSecrets(config);
    assert.equal(secrets.adminToken, token);
    assert.equal(secrets.adminTokenFile, undefined);
    assert.throws(() => readFileSync(join(config.dataDir, 'admin-token')), /ENOENT/);
  });

  test('an admin token the admin API could never accept stops start-up, naming the setting but not the token', () => {
    // It is sent as "Authorization: Bearer <token>", which ends at the first space; sk-mg- is the model keys' prefix.
    for (const token of ['correct horse battery staple', 'tab\tseparated-token-0123456789', 'sk-mg-operator-token-0123456789']) {
      assert.throws(() => loadConfig({ env: { MODELGATE_ADMIN_TOKEN: token }, cwd: tempDir() }), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /invalid setting adminToken \(from environment variable MODELGATE_ADMIN_TOKEN\)/);
        assert.ok(!error.message.includes(token));
        return true;
      });
    }
  });

  test('an encryption key that is not 32 bytes of base64 is refused', () => {
    const config = loadConfig({ env: { MODELGATE_ENCRYPTION_KEY: Buffer.alloc(16).toString('base64') }, cwd: tempDir() });
    assert.throws(() => resolveSecrets(config), /encryptionKey: must be 32 bytes/);
  });
});
