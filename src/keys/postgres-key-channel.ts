import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { listenForNotifications, notify, type Database, type NotificationListener } from '../storage/index.js';
import type { KeyChangeChannel } from './key-propagation.js';
import { outageLog } from './outage-log.js';

const CHANNEL = 'modelgate_key_changes';

/**
 * Key changes over PostgreSQL LISTEN/NOTIFY: the database every instance already shares. The
 * listening connection needs a session of its own, so a pooler in transaction mode between
 * the gateway and PostgreSQL does not deliver them; the refresh interval still does.
 */
export function postgresKeyChannel(databaseUrl: string, db: Kysely<Database>, logger: Logger): KeyChangeChannel {
  let listener: NotificationListener | undefined;
  const outage = outageLog(logger, {
    failing: 'key changes cannot be shared through PostgreSQL notifications; other instances see them on their next key refresh',
    recovered: 'key changes are shared through PostgreSQL notifications again',
  });
  return {
    publish(message) {
      notify(db as Kysely<unknown>, CHANNEL, message).then(outage.recovered, outage.failed);
    },
    async subscribe(onMessage, onGap) {
      listener = await listenForNotifications(databaseUrl, CHANNEL, {
        message: onMessage,
        resumed() {
          outage.recovered();
          onGap();
        },
        failed: outage.failed,
      });
    },
    async close() {
      await listener?.close();
    },
  };
}
