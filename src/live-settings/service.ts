import { Value } from '@sinclair/typebox/value';
import type { Logger } from 'pino';
import type { Catalog, LiveCatalogLayer } from '../catalog/index.js';
import { ConfigError, RoutingEntrySchema, schemaProblems, type GatewayConfig, type ModelOverride, type RoutingEntry } from '../config/index.js';
import { GatewayError } from '../errors/index.js';
import type { ChangeSubscriber } from '../keys/index.js';
import { ModelOverrideSchema } from '../model-api/index.js';
import { redactText } from '../redaction/index.js';
import type { LiveScope, LiveSettingsStore, StoredSetting } from './store.js';
import type { AliasView, ModelSettingView, RoutingView, StoredFacts } from './types.js';

/** The one announcement of a change here: the others re-read every stored setting (there are few). */
const ANNOUNCED = /^live-settings$/;
/** A model id, alias or routed model as the admin API takes it in a path. */
const ID = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/;

/** How the other instances hear of a change made here, and how this one hears of theirs (the key channels, src/keys). */
export interface LiveAnnouncements {
  subscribe(subscriber: ChangeSubscriber): void;
  announceChange(id: string): void;
}

export interface LiveSettingsOptions {
  store: LiveSettingsStore;
  catalog: Catalog;
  /** The providers of the gateway now (provider instances come and go live). */
  providerNames: () => string[];
  config: GatewayConfig;
  /** Compiles and puts routing entries in force; throws a ConfigError naming every problem. */
  compileRouting: (entries: readonly RoutingEntry[]) => void;
  announcements: LiveAnnouncements;
  logger: Logger;
}

/** A model setting as the admin API takes it: a catalog.models entry without its id, and a note. */
export type ModelSettingInput = Omit<ModelOverride, 'id'> & { note?: string | null };

/** A ConfigError of the layered settings as a 400 naming the field: its message's `<field>: …` lines. */
function invalidOf(error: ConfigError, prefix: string, whole: string): GatewayError {
  const lines = error.message
    .split('\n')
    .map((line) => line.trim().replace(/^invalid setting /, ''))
    .filter((line) => line.length > 0 && !/^\d+ settings are invalid:$/.test(line));
  const own = lines.map((line) => {
    if (!line.startsWith(prefix)) return line;
    const rest = line.slice(prefix.length);
    return rest.startsWith(':') ? `${whole}${rest}` : rest.replace(/^\./, '');
  });
  const field = /^([A-Za-z0-9_.[\]"-]+):/.exec(own[0] ?? '')?.[1] ?? null;
  return new GatewayError('invalid_body', own.map((line) => `invalid setting ${line}`).join('; '), { param: field });
}

function problemsError(problems: readonly { field: string; reason: string }[]): GatewayError {
  return new GatewayError('invalid_body', problems.map(({ field, reason }) => `invalid setting ${field}: ${reason}`).join('; '), { param: problems[0]!.field });
}

function factsOf(setting: StoredSetting | undefined): StoredFacts {
  return {
    note: setting?.note ?? null,
    updated_by: setting?.updatedBy ?? null,
    updated_at: setting === undefined ? null : new Date(setting.updatedAt).toISOString(),
  };
}

function key(scope: LiveScope, name: string): string {
  return `${scope} ${name}`;
}

/**
 * Catalog models, prices, aliases and routing entries managed live (docs/catalog.md#models-managed-live,
 * docs/routing.md#routing-managed-live): stored in the database, layered between the shipped
 * catalog and the config file (whose entries win and are read-only here), put in force at once
 * on this instance and, through the key channels, on every other within about a second.
 */
export class LiveSettings {
  /** The stored settings in force here, by `<scope> <name>`. */
  private settings = new Map<string, StoredSetting>();
  /** The config file's routing in force (a reload of the file replaces it). */
  private configRouting: readonly RoutingEntry[];

  constructor(private readonly options: LiveSettingsOptions) {
    this.configRouting = options.config.routing;
  }

  /** Applies every stored setting and listens for the others' changes; before the gateway serves. */
  async start(): Promise<void> {
    const subscriber: ChangeSubscriber = {
      pattern: ANNOUNCED,
      reload: () => void this.refresh().catch((error: unknown) => this.failed(error)),
      refresh: () => void this.refresh().catch((error: unknown) => this.failed(error)),
    };
    this.options.announcements.subscribe(subscriber);
    await this.refresh();
  }

  /** The config file's routing changed (SIGHUP, the file saved): it is put in force with the stored entries under it. */
  applyConfigRouting(entries: readonly RoutingEntry[]): void {
    this.options.compileRouting(this.routingWith(entries, this.settings));
    this.configRouting = entries;
  }

  // ----- models and prices

  /** Every model the catalog knows, those disabled included, with where each comes from. */
  models(): ModelSettingView[] {
    const { catalog } = this.options;
    const listed = new Set(catalog.list().map((entry) => entry.id));
    const views = new Map<string, ModelSettingView>();
    for (const model of catalog.allModels()) {
      views.set(model.entry.id, {
        id: model.entry.id,
        provider: model.provider,
        upstream_id: model.upstreamId,
        mode: model.entry.mode,
        enabled: true,
        listed: listed.has(model.entry.id),
        ...this.sourceOf(model.entry.id),
        entry: model.entry,
      });
    }
    for (const id of catalog.disabled()) {
      views.set(id, { id, provider: null, upstream_id: null, mode: null, enabled: false, listed: false, ...this.sourceOf(id), entry: null });
    }
    return [...views.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  model(id: string): ModelSettingView | undefined {
    return this.models().find((view) => view.id === id);
  }

  /** Adds a model, or changes (prices, limits, enabled) one of the shipped catalog or of the admin API. */
  async putModel(id: string, input: Record<string, unknown>, by: string | null): Promise<{ before: ModelSettingView | null; after: ModelSettingView }> {
    this.checkId(id, 'id');
    this.refuseConfigModel(id);
    const { note, ...fields } = input;
    if (note !== undefined && note !== null && typeof note !== 'string') throw new GatewayError('invalid_body', 'invalid setting note: must be a string or null', { param: 'note' });
    const override = Value.Default(ModelOverrideSchema, Value.Clone({ ...fields, id })) as ModelOverride;
    const problems = schemaProblems(ModelOverrideSchema, override).filter((problem) => problem.field !== 'id');
    if (problems.length > 0) throw problemsError(problems);
    const before = this.model(id) ?? null;
    const { id: _id, ...value } = override;
    await this.change({ scope: 'model', name: id, value, note: (note as string | null | undefined) ?? null, updatedBy: by }, `model:${id}`, 'id');
    return { before, after: this.model(id)! };
  }

  /** Takes the admin API's setting of a model away: a shipped model is as shipped again, an added one is gone. */
  async removeModel(id: string): Promise<ModelSettingView> {
    this.refuseConfigModel(id);
    const before = this.model(id);
    if (before === undefined || !this.settings.has(key('model', id))) throw this.notFound('model', id, 'GET /admin/v1/models/settings lists them');
    await this.change({ scope: 'model', name: id, value: undefined, note: null, updatedBy: null }, `model:${id}`, 'id');
    return before;
  }

  // ----- aliases

  aliases(): AliasView[] {
    const { catalog, config } = this.options;
    const views: AliasView[] = [];
    const sourced = (alias: string, configured: Record<string, string>, setting: string): Pick<AliasView, 'source' | 'origin' | 'read_only'> & StoredFacts => {
      if (Object.hasOwn(configured, alias)) return { source: 'config', origin: `config file: ${setting}.${alias}`, read_only: true, ...factsOf(undefined) };
      const stored = this.settings.get(key('alias', alias));
      if (stored !== undefined) return { source: 'stored', origin: 'admin API', read_only: false, ...factsOf(stored) };
      return { source: 'shipped', origin: 'shipped catalog', read_only: false, ...factsOf(undefined) };
    };
    for (const [alias, target] of Object.entries(catalog.serviceAliasTargets())) {
      views.push({ alias, target, kind: 'service', ...sourced(alias, config.catalog.serviceAliases, 'catalog.serviceAliases') });
    }
    for (const [alias, target] of Object.entries(catalog.legacyAliasTargets())) {
      views.push({ alias, target, kind: 'legacy', ...sourced(alias, config.catalog.aliases, 'catalog.aliases') });
    }
    return views.sort((a, b) => a.alias.localeCompare(b.alias));
  }

  /** Points an alias at a model: a service alias must name a chat model. */
  async putAlias(alias: string, input: { target: string; kind?: 'service' | 'legacy'; note?: string | null }, by: string | null): Promise<{ before: AliasView | null; after: AliasView }> {
    this.checkId(alias, 'alias');
    this.refuseConfigAlias(alias);
    const before = this.aliases().find((view) => view.alias === alias) ?? null;
    const service = (input.kind ?? before?.kind ?? 'legacy') === 'service';
    await this.change({ scope: 'alias', name: alias, value: { target: input.target, service }, note: input.note ?? null, updatedBy: by }, `alias:${alias}`, 'alias');
    return { before, after: this.aliases().find((view) => view.alias === alias)! };
  }

  async removeAlias(alias: string): Promise<AliasView> {
    this.refuseConfigAlias(alias);
    const before = this.aliases().find((view) => view.alias === alias);
    if (before === undefined || !this.settings.has(key('alias', alias))) throw this.notFound('alias', alias, 'GET /admin/v1/models/aliases lists them');
    await this.change({ scope: 'alias', name: alias, value: undefined, note: null, updatedBy: null }, `alias:${alias}`, 'alias');
    return before;
  }

  // ----- routing

  routing(): RoutingView[] {
    const configured = new Set(this.configRouting.map((entry) => entry.model));
    const views: RoutingView[] = this.configRouting.map((entry, index) => ({
      model: entry.model,
      entry,
      source: 'config',
      origin: `config file: routing[${index}]`,
      read_only: true,
      in_force: true,
      ...factsOf(undefined),
    }));
    for (const setting of this.settings.values()) {
      if (setting.scope !== 'routing') continue;
      views.push({ model: setting.name, entry: setting.value as RoutingEntry, source: 'stored', origin: 'admin API', read_only: false, in_force: !configured.has(setting.name), ...factsOf(setting) });
    }
    return views;
  }

  /** Sets how a model is routed, checked as start-up checks the config file's routing: every problem, each naming its field. */
  async putRouting(model: string, input: Record<string, unknown>, by: string | null): Promise<{ before: RoutingView | null; after: RoutingView }> {
    this.checkId(model, 'model');
    this.refuseConfigRouting(model);
    const { note, ...fields } = input;
    const entry = Value.Default(RoutingEntrySchema, Value.Clone({ ...fields, model })) as RoutingEntry;
    const problems = schemaProblems(RoutingEntrySchema, entry);
    if (problems.length > 0) throw problemsError(problems);
    const before = this.routing().find((view) => view.source === 'stored' && view.model === model) ?? null;
    await this.change({ scope: 'routing', name: model, value: entry, note: typeof note === 'string' ? note : null, updatedBy: by }, `routing:${model}`, 'model');
    return { before, after: this.routing().find((view) => view.source === 'stored' && view.model === model)! };
  }

  async removeRouting(model: string): Promise<RoutingView> {
    this.refuseConfigRouting(model);
    const before = this.routing().find((view) => view.source === 'stored' && view.model === model);
    if (before === undefined) throw this.notFound('routing entry for', model, 'GET /admin/v1/routing lists them');
    await this.change({ scope: 'routing', name: model, value: undefined, note: null, updatedBy: null }, `routing:${model}`, 'model');
    return before;
  }

  // ----- applying

  /**
   * Puts the settings with this one changed in force here (checked whole: an invalid change throws
   * a 400 naming its field and nothing changes), stores it, and tells the other instances.
   */
  private async change(setting: Omit<StoredSetting, 'createdAt' | 'updatedAt'>, prefix: string, whole: string): Promise<void> {
    const next = new Map(this.settings);
    const now = Date.now();
    if (setting.value === undefined) next.delete(key(setting.scope, setting.name));
    else next.set(key(setting.scope, setting.name), { ...setting, createdAt: this.settings.get(key(setting.scope, setting.name))?.createdAt ?? now, updatedAt: now });
    const previous = this.settings;
    try {
      this.apply(next);
    } catch (error) {
      if (error instanceof ConfigError) {
        // The routing compiler names an entry by its place among all of them.
        const at = setting.scope === 'routing' ? this.routingWith(this.configRouting, next).findIndex((entry) => entry.model === setting.name) : -1;
        throw invalidOf(error, at >= 0 ? `routing[${at}]` : prefix, whole);
      }
      throw error;
    }
    try {
      if (setting.value === undefined) await this.options.store.remove(setting.scope, setting.name);
      else await this.options.store.put(setting);
    } catch (error) {
      this.apply(previous);
      throw error;
    }
    this.options.announcements.announceChange('live-settings');
  }

  /** Puts a whole set of stored settings in force, catalog then routing; throws a ConfigError (and changes nothing) when it is invalid. */
  private apply(settings: Map<string, StoredSetting>): void {
    const { catalog } = this.options;
    const previousLayer = catalog.live();
    catalog.applyLive(this.layerOf(settings), this.options.providerNames());
    try {
      this.options.compileRouting(this.routingWith(this.configRouting, settings));
    } catch (error) {
      catalog.applyLive(previousLayer, this.options.providerNames());
      throw error;
    }
    this.settings = settings;
  }

  /** Re-reads every stored setting (start-up, another instance's change, a channel's gap); one that no longer holds is left out, and said. */
  private async refresh(): Promise<void> {
    const stored = await this.options.store.list();
    const all = new Map(stored.map((setting) => [key(setting.scope, setting.name), setting]));
    try {
      this.apply(all);
      return;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
    }
    // One at a time, so that one setting that no longer holds (its provider removed) does not take the others with it.
    const kept = new Map<string, StoredSetting>();
    for (const [name, setting] of all) {
      const candidate = new Map(kept).set(name, setting);
      try {
        this.apply(candidate);
        kept.set(name, setting);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        this.options.logger.warn({ setting: name, reason: error.message }, `the ${setting.scope} setting ${setting.name} made through the admin API no longer holds; it is not in force until it is changed`);
      }
    }
    this.apply(kept);
  }

  private layerOf(settings: Map<string, StoredSetting>): LiveCatalogLayer {
    const models: LiveCatalogLayer['models'][number][] = [];
    const aliases: LiveCatalogLayer['aliases'][number][] = [];
    for (const setting of settings.values()) {
      if (setting.scope === 'model') models.push({ override: { ...(setting.value as Omit<ModelOverride, 'id'>), id: setting.name }, setting: `model:${setting.name}` });
      if (setting.scope === 'alias') {
        const { target, service } = setting.value as { target: string; service: boolean };
        aliases.push({ alias: setting.name, target, service, setting: `alias:${setting.name}` });
      }
    }
    return { models, aliases };
  }

  /** The config file's routing, then the stored entries of the models it does not route. */
  private routingWith(configRouting: readonly RoutingEntry[], settings: Map<string, StoredSetting>): RoutingEntry[] {
    const configured = new Set(configRouting.map((entry) => entry.model));
    const stored = [...settings.values()].filter((setting) => setting.scope === 'routing' && !configured.has(setting.name));
    return [...configRouting, ...stored.map((setting) => setting.value as RoutingEntry)];
  }

  private sourceOf(id: string): Pick<ModelSettingView, 'source' | 'origin' | 'read_only' | 'override'> & StoredFacts {
    const configured = this.configModelOrigin(id);
    if (configured !== undefined) return { source: 'config', origin: configured, read_only: true, override: null, ...factsOf(undefined) };
    const stored = this.settings.get(key('model', id));
    if (stored !== undefined) return { source: 'stored', origin: 'admin API', read_only: false, override: stored.value as Record<string, unknown>, ...factsOf(stored) };
    return { source: 'shipped', origin: 'shipped catalog', read_only: false, override: null, ...factsOf(undefined) };
  }

  private configModelOrigin(id: string): string | undefined {
    const { config } = this.options;
    const index = config.catalog.models.findIndex((model) => model.id === id);
    if (index >= 0) return `config file: catalog.models[${index}]`;
    for (const [at, provider] of config.providers.compatible.entries()) {
      const modelIndex = provider.models.findIndex((model) => model.id === id);
      if (modelIndex >= 0) return `config file: providers.compatible[${at}].models[${modelIndex}]`;
    }
    return undefined;
  }

  private checkId(id: string, param: string): void {
    if (!ID.test(id)) throw new GatewayError('invalid_body', `${param} must be 1 to 200 letters, digits or . _ : / @ + -, starting with a letter or digit`, { param });
  }

  private refuseConfigModel(id: string): void {
    const origin = this.configModelOrigin(id);
    if (origin !== undefined) throw new GatewayError('conflict', `The model "${id}" comes from the ${origin} and is read-only here: change it there.`);
  }

  private refuseConfigAlias(alias: string): void {
    const { config } = this.options;
    const setting = Object.hasOwn(config.catalog.aliases, alias) ? 'catalog.aliases' : Object.hasOwn(config.catalog.serviceAliases, alias) ? 'catalog.serviceAliases' : undefined;
    if (setting !== undefined) throw new GatewayError('conflict', `The alias "${alias}" comes from the config file (${setting}.${alias}) and is read-only here: change it there.`);
  }

  private refuseConfigRouting(model: string): void {
    const index = this.configRouting.findIndex((entry) => entry.model === model);
    if (index >= 0) throw new GatewayError('conflict', `The routing of "${model}" comes from the config file (routing[${index}]) and is read-only here: change it there.`);
  }

  private notFound(what: string, name: string, hint: string): GatewayError {
    return new GatewayError('not_found', `There is no ${what} "${name.slice(0, 64)}" set through the admin API. ${hint}.`);
  }

  private failed(error: unknown): void {
    this.options.logger.warn({ reason: redactText(error instanceof Error ? error.message : String(error)) }, 'a catalog or routing change announced by another instance could not be read; it is applied on the next refresh');
  }
}
