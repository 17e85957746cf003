import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { microToUsd, type BudgetHold, type Limiter } from '../limits/index.js';
import type { Database } from '../storage/index.js';
import type { AlertWebhook } from './alert-webhook.js';
import type { BudgetBook } from './budget-book.js';
import type { Budget } from './types.js';

export interface AlertSettings {
  webhooks: readonly AlertWebhook[];
  /** The first retry after a failed delivery; each next one waits twice as long. */
  retryBaseMs: number;
  /** Deliveries tried at most, the first one included. */
  maxAttempts: number;
  /** How often failed deliveries due for a retry are looked for. */
  sweepMs: number;
}

export type AlertState = 'pending' | 'delivered' | 'failed' | 'no_webhook';

/** An alert as the admin API lists it. */
export interface AlertView {
  id: string;
  budget_id: string;
  level: Budget['level'];
  target: string;
  period: string;
  threshold: number;
  spent_usd: number;
  spent_tokens: number;
  state: AlertState;
  attempts: number;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

type AlertRow = Database['budget_alerts'];

/**
 * Budget alerts (docs/limits.md#alerts): when what a budget spent (and has reserved) in its
 * period reaches one of its thresholds, one alert per budget, period and threshold — a unique
 * row in the database, so it holds across instances: the instance whose insert made the row
 * delivers it. A failed delivery is retried with a doubling wait, up to `maxAttempts`; every
 * alert and its delivery state is listed for the dashboard.
 */
export class BudgetAlerts {
  /** Alerts this instance knows are made (a request does not ask the database again). */
  private readonly made = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly deliveries = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly limiter: Pick<Limiter, 'budgetUsage'>,
    private readonly book: Pick<BudgetBook, 'byId'>,
    private readonly settings: AlertSettings,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.retryDue(), this.settings.sweepMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.allSettled([...this.deliveries]);
    await Promise.allSettled(this.settings.webhooks.map((webhook) => webhook.close()));
  }

  /** After a request under `holds` settled: makes (and sends) the alerts of thresholds its budgets reached. Never throws. */
  async check(holds: readonly BudgetHold[]): Promise<void> {
    try {
      const usage = await this.limiter.budgetUsage(holds);
      for (const [index, hold] of holds.entries()) {
        const budget = this.book.byId(hold.budgetId);
        const spent = usage[index];
        if (budget === undefined || spent === undefined) continue;
        const share = Math.max(
          hold.tokens === null ? 0 : spent.tokens / hold.tokens,
          hold.costMicroUsd === null ? 0 : spent.costMicroUsd / hold.costMicroUsd,
        );
        for (const threshold of budget.thresholds) {
          if (share * 100 < threshold) continue;
          const name = `${hold.budgetId} ${hold.periodId} ${threshold}`;
          if (this.made.has(name)) continue;
          this.made.add(name);
          await this.make(budget, hold, threshold, spent);
        }
      }
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'could not check the budget alerts of a request');
    }
  }

  private async make(budget: Budget, hold: BudgetHold, threshold: number, spent: { tokens: number; costMicroUsd: number }): Promise<void> {
    const row: AlertRow = {
      id: `bal_${randomBytes(8).toString('hex')}`,
      budget_id: budget.id,
      period_id: hold.periodId,
      threshold,
      level: budget.level,
      target: budget.target,
      spent_micro_usd: spent.costMicroUsd,
      spent_tokens: spent.tokens,
      state: this.settings.webhooks.length === 0 ? 'no_webhook' : 'pending',
      attempts: 0,
      next_attempt_at: null,
      last_error: null,
      created_at: this.now(),
      delivered_at: null,
    };
    const inserted = await this.db
      .insertInto('budget_alerts')
      .values(row)
      .onConflict((conflict) => conflict.columns(['budget_id', 'period_id', 'threshold']).doNothing())
      .executeTakeFirst();
    // Another instance made it first: it delivers.
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0 || row.state === 'no_webhook') return;
    this.track(this.deliver(row, budget, hold));
  }

  private track(delivery: Promise<void>): void {
    this.deliveries.add(delivery);
    void delivery.finally(() => this.deliveries.delete(delivery));
  }

  private async deliver(row: AlertRow, budget: Budget, hold: BudgetHold | null): Promise<void> {
    const payload = alertPayload(row, budget, hold);
    const attempts = row.attempts + 1;
    try {
      for (const webhook of this.settings.webhooks) await webhook.send(JSON.stringify(webhook.format === 'slack' ? { text: payload.text } : payload));
      await this.db.updateTable('budget_alerts').set({ state: 'delivered', attempts, delivered_at: this.now(), next_attempt_at: null, last_error: null }).where('id', '=', row.id).execute();
    } catch (error) {
      const last = attempts >= this.settings.maxAttempts;
      const next = last ? null : this.now() + this.settings.retryBaseMs * 2 ** (attempts - 1);
      const reason = (error as Error).message.slice(0, 500);
      this.logger.warn({ alert: row.id, attempts, reason }, last ? 'a budget alert could not be delivered; no more retries' : 'a budget alert could not be delivered; it is retried');
      await this.db.updateTable('budget_alerts').set({ state: 'failed', attempts, next_attempt_at: next, last_error: reason }).where('id', '=', row.id).execute();
    }
  }

  /** Failed deliveries whose retry is due: each claimed by one instance (its attempt count moves on), then sent again. */
  async retryDue(): Promise<void> {
    try {
      const now = this.now();
      const due = await this.db.selectFrom('budget_alerts').selectAll().where('state', '=', 'failed').where('next_attempt_at', '<=', now).limit(50).execute();
      for (const row of due) {
        const claimed = await this.db
          .updateTable('budget_alerts')
          .set({ state: 'pending' })
          .where('id', '=', row.id)
          .where('state', '=', 'failed')
          .where('attempts', '=', row.attempts)
          .executeTakeFirst();
        if (Number(claimed.numUpdatedRows) === 0) continue;
        const budget = this.book.byId(row.budget_id);
        if (budget === undefined) {
          await this.db.updateTable('budget_alerts').set({ state: 'failed', next_attempt_at: null, last_error: 'the budget was removed' }).where('id', '=', row.id).execute();
          continue;
        }
        this.track(this.deliver(row as AlertRow, budget, null));
      }
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'could not retry budget alerts');
    }
  }

  /** The alerts, newest first (at most `limit`); only those of `budgetIds` when given. */
  async list(limit = 200, budgetIds?: readonly string[]): Promise<AlertView[]> {
    if (budgetIds !== undefined && budgetIds.length === 0) return [];
    let query = this.db.selectFrom('budget_alerts').selectAll();
    if (budgetIds !== undefined) query = query.where('budget_id', 'in', [...budgetIds]);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map((row) => ({
      id: row.id,
      budget_id: row.budget_id,
      level: row.level as Budget['level'],
      target: row.target,
      period: row.period_id,
      threshold: Number(row.threshold),
      spent_usd: microToUsd(Number(row.spent_micro_usd)),
      spent_tokens: Number(row.spent_tokens),
      state: row.state as AlertState,
      attempts: Number(row.attempts),
      last_error: row.last_error,
      created_at: new Date(Number(row.created_at)).toISOString(),
      delivered_at: row.delivered_at === null ? null : new Date(Number(row.delivered_at)).toISOString(),
    }));
  }
}

/** The alert's JSON body, with a one-line `text` (what the Slack-compatible body sends alone). */
function alertPayload(row: AlertRow, budget: Budget, hold: BudgetHold | null) {
  const amount = [budget.usd === null ? null : `$${budget.usd}`, budget.tokens === null ? null : `${budget.tokens} tokens`].filter((part) => part !== null).join(' and ');
  const level = budget.level === 'end_user' ? 'end user' : budget.level;
  const spent = `$${microToUsd(Number(row.spent_micro_usd))} and ${row.spent_tokens} tokens`;
  return {
    type: 'budget.threshold',
    alert_id: row.id,
    threshold: row.threshold,
    period: row.period_id,
    budget: { id: budget.id, level: budget.level, target: budget.target, usd: budget.usd, tokens: budget.tokens, period: budget.period, reset_tz: budget.resetTz },
    spent: { usd: microToUsd(Number(row.spent_micro_usd)), tokens: Number(row.spent_tokens) },
    resets_at: hold?.resetsAt == null ? null : new Date(hold.resetsAt).toISOString(),
    text: `Budget alert: the ${level} "${budget.target}" has used ${row.threshold}% of its ${budget.period} budget of ${amount} (${spent} in ${row.period_id}).`,
  };
}
