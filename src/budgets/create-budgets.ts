import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import { ConfigError } from '../config/index.js';
import type { Principal } from '../keys/index.js';
import type { BudgetHold, Limiter } from '../limits/index.js';
import type { Database } from '../storage/index.js';
import { AlertConfigError, AlertWebhook, type AlertTransport } from './alert-webhook.js';
import { BudgetAlerts } from './budget-alerts.js';
import { BudgetBook, type BudgetAnnouncements } from './budget-book.js';
import { BudgetStore } from './budget-store.js';
import { hashedEndUser } from './end-user.js';

/** How often failed alert deliveries due for a retry are looked for. */
const ALERT_SWEEP_MS = 1_000;

export interface Budgets {
  readonly store: BudgetStore;
  readonly book: BudgetBook;
  readonly alerts: BudgetAlerts;
  /** What the call path asks of budgets (ModelCalls' CallBudgets). */
  readonly calls: {
    holdsFor(principal: Principal, endUser: string | null): BudgetHold[];
    settled(holds: readonly BudgetHold[]): Promise<void>;
    hashed(endUser: string): string;
  };
  stop(): Promise<void>;
}

export interface BudgetParts {
  config: GatewayConfig;
  db: Kysely<Database>;
  limiter: Limiter;
  logger: Logger;
  env: Readonly<Record<string, string | undefined>>;
  /** The gateway's encryption key: end users' HMACs are keyed by a key derived from it. */
  encryptionKey: Buffer;
  announcements: BudgetAnnouncements;
  alertTransport?: AlertTransport;
  now?: () => number;
}

/** Budgets, their book (read and kept fresh) and their alerts, built once at start-up. */
export async function startBudgets(parts: BudgetParts): Promise<Budgets> {
  const { config, db, limiter, logger } = parts;
  const now = parts.now ?? Date.now;
  // A key of its own, so the HMAC of an end user says nothing about the encryption key.
  const endUserKey = createHmac('sha256', parts.encryptionKey).update('modelgate end users').digest();
  const hashed = (endUser: string) => hashedEndUser(endUser, endUserKey);
  const webhooks = config.budgets.alerts.webhooks.map((settings, index) => {
    try {
      return new AlertWebhook(settings, `budgets.alerts.webhooks[${index}]`, parts.env, parts.alertTransport);
    } catch (error) {
      if (error instanceof AlertConfigError) throw new ConfigError(error.message);
      throw error;
    }
  });
  const store = new BudgetStore(db);
  const book = new BudgetBook(store, limiter, (endUser) => [endUser, hashed(endUser)], logger, now);
  await book.start(parts.announcements, config.keys.cacheRefreshMs);
  const alerts = new BudgetAlerts(db, limiter, book, { webhooks, retryBaseMs: config.budgets.alerts.retryBaseMs, maxAttempts: config.budgets.alerts.maxAttempts, sweepMs: ALERT_SWEEP_MS }, logger, now);
  alerts.start();
  return {
    store,
    book,
    alerts,
    calls: {
      holdsFor: (principal, endUser) => book.holdsFor(principal, endUser),
      settled: (holds) => alerts.check(holds),
      hashed,
    },
    async stop() {
      book.stop();
      await alerts.stop();
    },
  };
}
