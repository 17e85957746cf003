import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../storage/index.js';
import type { KeyCache } from './key-cache.js';
import type { KeyRow } from './key-store.js';

/**
 * A way to tell the other instances (or workers) of a deployment that a key changed: a
 * PostgreSQL NOTIFY, a Redis publish, a message through the `serve --workers` primary. The
 * message is a short text; a lost one is made good by the key cache's refresh interval.
 */
export interface KeyChangeChannel {
  /** Sends `message` to the others. Never throws and never waits: a failure is the channel's to log. */
  publish(message: string): void;
  /**
   * Starts delivering the others' messages to `onMessage`, and calls `onGap` when messages may
   * have been lost (the channel reconnected after an outage). Resolves once the channel listens,
   * or once its first attempt failed (it keeps trying; the gateway serves meanwhile).
   */
  subscribe(onMessage: (message: string) => void, onGap: () => void): Promise<void>;
  close(): Promise<void>;
}

const KEY_ID = /^key_[0-9a-f]{16}$/;

/**
 * Other stored things whose changes ride on the same channels (provider instances): the ids it
 * announces match `pattern`; `reload` re-reads one, `refresh` re-reads all after a gap.
 */
export interface ChangeSubscriber {
  readonly pattern: RegExp;
  reload(id: string): void;
  refresh(): void;
}

/**
 * Key changes, shared with every other instance and worker. A change made here is applied to
 * this instance's cache at once and announced on every channel; an announcement from another
 * instance makes this one re-read that key, so a pause or revoke holds everywhere as soon as
 * the channel delivers it. Messages carry the key id only (never a secret or its hash), plus
 * this instance's id so that it skips its own.
 */
export class KeyPropagation {
  private readonly origin = randomBytes(6).toString('hex');
  private closed = false;
  private readonly subscribers: ChangeSubscriber[] = [];

  constructor(
    private readonly cache: KeyCache,
    private readonly channels: readonly KeyChangeChannel[],
  ) {}

  /** Listens on every channel; resolves before the gateway serves, so no change made after it is missed. */
  async start(): Promise<void> {
    await Promise.all(
      this.channels.map((channel) =>
        channel.subscribe(
          (message) => this.receive(message),
          () => {
            void this.cache.refresh();
            for (const subscriber of this.subscribers) subscriber.refresh();
          },
        ),
      ),
    );
  }

  /** A key changed through this instance (created, updated, paused, resumed, revoked). */
  announce(row: KeyRow): void {
    this.cache.put(row);
    this.announceChange(row.id);
  }

  /** Delivers the others' announcements of ids matching `subscriber.pattern` (never a key id) to it. */
  subscribe(subscriber: ChangeSubscriber): void {
    this.subscribers.push(subscriber);
  }

  /** Something a subscriber of the other instances re-reads changed through this instance (its id only, never a secret). */
  announceChange(id: string): void {
    for (const channel of this.channels) channel.publish(`${this.origin} ${id}`);
  }

  async close(): Promise<void> {
    // The store closes after this: a message still arriving (from a worker's primary) is not read.
    this.closed = true;
    await Promise.all(this.channels.map((channel) => channel.close()));
  }

  private receive(message: string): void {
    const [origin, id] = message.split(' ');
    if (this.closed || origin === this.origin || id === undefined) return;
    if (KEY_ID.test(id)) return void this.cache.reload(id);
    this.subscribers.find((subscriber) => subscriber.pattern.test(id))?.reload(id);
  }
}

export interface KeyChannelSettings {
  redisUrl: string | undefined;
  databaseUrl: string | undefined;
}

/**
 * The channel between instances the deployment has: Redis pub/sub when REDIS_URL is set (it
 * passes through any PostgreSQL pooler), else PostgreSQL LISTEN/NOTIFY, else none (one
 * instance, or workers, whose primary relays their messages). Loaded only when used: ioredis
 * and pg each take a tenth of a second to load.
 */
export async function sharedKeyChannels(settings: KeyChannelSettings, db: Kysely<Database>, logger: Logger): Promise<KeyChangeChannel[]> {
  if (settings.redisUrl !== undefined) {
    const { redisKeyChannel } = await import('./redis-key-channel.js');
    return [redisKeyChannel(settings.redisUrl, logger)];
  }
  if (settings.databaseUrl !== undefined) {
    const { postgresKeyChannel } = await import('./postgres-key-channel.js');
    return [postgresKeyChannel(settings.databaseUrl, db, logger)];
  }
  return [];
}
