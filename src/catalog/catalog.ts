import { ConfigError, type GatewayConfig, type ModelOverride } from '../config/index.js';
import { GatewayError, withArticle } from '../errors/index.js';
import { DEFAULT_PROVIDER, shippedModels, type ShippedModel } from '../providers/index.js';
import { ENDPOINT_BY_MODE, featuresOf, toPublicEntry, type ModelSpec } from './model-spec.js';
import type { CatalogModel, ModelMode, PublicModelEntry, ResolvedModel } from './types.js';
import { closestIds } from '../config/index.js';

export interface SafePrefix {
  prefix: string;
  provider: string;
  ownedBy: string;
  mode: ModelMode;
}

/** The shipped catalog data (see default-catalog.ts). */
export interface CatalogData {
  models: readonly ModelSpec[];
  legacyAliases: Readonly<Record<string, string>>;
  serviceAliases: Readonly<Record<string, string>>;
  /**
   * Dated vendor snapshots (`claude-sonnet-4-5-20250929`, `gpt-4o-mini-2024-07-18`) → the
   * catalog model they are priced as: each is served by that model's provider and priced as
   * it, and the vendor is sent the snapshot id. Only snapshots whose list price is the
   * model's belong here; any other dated id is a future id (by prefix, no price).
   */
  snapshots?: Readonly<Record<string, string>>;
  defaultChatModel: string;
  safePrefixes: readonly SafePrefix[];
}

export interface ResolveOptions {
  /** The mode of the endpoint being called. */
  mode: ModelMode;
  /** Optional `provider` hint of chat requests. */
  providerHint?: string | undefined;
  /** Body field name for messages (`model`, `config.chatModel.modelId`, …). */
  param?: string;
}

const SERVICE_ALIAS_OWNER = 'modelgate';

/**
 * Catalog settings an administrator made through the admin API (src/live-settings), layered
 * between the shipped catalog and the config file's: each names the field an error is about.
 */
export interface LiveCatalogLayer {
  models: readonly { override: ModelOverride; setting: string }[];
  aliases: readonly { alias: string; target: string; service: boolean; setting: string }[];
}

const NO_LIVE_LAYER: LiveCatalogLayer = { models: [], aliases: [] };

/** Tiers must rise: the price of a prompt size would otherwise depend on their order. */
function checkTiers(tiers: readonly { above_prompt_tokens: number }[], setting: string): void {
  for (let index = 1; index < tiers.length; index += 1) {
    if (tiers[index]!.above_prompt_tokens <= tiers[index - 1]!.above_prompt_tokens) {
      throw new ConfigError(
        `${setting}[${index}].above_prompt_tokens: ${tiers[index]!.above_prompt_tokens} is not above the tier before it (${tiers[index - 1]!.above_prompt_tokens}); list tiers by above_prompt_tokens ascending`,
      );
    }
  }
}

function applyOverride(base: ModelSpec | undefined, override: ModelOverride, defaults: { provider: string; ownedBy: string }): ModelSpec {
  const spec: ModelSpec = base ?? {
    id: override.id,
    provider: defaults.provider,
    ownedBy: defaults.ownedBy,
    mode: 'chat',
    description: override.id,
    intelligence: 'Average',
    speed: 'Medium',
    inputModalities: ['text'],
    outputModalities: ['text'],
    contextWindow: null,
    maxOutputTokens: null,
    tools: false,
    pricing: null,
  };
  return {
    ...spec,
    provider: override.provider ?? spec.provider,
    ownedBy: override.owned_by ?? (override.provider !== undefined ? override.provider : spec.ownedBy),
    ...(override.upstreamId !== undefined ? { upstreamId: override.upstreamId } : {}),
    mode: override.mode ?? spec.mode,
    description: override.description ?? spec.description,
    intelligence: override.intelligence ?? spec.intelligence,
    speed: override.speed ?? spec.speed,
    inputModalities: override.input_modalities ?? spec.inputModalities,
    outputModalities: override.output_modalities ?? spec.outputModalities,
    contextWindow: override.context_window !== undefined ? override.context_window : spec.contextWindow,
    maxOutputTokens: override.max_output_tokens !== undefined ? override.max_output_tokens : spec.maxOutputTokens,
    tools: override.tools ?? spec.tools,
    reasoning: override.reasoning ?? spec.reasoning === true,
    webSearch: override.web_search ?? spec.webSearch === true,
    ...(override.default_voice !== undefined ? { defaultVoice: override.default_voice } : {}),
    pricing: override.pricing !== undefined ? override.pricing : spec.pricing,
  };
}

function counterpartKey(id: string, provider: string): string {
  return `${id} ${provider}`;
}

/**
 * A vendor's shipped model: its own fields over those of the model it is the same as (without
 * that one's upstream id), served by the vendor's provider.
 */
function shippedSpec(model: ShippedModel, sameAs: ModelSpec | undefined, defaults: { provider: string; ownedBy: string }): ModelSpec {
  if (sameAs === undefined) return applyOverride(undefined, model, defaults);
  const { upstreamId: _ignored, ...base } = sameAs;
  return applyOverride({ ...base, id: model.id, provider: defaults.provider }, model, defaults);
}

/**
 * The running catalog: shipped data merged with the operator's config, and model resolution
 * (full id, service alias, legacy alias, safe-prefix future id, provider hint).
 */
export class Catalog {
  // Replaced whole when the live layer changes (applyLive): a request resolves against one state.
  private models = new Map<string, CatalogModel>();
  private serviceAliases = new Map<string, string>();
  private legacyAliases = new Map<string, string>();
  private snapshots = new Map<string, string>();
  /** Ids the operator disabled: refused, not re-admitted through their safe prefix. */
  private disabledIds = new Set<string>();
  private readonly safePrefixes: readonly SafePrefix[];
  private providerNames: ReadonlySet<string>;
  /** Providers without a credential: their models resolve (to a clear refusal) but are not listed. */
  private readonly unlistedProviders: Set<string>;
  readonly defaultChatModel: string;
  private publicList: PublicModelEntry[] = [];
  /** `<catalog id> <provider>` → the id of the same model's entry at that provider (ShippedModel.sameAs). */
  private counterparts = new Map<string, string>();
  /** When this catalog was built (Unix seconds): `created` of entries without a release date. */
  private readonly listedAt: number;
  /** The live layer in force (applyLive), and the shipped data and config it is layered between. */
  private liveLayer: LiveCatalogLayer;
  private readonly data: CatalogData;
  private readonly config: GatewayConfig;

  constructor(
    data: CatalogData,
    config: GatewayConfig,
    providerNames: Iterable<string>,
    unconfiguredProviders: Iterable<string> = [],
    live: LiveCatalogLayer = NO_LIVE_LAYER,
    listedAt = Math.floor(Date.now() / 1000),
  ) {
    this.data = data;
    this.config = config;
    this.liveLayer = live;
    this.listedAt = listedAt;
    this.providerNames = new Set(providerNames);
    this.unlistedProviders = new Set(unconfiguredProviders);
    const specs = new Map<string, ModelSpec>(data.models.map((spec) => [spec.id, spec]));
    const serviceTargets = { ...data.serviceAliases, ...config.catalog.serviceAliases };
    for (const { alias, target, service } of live.aliases) if (service && !Object.hasOwn(config.catalog.serviceAliases, alias)) serviceTargets[alias] = target;
    const applyAll = (overrides: readonly ModelOverride[], defaults: { provider: string; ownedBy: string }, setting: string | ((index: number) => string)) => {
      for (const [index, override] of overrides.entries()) {
        const at = typeof setting === 'string' ? `${setting}[${index}]` : setting(index);
        if (Object.hasOwn(serviceTargets, override.id)) {
          throw new ConfigError(`${at}.id: "${override.id}" is a service alias; give the model another id`);
        }
        if (override.provider !== undefined && !this.providerNames.has(override.provider)) {
          // Caught here rather than as a 502 on every request for the model.
          throw new ConfigError(
            `${at}.provider: "${override.provider}" is not a provider of this gateway; name one of ${[...this.providerNames].join(', ')}`,
          );
        }
        checkTiers(override.pricing?.tiers ?? [], `${at}.pricing.tiers`);
        if (override.disabled === true) {
          specs.delete(override.id);
          this.disabledIds.add(override.id);
        } else {
          specs.set(override.id, applyOverride(specs.get(override.id), override, defaults));
          this.disabledIds.delete(override.id);
        }
      }
    };
    // Each vendor's own shipped models (a cloud's: the same model as another's entry, `sameAs`, with its own id and price).
    // One the same as a model the operator declares (an Azure deployment of it) waits for catalog.models.
    const waiting: { provider: string; owner: string; model: ShippedModel }[] = [];
    const applyShipped = (provider: string, owner: string, model: ShippedModel, last: boolean) => {
      const sameAs = model.sameAs === undefined ? undefined : specs.get(model.sameAs);
      if (model.sameAs !== undefined && sameAs === undefined) {
        if (!last) return waiting.push({ provider, owner, model });
        // A vendor's built-in entry of a model this catalog's data does not have is left out with it.
        if (model.declaredAt === undefined) return 0;
        throw new ConfigError(`providers.${provider}.${model.declaredAt}: ${model.id} is the same model as "${model.sameAs}", which is not a model of the catalog; name a catalog id (GET /v1/models lists them)`);
      }
      const { declaredAt: _declaredAt, ...fields } = model;
      specs.set(model.id, shippedSpec(fields, sameAs, { provider, ownedBy: owner }));
      if (model.sameAs !== undefined) this.counterparts.set(counterpartKey(model.sameAs, provider), model.id);
      return 0;
    };
    for (const { provider, owner, models } of shippedModels(config.providers)) for (const model of models) applyShipped(provider, owner, model, false);
    // A model declared under a compatible provider is served by that provider, even when it shadows a shipped id.
    for (const [index, provider] of config.providers.compatible.entries()) {
      applyAll(
        provider.models.map((model) => ({ ...model, provider: model.provider ?? provider.name })),
        { provider: provider.name, ownedBy: provider.name },
        `providers.compatible[${index}].models`,
      );
    }
    // The live layer sits under the config file: an id the file declares is the file's.
    applyAll(live.models.map(({ override }) => override), { provider: DEFAULT_PROVIDER.name, ownedBy: DEFAULT_PROVIDER.owner }, (index) => live.models[index]!.setting);
    applyAll(config.catalog.models, { provider: DEFAULT_PROVIDER.name, ownedBy: DEFAULT_PROVIDER.owner }, 'catalog.models');
    for (const { provider, owner, model } of waiting) applyShipped(provider, owner, model, true);

    for (const spec of specs.values()) {
      this.models.set(spec.id, { entry: toPublicEntry(spec, this.listedAt), provider: spec.provider, upstreamId: spec.upstreamId ?? spec.id, features: featuresOf(spec) });
    }
    // A shipped alias whose model the operator disabled goes with it, and so does one whose
    // name the operator gave a model; the operator's own must resolve. An id means one thing:
    // what GET /v1/models lists under it is what a request for it gets.
    for (const [alias, target] of Object.entries(data.legacyAliases)) {
      if (this.models.has(target) && !this.models.has(alias)) this.legacyAliases.set(alias, target);
    }
    // A snapshot id the operator declared a model under is that model; one of a disabled model goes with it.
    for (const [snapshot, target] of Object.entries(data.snapshots ?? {})) {
      if (this.models.has(target) && !this.models.has(snapshot)) this.snapshots.set(snapshot, target);
    }
    for (const [alias, target] of Object.entries(config.catalog.aliases)) {
      if (this.models.has(alias) || Object.hasOwn(serviceTargets, alias)) {
        throw new ConfigError(
          `catalog.aliases.${alias}: "${alias}" is already the id of a model or service alias; give the alias a name of its own (or disable the model in catalog.models to reuse its id)`,
        );
      }
      if (!this.models.has(target)) {
        throw new ConfigError(`catalog.aliases.${alias}: "${target}" is not a model of the catalog; name a model id (see catalog.models)`);
      }
      this.legacyAliases.set(alias, target);
    }
    for (const { alias, target, service, setting } of live.aliases) {
      if (service || Object.hasOwn(config.catalog.aliases, alias)) continue;
      if (this.models.has(alias) || Object.hasOwn(serviceTargets, alias)) {
        throw new ConfigError(`${setting}: "${alias}" is already the id of a model or service alias; give the alias a name of its own`);
      }
      if (!this.models.has(target)) throw new ConfigError(`${setting}.target: "${target}" is not a model of the catalog; name a model id (GET /v1/models lists them)`);
      this.legacyAliases.set(alias, target);
    }
    const liveService = new Map(live.aliases.filter((alias) => alias.service).map((alias) => [alias.alias, alias.setting]));
    for (const [alias, target] of Object.entries(serviceTargets)) {
      const model = this.models.get(target);
      if (model === undefined || model.entry.mode !== 'chat') {
        const setting = Object.hasOwn(config.catalog.serviceAliases, alias) ? undefined : liveService.get(alias);
        if (setting !== undefined) throw new ConfigError(`${setting}.target: "${target}" is not a chat model of the catalog; name one`);
        throw new ConfigError(`catalog.serviceAliases.${alias}: "${target}" is not a chat model of the catalog; set catalog.serviceAliases.${alias} to one`);
      }
      this.serviceAliases.set(alias, target);
    }
    this.safePrefixes = [...data.safePrefixes].sort((a, b) => b.prefix.length - a.prefix.length);
    this.defaultChatModel = config.catalog.defaultModel ?? data.defaultChatModel;
    const defaultModel = this.models.get(this.defaultChatModel);
    if (defaultModel === undefined || defaultModel.entry.mode !== 'chat') {
      throw new ConfigError(`catalog.defaultModel: "${this.defaultChatModel}" is not a chat model of the catalog; set catalog.defaultModel to one`);
    }
    this.listModels();
  }

  /**
   * Puts a new live layer in force (models, prices and aliases set through the admin API), checked
   * whole first: an invalid one throws a ConfigError naming its setting, and the catalog in force stays.
   */
  applyLive(live: LiveCatalogLayer, providerNames: Iterable<string>): void {
    const next = new Catalog(this.data, this.config, providerNames, this.unlistedProviders, live, this.listedAt);
    this.models = next.models;
    this.serviceAliases = next.serviceAliases;
    this.legacyAliases = next.legacyAliases;
    this.snapshots = next.snapshots;
    this.disabledIds = next.disabledIds;
    this.counterparts = next.counterparts;
    this.providerNames = next.providerNames;
    this.liveLayer = live;
    this.listModels();
  }

  /** The live layer in force. */
  live(): LiveCatalogLayer {
    return this.liveLayer;
  }

  /** The ids the catalog knows and their provider, disabled ones included: for the admin API's list. */
  disabled(): readonly string[] {
    return [...this.disabledIds];
  }

  /** The service aliases and their targets. */
  serviceAliasTargets(): Record<string, string> {
    return Object.fromEntries(this.serviceAliases);
  }

  /** Every legacy alias and its target, listed or not. */
  legacyAliasTargets(): Record<string, string> {
    return Object.fromEntries(this.legacyAliases);
  }

  /** Every model of the catalog, listed or not (a provider without a credential), for the admin API. */
  allModels(): readonly CatalogModel[] {
    return [...this.models.values()];
  }

  /** A provider became callable (a credential was added live) or stopped being so: its models are listed, or not, from now on. */
  setProviderListed(provider: string, listed: boolean): void {
    if (listed === !this.unlistedProviders.has(provider)) return;
    if (listed) this.unlistedProviders.delete(provider);
    else this.unlistedProviders.add(provider);
    this.listModels();
  }

  private listModels(): void {
    this.publicList = [
      ...[...this.serviceAliases].filter(([, target]) => this.listed(target)).map(([alias, target]) => this.serviceEntry(alias, this.models.get(target)!.entry)),
      ...[...this.models.values()].filter((model) => !this.unlistedProviders.has(model.provider)).map((model) => model.entry),
    ];
  }

  /** Whether a model id is shown by GET /v1/models: its provider can be called. */
  private listed(id: string): boolean {
    const model = this.models.get(id);
    return model !== undefined && !this.unlistedProviders.has(model.provider);
  }

  private serviceEntry(alias: string, target: PublicModelEntry): PublicModelEntry {
    return { ...target, id: alias, owned_by: SERVICE_ALIAS_OWNER, description: `Stable service alias; currently ${target.id}. ${target.description}` };
  }

  /** available_models of `GET /v1/models`: service aliases first, then every model. */
  list(): readonly PublicModelEntry[] {
    return this.publicList;
  }

  /** The listed chat models whose vendor runs a web search tool for them (ModelFeatures.webSearch). */
  webSearchModels(): string[] {
    return this.publicList.filter((entry) => entry.mode === 'chat' && this.models.get(entry.id)?.features.webSearch === true).map((entry) => entry.id);
  }

  /** The `aliases` map of `GET /v1/models`: legacy short name → full model id. */
  aliases(): Record<string, string> {
    return Object.fromEntries([...this.legacyAliases].filter(([, target]) => this.listed(target)));
  }

  supportedModelIds(): string[] {
    return this.publicList.map((entry) => entry.id);
  }

  /**
   * The public entry of `GET /v1/models/{model}`: a listed id or service alias as listed, a
   * legacy alias as its model's entry; or the not_found naming close ids.
   */
  entry(requested: string): PublicModelEntry {
    const listed = this.publicList.find((entry) => entry.id === requested);
    if (listed !== undefined) return listed;
    const target = this.serviceAliases.get(requested) ?? this.legacyAliases.get(requested) ?? this.snapshots.get(requested) ?? requested;
    const model = this.models.get(target);
    if (model !== undefined && !this.unlistedProviders.has(model.provider)) return model.entry;
    if (model !== undefined) {
      throw new GatewayError('not_found', `The model "${requested}" is not served: its provider (${model.provider}) is not configured on this gateway. GET /v1/models lists the models it serves.`);
    }
    const suggestion = didYouMean(requested, [...this.supportedModelIds(), ...Object.keys(this.aliases())]);
    throw new GatewayError('not_found', `The model "${requested.slice(0, 200)}" is not a model of this gateway.${suggestion} GET /v1/models lists them.`);
  }

  /**
   * The entry of the same model at another provider (a cloud's Claude for `claude-sonnet-4-5`),
   * for a routing deployment on that provider; undefined when that provider ships none.
   */
  counterpart(id: string, provider: string): CatalogModel | undefined {
    const counterpartId = this.counterparts.get(counterpartKey(id, provider));
    return counterpartId === undefined ? undefined : this.models.get(counterpartId);
  }

  /** The models a provider serves, listed or not (its credential may be missing), in catalog order. */
  servedBy(provider: string): CatalogModel[] {
    return [...this.models.values()].filter((model) => model.provider === provider);
  }

  /** A catalog model by exact id (no alias resolution). */
  get(id: string): CatalogModel | undefined {
    return this.models.get(id);
  }

  /**
   * A catalog id or alias, whatever its mode (the routing configuration names models of every
   * mode); undefined when the catalog does not hold it (safe-prefix ids are not inferred here).
   */
  find(requested: string): ResolvedModel | undefined {
    const targetId = this.serviceAliases.get(requested) ?? this.legacyAliases.get(requested) ?? requested;
    const known = this.disabledIds.has(targetId) ? undefined : this.models.get(targetId);
    return known === undefined ? undefined : { requested, id: targetId, model: known, inferred: false };
  }

    /** Resolves a client's `model` value for an endpoint of `options.mode`, or throws the 400. */
  resolve(requested: string, options: ResolveOptions): ResolvedModel {
    const resolved = this.lookup(requested, options);
    const mode = resolved.model.entry.mode;
    if (mode !== options.mode) {
      throw new GatewayError(
        'model_mode_mismatch',
        `The model "${requested}" is ${withArticle(mode)} model; use it on ${ENDPOINT_BY_MODE[mode]}. For this endpoint pick ${withArticle(options.mode)} model from GET /v1/models.`,
        { param: options.param ?? 'model' },
      );
    }
    return resolved;
  }

  private lookup(requested: string, options: ResolveOptions): ResolvedModel {
    const hint = options.providerHint;
    const targetId = this.serviceAliases.get(requested) ?? this.legacyAliases.get(requested) ?? requested;
    if (this.disabledIds.has(targetId)) throw this.notFound(requested, options, 'it is disabled on this gateway');
    const known = this.models.get(targetId);
    if (known !== undefined) {
      if (hint !== undefined && !this.providerMatches(hint, known.provider, known.entry.owned_by)) {
        throw this.notFound(requested, options, `the model is served by ${known.entry.owned_by}, not "${hint}"`);
      }
      return { requested, id: targetId, model: known, inferred: false };
    }
    const snapshotOf = this.snapshots.get(requested);
    const base = snapshotOf === undefined ? undefined : this.models.get(snapshotOf);
    if (snapshotOf !== undefined && base !== undefined) {
      if (hint !== undefined && !this.providerMatches(hint, base.provider, base.entry.owned_by)) {
        throw this.notFound(requested, options, `the model is served by ${base.entry.owned_by}, not "${hint}"`);
      }
      return { requested, id: snapshotOf, model: { ...base, upstreamId: requested }, inferred: false };
    }
    const prefix = this.safePrefixes.find((candidate) => requested.startsWith(candidate.prefix));
    if (prefix !== undefined && /^[A-Za-z0-9._:-]{1,128}$/.test(requested)) {
      if (hint !== undefined && !this.providerMatches(hint, prefix.provider, prefix.ownedBy)) {
        throw this.notFound(requested, options, `its prefix belongs to ${prefix.ownedBy}, not "${hint}"`);
      }
      return { requested, id: requested, model: this.inferredModel(requested, prefix.provider, prefix.ownedBy, prefix.mode), inferred: true };
    }
    // An operator-declared provider named explicitly may serve ids the catalog does not list.
    if (hint !== undefined && this.providerNames.has(hint) && !this.isVendorDefault(hint) && /^[A-Za-z0-9._:/-]{1,128}$/.test(requested)) {
      return { requested, id: requested, model: this.inferredModel(requested, hint, hint, options.mode), inferred: true };
    }
    throw this.notFound(requested, options);
  }

  private isVendorDefault(name: string): boolean {
    return this.safePrefixes.some((prefix) => prefix.provider === name);
  }

  private providerMatches(hint: string, provider: string, ownedBy: string): boolean {
    const normalised = hint.trim().toLowerCase();
    return normalised === provider || normalised === ownedBy;
  }

  private inferredModel(id: string, provider: string, ownedBy: string, mode: ModelMode): CatalogModel {
    const spec: ModelSpec = {
      id,
      provider,
      ownedBy,
      mode,
      description: `Not in the catalog; inferred from its name.`,
      intelligence: 'Average',
      speed: 'Medium',
      inputModalities: mode === 'chat' ? ['text', 'image'] : ['text'],
      outputModalities: mode === 'embedding' ? ['embedding'] : mode === 'image_generation' ? ['image'] : mode === 'audio_speech' ? ['audio'] : ['text'],
      contextWindow: null,
      maxOutputTokens: null,
      tools: mode === 'chat',
      pricing: null,
    };
    return { entry: toPublicEntry(spec, this.listedAt), provider, upstreamId: id, features: featuresOf(spec) };
  }

  private notFound(requested: string, options: ResolveOptions, why?: string): GatewayError {
    // Only ids this endpoint can serve are worth suggesting.
    const candidates = [
      ...this.publicList.filter((entry) => entry.mode === options.mode).map((entry) => entry.id),
      ...[...this.legacyAliases].filter(([, target]) => this.models.get(target)?.entry.mode === options.mode).map(([alias]) => alias),
    ];
    const suggestion = didYouMean(requested, candidates);
    const reason = why === undefined ? 'is not a model of this gateway' : `cannot be used: ${why}`;
    return new GatewayError(
      'model_not_found',
      `The model "${requested.slice(0, 200)}" ${reason}.${suggestion} Pick an id listed by GET /v1/models (mode ${options.mode}).`,
      { param: options.param ?? 'model' },
    );
  }
}

/** " Did you mean …?" with up to three close ids, or nothing. */
function didYouMean(requested: string, candidates: readonly string[]): string {
  const suggestions = closestIds(requested, candidates, 3);
  return suggestions.length > 0 ? ` Did you mean ${suggestions.map((id) => `"${id}"`).join(', ')}?` : '';
}
