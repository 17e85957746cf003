import type { Static, TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/index.js';
import { closestIds, schemaProblems } from '../config/index.js';
import { GatewayError, isGatewayError } from '../errors/index.js';
import type { ChangeSubscriber } from '../keys/index.js';
import { VENDOR_PROVIDERS, vendorDescriptor, type ProviderDescriptor, type ProviderInstanceBuilder, type ProviderRegistry } from '../providers/index.js';
import { addKnownSecrets, redactText } from '../redaction/index.js';
import type { ProviderInstanceStore, StoredInstance } from './store.js';
import type { NewProviderInstanceInput, ProviderInstanceView, ProviderKindView, ProviderTestView } from './types.js';

type Descriptor = ProviderDescriptor<string, string, TObject>;

/** A stored instance's name: what the registry, routing deployments and announcements know it by. */
const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** Announcements of provider changes on the key channels: `provider:<name>`. */
const ANNOUNCED = /^provider:([a-z0-9][a-z0-9_-]{0,62})$/;
/** Longest wait for a test request's answer. */
const TEST_TIMEOUT_MS = 15_000;

/** How the other instances hear of a change made here, and how this one hears of theirs (the key channels, src/keys). */
export interface ChangeAnnouncements {
  subscribe(subscriber: ChangeSubscriber): void;
  announceChange(id: string): void;
}

export interface ProviderInstancesOptions {
  store: ProviderInstanceStore;
  registry: ProviderRegistry;
  catalog: Catalog;
  build: ProviderInstanceBuilder;
  announcements: ChangeAnnouncements;
  /** The providers the environment and the config file set (configuredEntries): read-only, and they win. */
  configured: ReadonlyMap<string, ProviderInstanceView>;
  logger: Logger;
}

function invalidSettings(problems: readonly { field: string; reason: string }[]): GatewayError {
  const lines = problems.map(({ field, reason }) => `invalid setting settings.${field}: ${reason}`);
  return new GatewayError('invalid_body', lines.join('; '), { param: `settings.${problems[0]!.field}` });
}

/**
 * Providers and credentials managed live (docs/providers.md#providers-added-live): instances of
 * the descriptors' kinds an administrator adds, edits and removes through the admin API, kept in
 * the database with their secrets sealed, applied to the registry at once here and, through the
 * key channels, on every other instance within about a second.
 */
export class ProviderInstances {
  /** The updated_at of each stored instance applied here: an older read that arrives late changes nothing. */
  private readonly applied = new Map<string, number>();

  constructor(private readonly options: ProviderInstancesOptions) {}

  /** Applies every stored instance and listens for the others' changes; before the gateway serves. */
  async start(): Promise<void> {
    this.options.announcements.subscribe({
      pattern: ANNOUNCED,
      reload: (id) => void this.reload(ANNOUNCED.exec(id)![1]!).catch((error: unknown) => this.failed(error)),
      refresh: () => void this.refresh().catch((error: unknown) => this.failed(error)),
    });
    await this.refresh();
  }

  /** Every kind of provider the descriptors know, with its settings schema. */
  kinds(): ProviderKindView[] {
    return VENDOR_PROVIDERS.map((vendor) => ({
      kind: vendor.name,
      settings_schema: JSON.parse(JSON.stringify(vendor.settings)) as Record<string, unknown>,
      secret_fields: [...vendor.secretFields],
      environment: vendor.environment.map((setting) => ({ field: setting.field, variables: [...setting.variables] })),
    }));
  }

  /** The environment's and the config file's providers, then the stored ones. */
  async list(): Promise<ProviderInstanceView[]> {
    const stored = await this.options.store.list();
    return [...[...this.options.configured.values()].map((entry) => this.withState(entry)), ...stored.map((instance) => this.viewOf(instance))];
  }

  async get(name: string): Promise<ProviderInstanceView | undefined> {
    const configured = this.options.configured.get(name);
    if (configured !== undefined) return this.withState(configured);
    const stored = await this.options.store.get(name);
    return stored === undefined ? undefined : this.viewOf(stored);
  }

  async create(input: NewProviderInstanceInput): Promise<ProviderInstanceView> {
    if (!NAME.test(input.name)) throw new GatewayError('invalid_body', 'name must be 1 to 63 lowercase letters, digits, "-" or "_", starting with a letter or digit', { param: 'name' });
    const descriptor = vendorDescriptor(input.kind);
    if (descriptor === undefined) {
      const [closest] = closestIds(input.kind, VENDOR_PROVIDERS.map((vendor) => vendor.name), 1);
      throw new GatewayError('invalid_body', `kind "${input.kind.slice(0, 64)}" is not a kind of provider${closest === undefined ? '' : ` (did you mean ${closest}?)`}; GET /admin/v1/providers/kinds lists them`, { param: 'kind' });
    }
    if (vendorDescriptor(input.name) !== undefined && input.name !== input.kind) {
      throw new GatewayError('invalid_body', `"${input.name}" is the name of the ${input.name} provider: give this ${input.kind} instance a name of its own`, { param: 'name' });
    }
    this.refuseConfigured(input.name);
    if ((await this.options.store.get(input.name)) !== undefined) throw new GatewayError('conflict', `There is already a provider "${input.name}". Edit it, or give this one another name.`);
    if (this.options.registry.state(input.name) !== 'absent' && vendorDescriptor(input.name) === undefined) {
      throw new GatewayError('conflict', `"${input.name}" is already the name of a provider of this gateway; give this one another name.`);
    }
    return this.save(input.name, descriptor, input.settings);
  }

  /** Changes a stored instance's settings: a field set to null is removed, a secret left out is kept. */
  async update(name: string, patch: Record<string, unknown>): Promise<{ before: ProviderInstanceView; after: ProviderInstanceView }> {
    this.refuseConfigured(name);
    const stored = await this.stored(name);
    const settings: Record<string, unknown> = { ...stored.settings, ...stored.secrets };
    for (const [field, value] of Object.entries(patch)) {
      if (value === null) delete settings[field];
      else settings[field] = value;
    }
    const before = this.viewOf(stored);
    return { before, after: await this.save(name, vendorDescriptor(stored.kind)!, settings) };
  }

  /** Removes a stored instance; answers it as it was. */
  async remove(name: string): Promise<ProviderInstanceView> {
    this.refuseConfigured(name);
    const before = this.viewOf(await this.stored(name));
    await this.options.store.remove(name);
    this.unapply(name);
    this.options.announcements.announceChange(`provider:${name}`);
    return before;
  }

  /** Sends one tiny request through the provider now: a one-token chat, or an embedding of one word for a provider without chat. */
  async test(name: string, requestId: string, model?: string): Promise<ProviderTestView> {
    if ((await this.get(name)) === undefined) throw this.notFound(name);
    const served = this.options.catalog.servedBy(name);
    const started = performance.now();
    let upstreamModel: string | null = model ?? null;
    try {
      const provider = this.options.registry.get(name);
      const signal = AbortSignal.timeout(TEST_TIMEOUT_MS);
      const chosen = (mode: string) => model ?? served.find((candidate) => candidate.entry.mode === mode)?.upstreamId;
      if (provider.chat !== undefined && chosen('chat') !== undefined) {
        upstreamModel = chosen('chat')!;
        await provider.chat.complete({ signal, requestId, upstreamModel, body: { messages: [{ role: 'user', content: 'Reply with OK.' }], max_completion_tokens: 16 } });
      } else if (provider.embeddings !== undefined && chosen('embedding') !== undefined) {
        upstreamModel = chosen('embedding')!;
        await provider.embeddings.embed({ signal, requestId, upstreamModel, body: { input: 'ping' } });
      } else {
        throw new GatewayError('invalid_body', `${name} serves no chat or embedding model of the catalog: give the upstream model to call in "model"`, { param: 'model' });
      }
      return { ok: true, model: upstreamModel, latency_ms: Math.round(performance.now() - started), error: null };
    } catch (error) {
      if (isGatewayError(error) && error.code === 'invalid_body' && error.param === 'model') throw error;
      const code = isGatewayError(error) ? error.code : 'provider_error';
      const message = redactText(error instanceof Error ? error.message : String(error));
      return { ok: false, model: upstreamModel, latency_ms: Math.round(performance.now() - started), error: { code, message } };
    }
  }

  private async save(name: string, descriptor: Descriptor, given: Record<string, unknown>): Promise<ProviderInstanceView> {
    const settings = Value.Default(descriptor.settings, Value.Clone(given)) as Static<TObject>;
    const problems = schemaProblems(descriptor.settings, settings);
    if (problems.length > 0) throw invalidSettings(problems);
    const lacking = descriptor.missing(settings);
    if (lacking !== null) throw invalidSettings([{ field: lacking.field, reason: 'is required: the provider cannot be called without it' }]);
    const secrets = Object.fromEntries(descriptor.secretFields.flatMap((field) => (typeof settings[field] === 'string' ? [[field, settings[field]]] : [])));
    const plain = Object.fromEntries(Object.entries(settings).filter(([field]) => !descriptor.secretFields.includes(field)));
    addKnownSecrets(descriptor.secretValues(settings));
    const stored = await this.options.store.put({ name, kind: descriptor.name, settings: plain, secrets });
    this.apply(stored);
    this.options.announcements.announceChange(`provider:${name}`);
    return this.viewOf(stored);
  }

  /** Re-reads one instance another instance announced. */
  private async reload(name: string): Promise<void> {
    const stored = await this.options.store.get(name);
    if (stored === undefined) this.unapply(name);
    else this.apply(stored);
  }

  /** Re-reads every stored instance (start-up, and after a channel's gap). */
  private async refresh(): Promise<void> {
    const stored = await this.options.store.list();
    for (const instance of stored) this.apply(instance);
    const names = new Set(stored.map((instance) => instance.name));
    for (const name of [...this.applied.keys()].filter((applied) => !names.has(applied))) this.unapply(name);
  }

  /** Builds the stored instance into the registry (unless the environment or config file sets its name). */
  private apply(instance: StoredInstance): void {
    if (this.options.configured.has(instance.name)) return;
    if ((this.applied.get(instance.name) ?? -1) > instance.updatedAt) return;
    const descriptor = vendorDescriptor(instance.kind);
    if (descriptor === undefined) return this.options.logger.warn({ provider: instance.name, kind: instance.kind }, `provider ${instance.name} is of a kind this version does not know (${instance.kind}); it is not served`);
    const settings = Value.Default(descriptor.settings, { ...instance.settings, ...instance.secrets }) as Static<TObject>;
    addKnownSecrets(descriptor.secretValues(settings));
    this.put(descriptor, instance.name, settings, 'admin API');
    this.applied.set(instance.name, instance.updatedAt);
  }

  /** Takes a removed instance away; a vendor's own name goes back to its built-in, unconfigured provider. */
  private unapply(name: string): void {
    if (this.options.configured.has(name) || !this.applied.delete(name)) return;
    const descriptor = vendorDescriptor(name);
    if (descriptor === undefined) {
      this.options.registry.remove(name);
      return;
    }
    this.put(descriptor, name, Value.Default(descriptor.settings, {}) as Static<TObject>, `providers.${name}`);
  }

  private put(descriptor: Descriptor, name: string, settings: Static<TObject>, settingPrefix: string): void {
    const lacking = descriptor.missing(settings);
    const missing = lacking === null ? null : { variable: lacking.variable, setting: `${settingPrefix}.${lacking.field}` };
    this.options.registry.put(this.options.build(descriptor, name, settings), { missing, description: descriptor.describe(settings) });
    this.options.catalog.setProviderListed(name, missing === null);
  }

  private refuseConfigured(name: string): void {
    const configured = this.options.configured.get(name);
    if (configured === undefined) return;
    throw new GatewayError('conflict', `The provider "${name}" comes from the ${configured.source === 'env' ? 'environment' : 'config file'} (${configured.origin.replace(/^[a-z ]+: /, '')}) and is read-only here: change it there.`);
  }

  private async stored(name: string): Promise<StoredInstance> {
    const stored = await this.options.store.get(name);
    if (stored === undefined) throw this.notFound(name);
    return stored;
  }

  private notFound(name: string): GatewayError {
    return new GatewayError('not_found', `There is no provider "${name.slice(0, 64)}". GET /admin/v1/providers lists them.`);
  }

  private withState(entry: ProviderInstanceView): ProviderInstanceView {
    const state = this.options.registry.state(entry.name);
    const description = this.options.registry.summaries().find((summary) => summary.name === entry.name)?.description ?? null;
    return { ...entry, state: state === 'callable' ? 'callable' : 'unconfigured', description };
  }

  private viewOf(instance: StoredInstance): ProviderInstanceView {
    const shadowed = this.options.configured.has(instance.name);
    const view: ProviderInstanceView = {
      name: instance.name,
      kind: instance.kind,
      source: 'stored',
      origin: 'admin API',
      read_only: false,
      settings: instance.settings,
      credentials: Object.entries(instance.fingerprints).map(([field, fingerprint]) => ({ field, fingerprint })),
      state: 'callable',
      description: null,
      created_at: new Date(instance.createdAt).toISOString(),
      updated_at: new Date(instance.updatedAt).toISOString(),
    };
    return shadowed ? { ...view, state: 'shadowed' } : this.withState(view);
  }

  private failed(error: unknown): void {
    this.options.logger.warn({ reason: redactText(error instanceof Error ? error.message : String(error)) }, 'a provider change announced by another instance could not be read; it is applied on the next refresh');
  }
}
