import type { Logger } from 'pino';
import type { Principal } from '../keys/index.js';
import { describeReset, periodAt, usdToMicro, type BudgetHold, type BudgetSeed, type Limiter } from '../limits/index.js';
import type { BudgetStore } from './budget-store.js';
import type { Budget, BudgetLevel } from './types.js';

/** What the book announces to the other instances when a budget changed: they read every budget again. */
export const BUDGETS_CHANGED = 'budgets';

export interface BudgetAnnouncements {
  announceChange(id: string): void;
  subscribe(subscriber: { pattern: RegExp; reload(id: string): void; refresh(): void }): void;
}

/**
 * Every budget, kept in memory so an admission finds the budgets above a request without a
 * query: read at start, read again when a change is announced (this instance's own changes
 * at once, the others' through the key-change channels, decision 0008) and every refresh
 * interval. Each read seeds the limiter with what each budget's requests already spent in its
 * current period (the request log), for counters that do not count yet.
 */
export class BudgetBook {
  private byTarget = new Map<string, Budget>();
  private names = new Map<string, string>();
  private teams = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | null = null;
  /** Per budget, the period and version its counters were last seeded for: a refresh seeds only what changed. */
  private readonly seeded = new Map<string, string>();

  constructor(
    private readonly store: BudgetStore,
    private readonly limiter: Pick<Limiter, 'seedBudgets'>,
    private readonly storedEndUsers: (endUser: string) => readonly string[],
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Reads every budget, then keeps them fresh: announced changes and a refresh every `refreshMs`. */
  async start(announcements: BudgetAnnouncements | undefined, refreshMs: number): Promise<void> {
    await this.load();
    announcements?.subscribe({ pattern: /^budgets$/, reload: () => void this.reload(), refresh: () => void this.reload() });
    this.timer = setInterval(() => void this.reload(), refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Reads again (after a change); a failed read keeps the budgets last read. */
  async reload(): Promise<void> {
    try {
      await this.load();
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'could not read the budgets; the ones read before stay in force');
    }
  }

  private load(): Promise<void> {
    // One read at a time; a change announced during one reads again after it.
    const next = (this.loading ?? Promise.resolve()).catch(() => undefined).then(() => this.read());
    this.loading = next;
    return next;
  }

  private async read(): Promise<void> {
    const budgets = await this.store.list();
    const teams = await this.store.projectTeams();
    const names = new Map<string, string>();
    for (const budget of budgets) {
      if (budget.level !== 'end_user') names.set(budget.id, (await this.store.names(budget.level, budget.target)) ?? budget.target);
    }
    const now = this.now();
    const seeds: BudgetSeed[] = [];
    for (const budget of budgets) {
      const span = periodAt(budget.period, budget.resetTz, now);
      const version = `${span.id} ${budget.updatedAt}`;
      if (this.seeded.get(budget.id) === version) continue;
      this.seeded.set(budget.id, version);
      const spent = await this.store.spentIn(budget, span, budget.level === 'end_user' ? this.storedEndUsers(budget.target) : []);
      seeds.push({ budgetId: budget.id, periodId: span.id, resetsAt: span.end, tokens: spent.tokens, costMicroUsd: spent.costMicroUsd });
    }
    await this.limiter.seedBudgets(seeds);
    this.byTarget = new Map(budgets.map((budget) => [`${budget.level} ${budget.target}`, budget]));
    this.names = names;
    this.teams = teams;
  }

  /** Every budget, as last read. */
  all(): Budget[] {
    return [...this.byTarget.values()];
  }

  /** A budget by its id, as last read. */
  byId(id: string): Budget | undefined {
    for (const budget of this.byTarget.values()) if (budget.id === id) return budget;
    return undefined;
  }

  /** The budget on a level's target, as last read. */
  on(level: BudgetLevel, target: string): Budget | undefined {
    return this.byTarget.get(`${level} ${target}`);
  }

  /** The team a project belongs to, as last read. */
  teamOf(projectId: string): string {
    return this.teams.get(projectId) ?? 'default';
  }

  /** The budgets above a request of `principal` for `endUser`, in the periods `now` falls in (key, project, team, end user). */
  holdsFor(principal: Principal, endUser: string | null, now: number = this.now()): BudgetHold[] {
    if (this.byTarget.size === 0) return [];
    const levels: [BudgetLevel, string][] = [];
    if (principal.kind === 'key') {
      levels.push(['key', principal.keyId], ['project', principal.projectId], ['team', this.teamOf(principal.projectId)]);
    }
    if (endUser !== null) levels.push(['end_user', endUser]);
    const holds: BudgetHold[] = [];
    for (const [level, target] of levels) {
      const budget = this.byTarget.get(`${level} ${target}`);
      if (budget !== undefined) holds.push(this.holdOf(budget, now));
    }
    return holds;
  }

  /** A budget's hold in the period `now` falls in. */
  holdOf(budget: Budget, now: number = this.now()): BudgetHold {
    const span = periodAt(budget.period, budget.resetTz, now);
    return {
      budgetId: budget.id,
      level: budget.level,
      name: this.names.get(budget.id) ?? budget.target,
      tokens: budget.tokens,
      costMicroUsd: budget.usd === null ? null : usdToMicro(budget.usd),
      periodId: span.id,
      resetsAt: span.end,
      resetText: describeReset(span.end, budget.resetTz),
    };
  }
}
