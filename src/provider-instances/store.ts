import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Keyring } from '../crypto/index.js';
import type { Database } from '../storage/index.js';

/** A provider instance as the store holds it, its secrets opened. */
export interface StoredInstance {
  name: string;
  kind: string;
  /** Its settings without the secret fields. */
  settings: Record<string, unknown>;
  /** Its secret fields (credentials), opened with the gateway's encryption key. */
  secrets: Record<string, string>;
  /** Each secret field's fingerprint, shown in place of the secret. */
  fingerprints: Record<string, string>;
  createdAt: number;
  updatedAt: number;
}

/** The associated data a sealed secret is bound to: one instance's secrets cannot be moved to another's row. */
function sealedFor(name: string): string {
  return `provider-instance:${name}`;
}

/**
 * What is shown of a secret after it is saved: a short hash that tells two credentials apart,
 * and its last four characters when it is long enough for them to reveal nothing useful.
 */
export function fingerprintOf(secret: string): string {
  const hash = createHash('sha256').update(secret).digest('hex').slice(0, 8);
  return secret.length >= 16 ? `sha256:${hash} …${secret.slice(-4)}` : `sha256:${hash}`;
}

/**
 * Provider instances an administrator added (docs/providers.md#providers-added-live): their
 * settings as JSON, their secrets sealed with the gateway's encryption key (AES-256-GCM, the
 * `enc::` values of src/crypto) and bound to the instance's name.
 */
export class ProviderInstanceStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly keyring: Keyring,
    /** Told of an instance whose secrets this gateway cannot open (sealed with a key it no longer holds): it is left out, not fatal. */
    private readonly unreadable: (name: string) => void,
  ) {}

  async list(): Promise<StoredInstance[]> {
    const rows = await this.db.selectFrom('provider_instances').selectAll().orderBy('name', 'asc').execute();
    return rows.flatMap((row) => {
      try {
        return [this.opened(row)];
      } catch {
        this.unreadable(row.name);
        return [];
      }
    });
  }

  async get(name: string): Promise<StoredInstance | undefined> {
    const row = await this.db.selectFrom('provider_instances').selectAll().where('name', '=', name).executeTakeFirst();
    return row === undefined ? undefined : this.opened(row);
  }

  /** Adds the instance, or replaces the one of its name; returns it as stored. */
  async put(instance: Pick<StoredInstance, 'name' | 'kind' | 'settings' | 'secrets'>): Promise<StoredInstance> {
    const now = Date.now();
    const fingerprints = Object.fromEntries(Object.entries(instance.secrets).map(([field, secret]) => [field, fingerprintOf(secret)]));
    const values = {
      kind: instance.kind,
      settings: JSON.stringify(instance.settings),
      secrets: this.keyring.encrypt(JSON.stringify(instance.secrets), sealedFor(instance.name)),
      fingerprints: JSON.stringify(fingerprints),
      updated_at: now,
    };
    await this.db
      .insertInto('provider_instances')
      .values({ name: instance.name, ...values, created_at: now })
      .onConflict((conflict) => conflict.column('name').doUpdateSet(values))
      .execute();
    return (await this.get(instance.name))!;
  }

  /** Removes the instance; false when there was none of this name. */
  async remove(name: string): Promise<boolean> {
    const result = await this.db.deleteFrom('provider_instances').where('name', '=', name).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  private opened(row: Database['provider_instances']): StoredInstance {
    return {
      name: row.name,
      kind: row.kind,
      settings: JSON.parse(row.settings) as Record<string, unknown>,
      secrets: JSON.parse(this.keyring.decrypt(row.secrets, `provider_instances.${row.name}.secrets`, sealedFor(row.name))) as Record<string, string>,
      fingerprints: JSON.parse(row.fingerprints) as Record<string, string>,
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
    };
  }
}
