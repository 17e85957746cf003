import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { KeyChangeChannel } from './key-propagation.js';
import { outageLog } from './outage-log.js';

/** One name for every deployment: a message about a key id another deployment does not have changes nothing. */
const CHANNEL = 'modelgate:key-changes';

const retryStrategy = (attempt: number) => Math.min(attempt * 250, 5_000);

/**
 * Key changes over Redis pub/sub: one connection publishes, one listens (a subscribed Redis
 * connection can do nothing else). Both reconnect on their own; while Redis is away, changes
 * reach the other instances on the key cache's refresh interval, and a reconnect re-reads
 * what may have been missed.
 */
export function redisKeyChannel(url: string, logger: Logger): KeyChangeChannel {
  // Publishing fails at once while disconnected rather than queueing for a Redis that may not come back.
  const publisher = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy });
  const subscriber = new Redis(url, { lazyConnect: true, autoResubscribe: false, retryStrategy });
  const outage = outageLog(logger, {
    failing: 'key changes cannot be shared through Redis; other instances see them on their next key refresh',
    recovered: 'key changes are shared through Redis again',
  });
  publisher.on('error', outage.failed);
  subscriber.on('error', outage.failed);
  return {
    publish(message) {
      publisher.publish(CHANNEL, message).then(outage.recovered, outage.failed);
    },
    subscribe(onMessage, onGap) {
      let listenedBefore = false;
      subscriber.on('message', (channel: string, message: string) => {
        if (channel === CHANNEL) onMessage(message);
      });
      return new Promise<void>((resolve) => {
        subscriber.on('ready', () => {
          subscriber.subscribe(CHANNEL).then(
            () => {
              outage.recovered();
              if (listenedBefore) onGap();
              listenedBefore = true;
              resolve();
            },
            (error: Error) => {
              outage.failed(error);
              resolve();
            },
          );
        });
        subscriber.connect().catch((error: Error) => {
          outage.failed(error);
          resolve();
        });
      });
    },
    async close() {
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
