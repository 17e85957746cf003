import { Value } from '@sinclair/typebox/value';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { GatewayError } from '../errors/index.js';
import type { ChangeSubscriber } from '../keys/index.js';
import type { Database } from '../storage/index.js';
import { GuardrailConfigError, GuardrailSchema, type GuardrailConfig, type GuardrailPolicy } from './policy.js';
import type { Guardrails, GuardrailSource } from './service.js';

/**
 * Guardrails defined through the admin API (docs/guardrails.md#guardrails-defined-in-the-dashboard):
 * each kept as the config-file entry it would be, parsed by the same parser, put into what runs
 * here at once and, announced on the key channels (`guardrail:<name>`), on every other instance
 * within about a second. Config-file entries stay, read-only, and their names are theirs.
 */

/** `GET /admin/v1/guardrails`: one guardrail and where it is defined (docs/admin-api.md#guardrails). */
export interface GuardrailEntryView {
  name: string;
  check: GuardrailConfig['check'];
  stage: ('input' | 'output')[];
  action: GuardrailConfig['action'];
  on_error: 'closed' | 'open';
  apply: { all: boolean; keys: string[]; projects: string[]; models: string[] };
  window: number;
  /** The check's options, defaults filled (a webhook's key is only the name of its variable). */
  options: Record<string, unknown>;
  /** `config`: the config file's, read-only here; `stored`: defined through the admin API. */
  source: GuardrailSource;
  read_only: boolean;
  created_at: string | null;
  updated_at: string | null;
}

interface StoredGuardrail {
  definition: GuardrailConfig;
  createdAt: number;
  updatedAt: number;
}

const NAME = /^guardrail:([a-z0-9][a-z0-9_-]{0,63})$/;

export class GuardrailStore {
  constructor(private readonly db: Kysely<Database>) {}

  async list(): Promise<StoredGuardrail[]> {
    const rows = await this.db.selectFrom('guardrails').selectAll().orderBy('name', 'asc').execute();
    return rows.map(storedOf);
  }

  async get(name: string): Promise<StoredGuardrail | undefined> {
    const row = await this.db.selectFrom('guardrails').selectAll().where('name', '=', name).executeTakeFirst();
    return row === undefined ? undefined : storedOf(row);
  }

  async put(definition: GuardrailConfig): Promise<StoredGuardrail> {
    const now = Date.now();
    const values = { definition: JSON.stringify(definition), updated_at: now };
    await this.db
      .insertInto('guardrails')
      .values({ name: definition.name, ...values, created_at: now })
      .onConflict((conflict) => conflict.column('name').doUpdateSet(values))
      .execute();
    return (await this.get(definition.name))!;
  }

  async remove(name: string): Promise<boolean> {
    const result = await this.db.deleteFrom('guardrails').where('name', '=', name).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

function storedOf(row: Database['guardrails']): StoredGuardrail {
  return { definition: JSON.parse(row.definition) as GuardrailConfig, createdAt: Number(row.created_at), updatedAt: Number(row.updated_at) };
}

/** A TypeBox error path (`/options/patterns/0`) as a field (`options.patterns[0]`). */
function fieldOfPath(path: string): string {
  return path
    .split('/')
    .filter((part) => part !== '')
    .map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join('');
}

/** A problem of an entry as the admin API answers it: 400 invalid_body naming the field. */
function invalid(message: string): GatewayError {
  const field = /^invalid setting ([^\s:]+)/.exec(message)?.[1];
  return new GatewayError('invalid_body', message, field === undefined ? {} : { param: field });
}

export interface StoredGuardrailsOptions {
  store: GuardrailStore;
  guardrails: Guardrails;
  announcements: { subscribe(subscriber: ChangeSubscriber): void; announceChange(id: string): void };
  /** What the parser cannot know (a checker model in the catalog, a provider with a moderation endpoint): throws a GuardrailConfigError naming the field. */
  checkReferences: (entry: GuardrailConfig) => void;
  logger: Logger;
}

export class StoredGuardrails {
  /** The updated_at of each stored guardrail applied here: an older read that arrives late changes nothing. */
  private readonly applied = new Map<string, number>();

  constructor(private readonly options: StoredGuardrailsOptions) {}

  /** Applies every stored guardrail and listens for the others' changes; before the gateway serves. */
  async start(): Promise<void> {
    this.options.announcements.subscribe({
      pattern: NAME,
      reload: (id) => void this.reload(NAME.exec(id)![1]!).catch((error: unknown) => this.failed(error)),
      refresh: () => void this.refresh().catch((error: unknown) => this.failed(error)),
    });
    await this.refresh();
  }

  /** The config file's guardrails, then the stored ones, in the order they run. */
  async list(): Promise<GuardrailEntryView[]> {
    const stored = new Map((await this.options.store.list()).map((entry) => [entry.definition.name, entry]));
    return this.options.guardrails.policies.map((policy) => viewOf(policy, policy.source === 'stored' ? stored.get(policy.name) : undefined));
  }

  async get(name: string): Promise<GuardrailEntryView | undefined> {
    return (await this.list()).find((view) => view.name === name);
  }

  /** Validates an entry as the config file's guardrails[] takes it, stores and applies it. */
  async create(input: Record<string, unknown>): Promise<GuardrailEntryView> {
    const entry = this.validated(input);
    this.refuseConfigured(entry.name);
    if ((await this.options.store.get(entry.name)) !== undefined) throw new GatewayError('conflict', `There is already a guardrail "${entry.name}". Edit it, or give this one another name.`);
    return this.save(entry);
  }

  /** Changes a stored guardrail: each field given replaces its own (options whole); the name stays. */
  async update(name: string, patch: Record<string, unknown>): Promise<{ before: GuardrailEntryView; after: GuardrailEntryView }> {
    this.refuseConfigured(name);
    const stored = await this.stored(name);
    if (patch.name !== undefined && patch.name !== name) throw new GatewayError('invalid_body', 'invalid setting name: a guardrail keeps its name; delete it and create another', { param: 'name' });
    const entry = this.validated({ ...stored.definition, ...patch, name });
    const before = viewOf(this.options.guardrails.build(stored.definition).policy, stored);
    return { before, after: await this.save(entry) };
  }

  async remove(name: string): Promise<GuardrailEntryView> {
    this.refuseConfigured(name);
    const stored = await this.stored(name);
    const before = (await this.get(name)) ?? viewOf(this.options.guardrails.build(stored.definition).policy, stored);
    await this.options.store.remove(name);
    this.applied.delete(name);
    this.options.guardrails.removeStored(name);
    this.options.announcements.announceChange(`guardrail:${name}`);
    return before;
  }

  private validated(input: Record<string, unknown>): GuardrailConfig {
    const entry = Value.Default(GuardrailSchema, Value.Clone(input)) as GuardrailConfig;
    const problem = Value.Errors(GuardrailSchema, entry).First();
    if (problem !== undefined) {
      const field = fieldOfPath(problem.path);
      throw invalid(`invalid setting ${field === '' ? 'body' : field}: ${problem.message.charAt(0).toLowerCase()}${problem.message.slice(1)}`);
    }
    try {
      this.options.guardrails.build(entry);
      this.options.checkReferences(entry);
    } catch (error) {
      if (error instanceof GuardrailConfigError) throw invalid(error.message);
      throw error;
    }
    return entry;
  }

  private async save(entry: GuardrailConfig): Promise<GuardrailEntryView> {
    const stored = await this.options.store.put(entry);
    this.apply(stored);
    this.options.announcements.announceChange(`guardrail:${entry.name}`);
    return (await this.get(entry.name))!;
  }

  private async reload(name: string): Promise<void> {
    const stored = await this.options.store.get(name);
    if (stored === undefined) {
      this.applied.delete(name);
      this.options.guardrails.removeStored(name);
    } else this.apply(stored);
  }

  /** Re-reads every stored guardrail (start-up, and after a channel's gap). */
  private async refresh(): Promise<void> {
    const stored = await this.options.store.list();
    for (const entry of stored) this.apply(entry);
    const names = new Set(stored.map((entry) => entry.definition.name));
    for (const name of this.options.guardrails.storedNames().filter((applied) => !names.has(applied))) {
      this.applied.delete(name);
      this.options.guardrails.removeStored(name);
    }
  }

  private apply(stored: StoredGuardrail): void {
    const { name } = stored.definition;
    if ((this.applied.get(name) ?? -1) > stored.updatedAt) return;
    const put = this.options.guardrails.putStored(stored.definition, (reason) =>
      this.options.logger.warn({ guardrail: name, reason }, `guardrail ${name} cannot be built on this instance; its check fails (closed unless onError: open) until it can`),
    );
    if (!put) this.options.logger.warn({ guardrail: name }, `guardrail ${name} of the database has the name of a config-file guardrail, which is in force`);
    this.applied.set(name, stored.updatedAt);
  }

  private refuseConfigured(name: string): void {
    if (this.options.guardrails.isConfigured(name)) {
      throw new GatewayError('conflict', `The guardrail "${name}" comes from the config file and is read-only here: change it there, or give this one another name.`);
    }
  }

  private async stored(name: string): Promise<StoredGuardrail> {
    const stored = await this.options.store.get(name);
    if (stored === undefined) throw new GatewayError('not_found', `There is no guardrail "${name.slice(0, 64)}". GET /admin/v1/guardrails lists them.`);
    return stored;
  }

  private failed(error: unknown): void {
    this.options.logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'a guardrail change announced by another instance could not be read; it is applied on the next refresh');
  }
}

function viewOf(policy: GuardrailPolicy, stored: StoredGuardrail | undefined): GuardrailEntryView {
  return {
    name: policy.name,
    check: policy.check,
    stage: [...policy.stages],
    action: policy.action,
    on_error: policy.failClosed ? 'closed' : 'open',
    apply: { all: policy.apply.all, keys: [...policy.apply.keys], projects: [...policy.apply.projects], models: [...policy.apply.models] },
    window: policy.window,
    options: policy.options as Record<string, unknown>,
    source: stored === undefined ? 'config' : 'stored',
    read_only: stored === undefined,
    created_at: stored === undefined ? null : new Date(stored.createdAt).toISOString(),
    updated_at: stored === undefined ? null : new Date(stored.updatedAt).toISOString(),
  };
}
