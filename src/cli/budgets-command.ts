import { InvalidArgumentError, type Command } from 'commander';
import type { AlertView, BudgetView } from '../budgets/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { orNull, parseCountLimit, parseList, parseUsdLimit, type Clear } from './arguments.js';
import { CliError, formatUsd, orDash, printJson, printTable, printText } from './output.js';

/** `modelgate budgets …`: budgets on teams, projects, keys and end users, a client of `/admin/v1/budgets` (docs/cli.md#budgets). */

type ListedBudget = BudgetView & { spent?: { usd: number; tokens: number; period: string; resets_at: string | null } };

interface SetOptions extends AdminOptions {
  team?: string;
  project?: string;
  key?: string;
  endUser?: string;
  usd?: number | Clear;
  tokens?: number | Clear;
  period?: string;
  resetTz?: string;
  thresholds?: number[];
}

const PERIODS = ['day', 'week', 'month', 'total'];

function parsePeriod(value: string): string {
  if (!PERIODS.includes(value)) throw new InvalidArgumentError(`expected one of ${PERIODS.join(', ')}`);
  return value;
}

function parseThresholds(value: string): number[] {
  const thresholds = parseList(value).map(Number);
  if (thresholds.some((threshold) => !Number.isInteger(threshold) || threshold < 1 || threshold > 100)) throw new InvalidArgumentError('expected percentages from 1 to 100, such as 50,80,100');
  return thresholds;
}

function levelOf(options: SetOptions): { level: BudgetView['level']; target: string } {
  const given = (
    [
      ['team', options.team],
      ['project', options.project],
      ['key', options.key],
      ['end_user', options.endUser],
    ] as const
  ).filter(([, target]) => target !== undefined);
  if (given.length !== 1) throw new CliError('name exactly one of --team, --project, --key or --end-user');
  return { level: given[0]![0], target: given[0]![1]! };
}

function amount(budget: Pick<BudgetView, 'usd' | 'tokens'>): string {
  return [budget.usd === null ? null : formatUsd(budget.usd), budget.tokens === null ? null : `${budget.tokens} tokens`].filter((part) => part !== null).join(' + ');
}

function printBudgets(budgets: ListedBudget[]): void {
  if (budgets.length === 0) {
    printText('No budgets. Set one with: modelgate budgets set --team default --usd 100 --period month\n');
    return;
  }
  printTable(
    ['id', 'level', 'target', 'budget', 'period', 'time zone', 'spent', 'resets'],
    budgets.map((budget) => [
      budget.id,
      budget.level,
      budget.target,
      amount(budget),
      budget.period,
      budget.reset_tz,
      budget.spent === undefined ? '-' : `${formatUsd(budget.spent.usd)}, ${budget.spent.tokens} tokens`,
      orDash(budget.spent?.resets_at ?? null),
    ]),
  );
}

export function registerBudgetsCommand(program: Command): void {
  const budgets = program.command('budgets').description('budgets on teams, projects, keys and end users (talks to a running gateway)');

  withAdminOptions(budgets.command('list', { isDefault: true }).description('list budgets with what each spent in its current period (the default)')).action(async (options: AdminOptions) => {
    const answer = await AdminClient.fromOptions(options).request<{ data: ListedBudget[] }>('GET', '/budgets');
    if (options.json === true) printJson(answer.data);
    else printBudgets(answer.data);
  });

  withAdminOptions(
    budgets
      .command('set')
      .description('set (create or change) the budget of one team, project, key or end user')
      .option('--team <id>', 'a team')
      .option('--project <id>', 'a project')
      .option('--key <id>', 'a key')
      .option('--end-user <id>', 'an end user, as requests name them (X-End-User-ID, user, metadata.user_id, safety_identifier)')
      .option('--usd <amount>', 'USD per period, or "none"', parseUsdLimit)
      .option('--tokens <n>', 'tokens per period, or "none"', parseCountLimit)
      .option('--period <period>', `${PERIODS.join(', ')} (default month for a new budget)`, parsePeriod)
      .option('--reset-tz <zone>', 'IANA time zone the period begins in (default UTC)')
      .option('--thresholds <list>', 'alert thresholds, percent (default 50,80,100)', parseThresholds),
  ).action(async (options: SetOptions) => {
    const { level, target } = levelOf(options);
    const client = AdminClient.fromOptions(options);
    const fields = {
      ...(options.usd === undefined ? {} : { usd: orNull(options.usd) }),
      ...(options.tokens === undefined ? {} : { tokens: orNull(options.tokens) }),
      ...(options.period === undefined ? {} : { period: options.period }),
      ...(options.resetTz === undefined ? {} : { reset_tz: options.resetTz }),
      ...(options.thresholds === undefined ? {} : { thresholds: options.thresholds }),
    };
    const existing = (await client.request<{ data: ListedBudget[] }>('GET', '/budgets')).data.find((budget) => budget.level === level && budget.target === target);
    const budget =
      existing === undefined
        ? await client.request<BudgetView>('POST', '/budgets', { level, target, period: 'month', ...fields })
        : await client.request<BudgetView>('PATCH', `/budgets/${existing.id}`, fields);
    if (options.json === true) printJson(budget);
    else printText(`${existing === undefined ? 'Set' : 'Changed'} ${budget.id}: ${budget.level} ${budget.target}, ${amount(budget)} per ${budget.period} (${budget.reset_tz}).\n`);
  });

  withAdminOptions(budgets.command('delete <id>').description('remove a budget')).action(async (id: string, options: AdminOptions) => {
    await AdminClient.fromOptions(options).request('DELETE', `/budgets/${encodeURIComponent(id)}`);
    if (options.json === true) printJson({ id, deleted: true });
    else printText(`Removed ${id}.\n`);
  });

  withAdminOptions(budgets.command('alerts').description('alerts sent or being sent, newest first, with their delivery state')).action(async (options: AdminOptions) => {
    const answer = await AdminClient.fromOptions(options).request<{ data: AlertView[] }>('GET', '/budgets/alerts');
    if (options.json === true) {
      printJson(answer.data);
      return;
    }
    if (answer.data.length === 0) {
      printText('No budget alerts yet.\n');
      return;
    }
    printTable(
      ['time', 'level', 'target', 'period', 'threshold', 'spent', 'state', 'attempts', 'last error'],
      answer.data.map((alert) => [alert.created_at, alert.level, alert.target, alert.period, `${alert.threshold}%`, `${formatUsd(alert.spent_usd)}, ${alert.spent_tokens} tokens`, alert.state, String(alert.attempts), orDash(alert.last_error)]),
    );
  });
}
