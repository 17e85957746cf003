import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { ConfigError, loadConfig, type GatewayConfig } from '../src/config/index.js';
import { Catalog, DEFAULT_CATALOG, ENDPOINT_BY_MODE, type ModelMode, type ResolveOptions } from '../src/catalog/index.js';
import { GatewayError } from '../src/errors/index.js';

const MODES: ModelMode[] = ['chat', 'embedding', 'image_generation', 'audio_speech', 'audio_transcription'];
const VENDOR_PROVIDERS = ['openai', 'gemini', 'anthropic'];

/** A real, validated config built from a modelgate.yaml, as start-up builds it. */
function configFrom(file: Record<string, unknown> = {}): GatewayConfig {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-catalog-'));
  try {
    writeFileSync(join(dir, 'modelgate.yaml'), toYaml(file));
    return loadConfig({ env: {}, cwd: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function catalogFrom(file: Record<string, unknown> = {}, providerNames: string[] = VENDOR_PROVIDERS): Catalog {
  const config = configFrom(file);
  return new Catalog(DEFAULT_CATALOG, config, [...providerNames, ...config.providers.compatible.map((provider) => provider.name)]);
}

function gatewayError(action: () => unknown): GatewayError {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a GatewayError');
}

const chat: ResolveOptions = { mode: 'chat' };
const shipped = catalogFrom();

describe('shipped catalog', () => {
  test('has models of OpenAI, Google and Anthropic, and every mode', () => {
    const entries = shipped.list();
    for (const owner of ['openai', 'google', 'anthropic']) {
      assert.ok(entries.some((entry) => entry.owned_by === owner && entry.mode === 'chat'), `no ${owner} chat model`);
    }
    for (const mode of MODES) assert.ok(entries.some((entry) => entry.mode === mode && entry.owned_by !== 'modelgate'), `no ${mode} model`);
  });

  test('entries are consistent with their mode', () => {
    for (const entry of shipped.list()) {
      assert.equal(entry.endpoint, ENDPOINT_BY_MODE[entry.mode], entry.id);
      assert.equal(entry.supports_streaming, entry.mode === 'chat', entry.id);
      if (entry.mode === 'chat') {
        assert.ok(entry.context_window !== null && entry.context_window > 0, `${entry.id} context_window`);
        assert.ok(entry.max_output_tokens !== null && entry.max_output_tokens > 0, `${entry.id} max_output_tokens`);
        assert.ok(['Higher', 'High', 'Average'].includes(entry.intelligence), `${entry.id} intelligence`);
      } else {
        assert.equal(entry.context_window, null, entry.id);
        assert.equal(entry.max_output_tokens, null, entry.id);
      }
      assert.ok(['Very Fast', 'Fast', 'Medium'].includes(entry.speed), `${entry.id} speed`);
      assert.ok(entry.pricing !== null, `${entry.id} ships without a price`);
    }
  });

  test('prices are in the unit of their mode, and starts_at only for image prices', () => {
    for (const entry of shipped.list()) {
      const pricing = entry.pricing!;
      if (entry.mode === 'chat' || entry.mode === 'embedding') assert.ok(pricing.input_per_million !== null, `${entry.id} input price`);
      if (entry.mode === 'image_generation') assert.ok(pricing.image_per_unit !== null, `${entry.id} image price`);
      if (entry.mode === 'audio_speech' || entry.mode === 'audio_transcription') assert.ok(pricing.audio_per_minute !== null, `${entry.id} audio price`);
      if (pricing.status === 'starts_at') assert.ok(pricing.image_per_unit !== null, `${entry.id}: starts_at without an image price`);
      if (pricing.status !== 'documented') assert.ok(pricing.note !== null, `${entry.id}: ${pricing.status} needs a note`);
    }
  });

  test('speech models name a default voice', () => {
    for (const entry of shipped.list().filter((model) => model.mode === 'audio_speech')) {
      assert.equal(typeof entry.default_voice, 'string', entry.id);
    }
  });

  test('each shipped id is inferred to its own vendor and mode by the safe prefixes', () => {
    // Guards the prefix table: a future snapshot of a shipped model must land on the same endpoint.
    const prefixes = [...DEFAULT_CATALOG.safePrefixes].sort((a, b) => b.prefix.length - a.prefix.length);
    for (const spec of DEFAULT_CATALOG.models) {
      const match = prefixes.find((candidate) => spec.id.startsWith(candidate.prefix));
      if (match === undefined) continue;
      assert.equal(match.ownedBy, spec.ownedBy, spec.id);
      assert.equal(match.mode, spec.mode, `${spec.id} would be inferred as ${match.mode}`);
    }
  });

  test('the default chat model is a listed chat model', () => {
    assert.equal(shipped.get(shipped.defaultChatModel)?.entry.mode, 'chat');
  });
});

describe('resolution', () => {
  test('a full id resolves to itself and its provider', () => {
    const resolved = shipped.resolve('gpt-4o', chat);
    assert.equal(resolved.id, 'gpt-4o');
    assert.equal(resolved.model.provider, 'openai');
    assert.equal(resolved.inferred, false);
    assert.equal(shipped.resolve('claude-haiku-4-5', chat).model.provider, 'anthropic');
    assert.equal(shipped.resolve('gemini-2.5-flash', chat).model.provider, 'gemini');
    assert.equal(shipped.resolve('text-embedding-3-small', { mode: 'embedding' }).id, 'text-embedding-3-small');
    assert.equal(shipped.resolve('whisper-1', { mode: 'audio_transcription' }).id, 'whisper-1');
  });

  test('legacy aliases resolve to their full id and are listed in aliases', () => {
    const aliases = shipped.aliases();
    assert.equal(aliases.gpt4o, 'gpt-4o');
    for (const [alias, target] of Object.entries(aliases)) {
      const resolved = shipped.resolve(alias, { mode: shipped.get(target)!.entry.mode });
      assert.equal(resolved.id, target, alias);
      assert.equal(resolved.requested, alias);
      assert.equal(resolved.inferred, false);
    }
    assert.equal(shipped.resolve('claude-sonnet', chat).model.provider, 'anthropic');
    assert.equal(shipped.resolve('gemini-flash', chat).model.entry.owned_by, 'google');
  });

  test('alias lookups do not reach Object.prototype', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      assert.equal(gatewayError(() => shipped.resolve(name, chat)).code, 'model_not_found', name);
    }
  });

  test('service aliases resolve to their target and are listed as modelgate entries', () => {
    const entries = shipped.list();
    for (const alias of ['service-1', 'service-2', 'service-3', 'service-4', 'service-5']) {
      const resolved = shipped.resolve(alias, chat);
      const target = shipped.get(resolved.id)!;
      assert.equal(target.entry.mode, 'chat');
      assert.equal(resolved.model, target, `${alias} resolves to the target's catalog model`);
      const entry = entries.find((candidate) => candidate.id === alias)!;
      assert.equal(entry.owned_by, 'modelgate');
      assert.ok(entry.description.includes(resolved.id), `${alias} description names its target`);
      assert.deepEqual({ ...entry, id: '', owned_by: '', description: '' }, { ...target.entry, id: '', owned_by: '', description: '' });
    }
    assert.deepEqual(shipped.supportedModelIds().slice(0, 5), ['service-1', 'service-2', 'service-3', 'service-4', 'service-5']);
  });

  test('future ids are accepted by their safe prefix, without a price', () => {
    const future = shipped.resolve('gpt-7-turbo', chat);
    assert.equal(future.inferred, true);
    assert.equal(future.model.provider, 'openai');
    assert.equal(future.model.upstreamId, 'gpt-7-turbo');
    assert.equal(future.model.entry.pricing, null);
    assert.equal(shipped.resolve('o4-mini-2026-01-01', chat).model.provider, 'openai');
    assert.equal(shipped.resolve('claude-opus-9', chat).model.provider, 'anthropic');
    const gemini = shipped.resolve('gemini-4.0-ultra', chat);
    assert.equal(gemini.model.provider, 'gemini');
    assert.equal(gemini.model.entry.owned_by, 'google');
  });

  test('dated vendor snapshots resolve to their model with its price, and go to the vendor as sent', () => {
    for (const [snapshot, model] of [
      ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
      ['claude-haiku-4-5-20251001', 'claude-haiku-4-5'],
      ['gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
      ['gpt-5-mini-2025-08-07', 'gpt-5-mini'],
      ['gemini-2.0-flash-001', 'gemini-2.0-flash'],
    ] as const) {
      const resolved = shipped.resolve(snapshot, chat);
      assert.equal(resolved.id, model, snapshot);
      assert.equal(resolved.inferred, false, snapshot);
      assert.equal(resolved.model.upstreamId, snapshot, `${snapshot} is the snapshot the vendor serves`);
      assert.deepEqual(resolved.model.entry.pricing, shipped.get(model)!.entry.pricing, snapshot);
      assert.notEqual(resolved.model.entry.pricing, null, snapshot);
      assert.equal(shipped.entry(snapshot).id, model, 'GET /v1/models/{snapshot} shows its model');
    }
    // A snapshot priced apart from its model (GPT-4o of May 2024) is not one of them: a future id.
    assert.equal(shipped.resolve('gpt-4o-2024-05-13', chat).model.entry.pricing, null);
    assert.equal(gatewayError(() => shipped.resolve('claude-haiku-4-5-20251001', { mode: 'chat', providerHint: 'openai' })).code, 'model_not_found');
  });

  test('a snapshot goes with its disabled model, and an operator model of the same id wins', () => {
    const disabled = catalogFrom({ catalog: { models: [{ id: 'claude-haiku-4-5', disabled: true }] } });
    assert.equal(disabled.resolve('claude-haiku-4-5-20251001', chat).model.entry.pricing, null, 'served by prefix, unpriced');
    const declared = catalogFrom({ catalog: { models: [{ id: 'claude-haiku-4-5-20251001', description: 'Pinned Haiku' }] } });
    assert.equal(declared.resolve('claude-haiku-4-5-20251001', chat).model.entry.description, 'Pinned Haiku');
  });

  test("a cloud's entry of a model not in the catalog is left out; an Azure deployment of an unknown model names its deployment", () => {
    const clouds = [...VENDOR_PROVIDERS, 'bedrock', 'vertex'];
    const haikuOnClouds = (catalog: Catalog) => catalog.list().filter((entry) => entry.id.includes('claude-haiku-4-5') && entry.id.includes('/')).map((entry) => entry.id);
    assert.equal(haikuOnClouds(new Catalog(DEFAULT_CATALOG, configFrom(), clouds)).length, 2, 'shipped: Bedrock and Vertex serve Claude Haiku 4.5');
    const withoutHaiku = { ...DEFAULT_CATALOG, models: DEFAULT_CATALOG.models.filter((model) => !model.id.startsWith('claude-haiku-4-5')) };
    assert.deepEqual(haikuOnClouds(new Catalog(withoutHaiku, configFrom(), clouds)), []);
    assert.throws(
      () => catalogFrom({ providers: { azure: { deployments: [{ name: 'prod-gpt', model: 'gpt-9-unknown' }] } } }, [...VENDOR_PROVIDERS, 'azure']),
      (error: unknown) => error instanceof ConfigError && /^providers\.azure\.deployments\[0\]: azure\/prod-gpt is the same model as "gpt-9-unknown"/.test(error.message),
    );
  });

  test('the longest prefix decides the inferred mode', () => {
    assert.equal(shipped.resolve('gemini-embedding-002', { mode: 'embedding' }).model.entry.mode, 'embedding');
    assert.equal(shipped.resolve('gpt-image-2', { mode: 'image_generation' }).model.entry.mode, 'image_generation');
    assert.equal(shipped.resolve('imagen-5.0-generate-001', { mode: 'image_generation' }).model.provider, 'gemini');
    assert.equal(shipped.resolve('text-embedding-3-huge', { mode: 'embedding' }).model.entry.mode, 'embedding');
    assert.equal(shipped.resolve('tts-2', { mode: 'audio_speech' }).model.entry.mode, 'audio_speech');
    assert.equal(shipped.resolve('gpt-4o-mini-tts-2025-12-15', { mode: 'audio_speech' }).model.entry.mode, 'audio_speech');
    assert.equal(shipped.resolve('gpt-4o-transcribe-diarize', { mode: 'audio_transcription' }).model.entry.mode, 'audio_transcription');
    assert.equal(gatewayError(() => shipped.resolve('gemini-embedding-002', chat)).code, 'model_mode_mismatch');
    assert.equal(gatewayError(() => shipped.resolve('gpt-image-2', chat)).code, 'model_mode_mismatch');
  });

  test('a future id with characters no vendor uses is not accepted', () => {
    for (const id of ['gpt-5 turbo', 'gpt-5/../x', 'claude-\u0000', `gpt-${'x'.repeat(200)}`]) {
      assert.equal(gatewayError(() => shipped.resolve(id, chat)).code, 'model_not_found', id);
    }
  });

  test('the provider hint must agree with the model', () => {
    assert.equal(shipped.resolve('gpt-4o', { mode: 'chat', providerHint: 'openai' }).id, 'gpt-4o');
    assert.equal(shipped.resolve('gpt-4o', { mode: 'chat', providerHint: 'OpenAI' }).id, 'gpt-4o');
    assert.equal(shipped.resolve('gemini-9-pro', { mode: 'chat', providerHint: 'google' }).model.provider, 'gemini');
    assert.equal(shipped.resolve('gemini-9-pro', { mode: 'chat', providerHint: 'gemini' }).model.provider, 'gemini');
    const contradicted = gatewayError(() => shipped.resolve('gpt-4o', { mode: 'chat', providerHint: 'anthropic' }));
    assert.equal(contradicted.code, 'model_not_found');
    assert.equal(contradicted.status, 400);
    assert.match(contradicted.message, /GET \/v1\/models/);
    assert.equal(gatewayError(() => shipped.resolve('claude-opus-9', { mode: 'chat', providerHint: 'openai' })).code, 'model_not_found');
    assert.equal(gatewayError(() => shipped.resolve('service-1', { mode: 'chat', providerHint: 'anthropic' })).code, 'model_not_found');
  });

  test('an unknown id is a 400 model_not_found that suggests close ids and points to GET /v1/models', () => {
    // Typos that keep a safe prefix ('gpt-4o-mnii') are accepted as future ids by design; these break it.
    const error = gatewayError(() => shipped.resolve('gtp-4o-mini', chat));
    assert.equal(error.code, 'model_not_found');
    assert.equal(error.status, 400);
    assert.equal(error.type, 'invalid_request_error');
    assert.equal(error.param, 'model');
    assert.match(error.message, /"gpt-4o-mini"/);
    assert.match(error.message, /GET \/v1\/models/);
    assert.match(gatewayError(() => shipped.resolve('gemni-2.5-flash', chat)).message, /"gemini-2\.5-flash"/);
    assert.match(gatewayError(() => shipped.resolve('claud-sonnet', chat)).message, /"claude-sonnet"/);
    const embedding = gatewayError(() => shipped.resolve('text-embeding-3-small', { mode: 'embedding' }));
    assert.match(embedding.message, /Did you mean "text-embedding-3-small"/);
    assert.match(embedding.message, /mode embedding/);
    assert.doesNotMatch(gatewayError(() => shipped.resolve('text-embeding-3-small', chat)).message, /text-embedding-3-small/, 'suggestions fit the endpoint');
    const field = gatewayError(() => shipped.resolve('nothing-like-it', { mode: 'chat', param: 'config.chatModel.modelId' }));
    assert.equal(field.param, 'config.chatModel.modelId');
  });

  test('a model used on another mode endpoint is a 400 model_mode_mismatch naming its endpoint', () => {
    const error = gatewayError(() => shipped.resolve('text-embedding-3-small', chat));
    assert.equal(error.code, 'model_mode_mismatch');
    assert.equal(error.status, 400);
    assert.match(error.message, /\/v1\/embeddings/);
    assert.match(error.message, /is an embedding model; .* pick a chat model/);
    const onEmbeddings = gatewayError(() => shipped.resolve('gpt-4o', { mode: 'embedding' }));
    assert.equal(onEmbeddings.code, 'model_mode_mismatch');
    assert.match(onEmbeddings.message, /is a chat model; .* pick an embedding model from GET \/v1\/models/);
    assert.equal(gatewayError(() => shipped.resolve('service-1', { mode: 'image_generation' })).code, 'model_mode_mismatch');
    assert.equal(gatewayError(() => shipped.resolve('tts-1', { mode: 'audio_transcription' })).code, 'model_mode_mismatch');
  });
});

describe('configured catalog', () => {
  test('catalog.models overrides shipped fields and adds models', () => {
    const catalog = catalogFrom({
      catalog: {
        models: [
          { id: 'gpt-4o', context_window: 64_000, pricing: { input_per_million: 2, output_per_million: 9, status: 'docs_inferred', note: 'negotiated' } },
          { id: 'gpt-oss-120b', description: 'Open-weight model', mode: 'chat', context_window: 131_072, max_output_tokens: 8192 },
        ],
      },
    });
    const gpt4o = catalog.get('gpt-4o')!.entry;
    assert.equal(gpt4o.context_window, 64_000);
    assert.equal(gpt4o.max_output_tokens, 16_384, 'fields not overridden are kept');
    assert.deepEqual(gpt4o.pricing, {
      input_per_million: 2,
      output_per_million: 9,
      cached_input_per_million: null,
      cache_write_per_million: null,
      cache_write_1h_per_million: null,
      image_per_unit: null,
      audio_per_minute: null,
      status: 'docs_inferred',
      note: 'negotiated',
      tiers: [],
    });
    const added = catalog.resolve('gpt-oss-120b', chat);
    assert.equal(added.inferred, false);
    assert.equal(added.model.provider, 'openai');
    assert.equal(added.model.entry.context_window, 131_072);
    assert.ok(catalog.supportedModelIds().includes('gpt-oss-120b'));
  });

  test('a disabled model is not listed and not re-admitted by its prefix', () => {
    const catalog = catalogFrom({ catalog: { models: [{ id: 'gpt-4o', disabled: true }] } });
    assert.equal(catalog.get('gpt-4o'), undefined);
    assert.ok(!catalog.supportedModelIds().includes('gpt-4o'));
    assert.equal(catalog.aliases().gpt4o, undefined, 'a shipped alias of a disabled model goes with it');
    const error = gatewayError(() => catalog.resolve('gpt-4o', chat));
    assert.equal(error.code, 'model_not_found');
    assert.match(error.message, /disabled/);
    assert.equal(gatewayError(() => catalog.resolve('gpt4o', chat)).code, 'model_not_found');
  });

  test('disabling the target of a service alias asks for a new target', () => {
    const target = DEFAULT_CATALOG.serviceAliases['service-2']!;
    assert.throws(() => catalogFrom({ catalog: { models: [{ id: target, disabled: true }] } }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /catalog\.serviceAliases\.service-2/);
      return true;
    });
    const remapped = catalogFrom({ catalog: { models: [{ id: target, disabled: true }], serviceAliases: { 'service-2': 'claude-haiku-4-5' } } });
    assert.equal(remapped.resolve('service-2', chat).id, 'claude-haiku-4-5');
  });

  test('catalog.aliases, serviceAliases and defaultModel extend and replace the shipped ones', () => {
    const catalog = catalogFrom({
      catalog: { aliases: { fast: 'gemini-2.5-flash', gpt4o: 'gpt-4.1' }, serviceAliases: { 'service-1': 'claude-haiku-4-5' }, defaultModel: 'claude-haiku-4-5' },
    });
    assert.equal(catalog.resolve('fast', chat).id, 'gemini-2.5-flash');
    assert.equal(catalog.resolve('gpt4o', chat).id, 'gpt-4.1');
    assert.equal(catalog.aliases().fast, 'gemini-2.5-flash');
    assert.equal(catalog.resolve('service-1', chat).id, 'claude-haiku-4-5');
    assert.equal(catalog.defaultChatModel, 'claude-haiku-4-5');
  });

  test('pricing overrides take cache-write prices and long-prompt tiers; tiers out of order stop start-up naming the field', () => {
    const tier = (above: number, input: number) => ({ above_prompt_tokens: above, input_per_million: input, output_per_million: input * 4 });
    const catalog = catalogFrom({
      catalog: { models: [{ id: 'gpt-4o', pricing: { input_per_million: 2, output_per_million: 8, cache_write_per_million: 2.5, tiers: [tier(128_000, 4)] } }] },
    });
    const pricing = catalog.resolve('gpt-4o', chat).model.entry.pricing!;
    assert.equal(pricing.cache_write_per_million, 2.5);
    assert.equal(pricing.cache_write_1h_per_million, null);
    assert.deepEqual(pricing.tiers, [{ above_prompt_tokens: 128_000, input_per_million: 4, output_per_million: 16, cached_input_per_million: null, cache_write_per_million: null, cache_write_1h_per_million: null }]);
    const unordered = { catalog: { models: [{ id: 'gpt-4o', pricing: { input_per_million: 2, tiers: [tier(200_000, 4), tier(100_000, 3)] } }] } };
    assert.throws(() => catalogFrom(unordered), (error: unknown) => error instanceof ConfigError && /catalog\.models\[0\]\.pricing\.tiers\[1\]\.above_prompt_tokens/.test(error.message));
    const negative = { catalog: { models: [{ id: 'gpt-4o', pricing: { cache_write_per_million: -1 } }] } };
    assert.throws(() => configFrom(negative), (error: unknown) => error instanceof ConfigError && /cache_write_per_million/.test(error.message));
  });

  test('aliases, service aliases and the default model must name catalog models', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ aliases: { fast: 'no-such-model' } }, /catalog\.aliases\.fast/],
      [{ serviceAliases: { 'service-3': 'text-embedding-3-small' } }, /catalog\.serviceAliases\.service-3/],
      [{ defaultModel: 'dall-e-3' }, /catalog\.defaultModel/],
    ];
    for (const [catalog, field] of cases) {
      assert.throws(() => catalogFrom({ catalog }), (error: unknown) => error instanceof ConfigError && field.test(error.message));
    }
  });

  test('an id means one thing: what GET /v1/models lists under an id is what requests for it get', () => {
    // An alias named like a listed model sent its requests elsewhere while GET /v1/models/{id}
    // (and the prices) showed the model; a legacy alias named like a service alias was listed
    // but never used; a model named like a service alias was listed twice.
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ aliases: { 'gpt-4o': 'gpt-4o-mini' } }, /^catalog\.aliases\.gpt-4o: "gpt-4o" is already the id of a model or service alias/],
      [{ aliases: { 'service-2': 'gpt-4o' } }, /^catalog\.aliases\.service-2: /],
      [{ models: [{ id: 'service-3' }] }, /^catalog\.models\[0\]\.id: "service-3" is a service alias/],
    ];
    for (const [catalog, message] of cases) {
      assert.throws(() => catalogFrom({ catalog }), (error: unknown) => error instanceof ConfigError && message.test(error.message));
    }
    // A model the operator declares under a shipped alias's name is served under it; the alias goes.
    const declared = catalogFrom({ catalog: { models: [{ id: 'gpt4o', description: 'our own model' }] } });
    assert.equal(declared.resolve('gpt4o', { mode: 'chat' }).id, 'gpt4o');
    assert.equal(declared.entry('gpt4o').description, 'our own model');
    assert.equal(declared.aliases().gpt4o, undefined);
    // Disabling a model frees its id for an alias.
    const freed = catalogFrom({ catalog: { models: [{ id: 'gpt-4o', disabled: true }], aliases: { 'gpt-4o': 'gpt-4o-mini' } } });
    assert.equal(freed.resolve('gpt-4o', { mode: 'chat' }).id, 'gpt-4o-mini');
  });

  test('a model must name a provider of the gateway; start-up says which setting does not', () => {
    // A typo used to start a gateway that answered every request for the model with a 502.
    const ollama = { name: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1' };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ catalog: { models: [{ id: 'gpt-4o' }, { id: 'llama3', provider: 'olama' }] } }, /^catalog\.models\[1\]\.provider: "olama" is not a provider/],
      [{ providers: { compatible: [{ ...ollama, models: [{ id: 'llama3', provider: 'vllm' }] }] } }, /^providers\.compatible\[0\]\.models\[0\]\.provider: "vllm"/],
    ];
    for (const [file, message] of cases) {
      assert.throws(() => catalogFrom(file), (error: unknown) => error instanceof ConfigError && message.test(error.message));
    }
    const served = catalogFrom({ providers: { compatible: [ollama] }, catalog: { models: [{ id: 'llama3', provider: 'ollama' }] } });
    assert.equal(served.resolve('llama3', { mode: 'chat' }).model.provider, 'ollama');
  });

  test('models of an OpenAI-compatible provider are served by it and owned by its name', () => {
    const catalog = catalogFrom({
      providers: {
        compatible: [
          {
            name: 'ollama',
            baseUrl: 'http://127.0.0.1:11434/v1',
            models: [
              { id: 'llama3.2', description: 'Llama 3.2 on the local Ollama', input_modalities: ['text'], context_window: 131_072 },
              { id: 'nomic-embed-text', mode: 'embedding', output_modalities: ['embedding'] },
              { id: 'gpt-4o-mini', upstreamId: 'qwen2.5:7b' },
            ],
          },
        ],
      },
    });
    const llama = catalog.resolve('llama3.2', chat);
    assert.equal(llama.model.provider, 'ollama');
    assert.equal(llama.model.entry.owned_by, 'ollama');
    assert.equal(llama.model.entry.pricing, null);
    assert.equal(catalog.resolve('nomic-embed-text', { mode: 'embedding' }).model.entry.capabilities.embeddings, true);
    const shadowed = catalog.resolve('gpt-4o-mini', chat);
    assert.equal(shadowed.model.provider, 'ollama', 'a compatible provider declaring a shipped id serves it');
    assert.equal(shadowed.model.upstreamId, 'qwen2.5:7b');
    assert.equal(catalog.resolve('llama3.2', { mode: 'chat', providerHint: 'ollama' }).id, 'llama3.2');
    assert.equal(gatewayError(() => catalog.resolve('llama3.2', { mode: 'chat', providerHint: 'openai' })).code, 'model_not_found');
  });

  test('a compatible provider named in the hint may serve ids it does not list; vendor names may not', () => {
    const catalog = catalogFrom({ providers: { compatible: [{ name: 'vllm', baseUrl: 'http://127.0.0.1:8000/v1', models: [] }] } });
    const unlisted = catalog.resolve('meta-llama/Llama-3.1-8B-Instruct', { mode: 'chat', providerHint: 'vllm' });
    assert.equal(unlisted.inferred, true);
    assert.equal(unlisted.model.provider, 'vllm');
    assert.equal(unlisted.model.entry.pricing, null);
    assert.equal(gatewayError(() => catalog.resolve('meta-llama/Llama-3.1-8B-Instruct', chat)).code, 'model_not_found');
    assert.equal(gatewayError(() => catalog.resolve('mistral-large', { mode: 'chat', providerHint: 'openai' })).code, 'model_not_found');
    assert.equal(gatewayError(() => catalog.resolve('mistral-large', { mode: 'chat', providerHint: 'nobody' })).code, 'model_not_found');
  });
});
