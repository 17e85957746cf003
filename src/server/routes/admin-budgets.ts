import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { BUDGET_LEVELS, BUDGET_PERIODS, DEFAULT_THRESHOLDS, toBudgetView, type Budget, type BudgetFields } from '../../budgets/index.js';
import { GatewayError, invalidBody } from '../../errors/index.js';
import { isTimeZone, microToUsd } from '../../limits/index.js';
import { EVERY_ROLE_MAY_CALL, TEAM_ADMIN_MAY_CALL } from '../admin-auth.js';
import type { RouteModule } from '../app.js';
import { recordChange } from '../audit-trail.js';
import type { GatewayContext } from '../context.js';
import { ADMIN_SCHEMA, registerAdminRoutes, visibleTeams } from './admin-scope.js';
import { listOf, Nullable } from './schema-helpers.js';

const LevelSchema = Type.Unsafe<Budget['level']>({ type: 'string', enum: [...BUDGET_LEVELS] });
const PeriodSchema = Type.Unsafe<Budget['period']>({ type: 'string', enum: [...BUDGET_PERIODS] });
const UsdSchema = Nullable(Type.Number({ minimum: 0.000001, maximum: 1_000_000_000, description: 'USD per period' }));
const TokensSchema = Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'tokens per period' }));
const TimeZoneSchema = Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone the period begins in (default UTC)' });
const ThresholdsSchema = Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), { minItems: 0, maxItems: 10, uniqueItems: true, description: 'alert thresholds, percent (default 50, 80, 100)' });

const CreateBody = Type.Object(
  {
    level: LevelSchema,
    target: Type.String({ minLength: 1, maxLength: 256, description: 'the team, project or key id, or the end user id' }),
    usd: Type.Optional(UsdSchema),
    tokens: Type.Optional(TokensSchema),
    period: PeriodSchema,
    reset_tz: Type.Optional(TimeZoneSchema),
    thresholds: Type.Optional(ThresholdsSchema),
  },
  { additionalProperties: false },
);
const UpdateBody = Type.Object(
  { usd: Type.Optional(UsdSchema), tokens: Type.Optional(TokensSchema), period: Type.Optional(PeriodSchema), reset_tz: Type.Optional(TimeZoneSchema), thresholds: Type.Optional(ThresholdsSchema) },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Type.String({ pattern: '^bud_[0-9a-f]{16}$' }) });

const BudgetView = Type.Object({
  id: Type.String(),
  level: LevelSchema,
  target: Type.String(),
  usd: Nullable(Type.Number()),
  tokens: Nullable(Type.Integer()),
  period: PeriodSchema,
  reset_tz: Type.String(),
  thresholds: Type.Array(Type.Integer()),
  created_at: Type.String(),
  updated_at: Type.String(),
  spent: Type.Optional(Type.Object({ usd: Type.Number(), tokens: Type.Integer(), period: Type.String(), resets_at: Nullable(Type.String()) }, { description: 'spent and reserved in the current period' })),
});

const AlertView = Type.Object({
  id: Type.String(),
  budget_id: Type.String(),
  level: LevelSchema,
  target: Type.String(),
  period: Type.String(),
  threshold: Type.Integer(),
  spent_usd: Type.Number(),
  spent_tokens: Type.Integer(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('no_webhook')]),
  attempts: Type.Integer(),
  last_error: Nullable(Type.String()),
  created_at: Type.String(),
  delivered_at: Nullable(Type.String()),
});

function fieldsOf(body: Static<typeof UpdateBody>, before: BudgetFields | undefined): BudgetFields {
  const fields: BudgetFields = {
    usd: body.usd !== undefined ? body.usd : (before?.usd ?? null),
    tokens: body.tokens !== undefined ? body.tokens : (before?.tokens ?? null),
    period: body.period ?? before?.period ?? 'month',
    resetTz: body.reset_tz ?? before?.resetTz ?? 'UTC',
    thresholds: body.thresholds ?? before?.thresholds ?? DEFAULT_THRESHOLDS,
  };
  if (fields.usd === null && fields.tokens === null) throw invalidBody('A budget needs an amount: set usd, tokens or both.', 'usd');
  if (!isTimeZone(fields.resetTz)) throw invalidBody(`reset_tz "${fields.resetTz}" is not a time zone this gateway knows; use an IANA name such as UTC or Europe/Berlin.`, 'reset_tz');
  return fields;
}

/** Budgets as the admin API shows them, each with what it spent and reserved in its current period (none when the limiter cannot say). */
export async function budgetsWithSpend(context: GatewayContext, budgets: readonly Budget[]) {
  const holds = budgets.map((budget) => context.budgets.book.holdOf(budget));
  const usage = await context.limits.budgetUsage(holds).catch(() => null);
  return budgets.map((budget, index) => {
    const spent = usage?.[index];
    const hold = holds[index]!;
    return {
      ...toBudgetView(budget),
      ...(spent === undefined
        ? {}
        : { spent: { usd: microToUsd(spent.costMicroUsd), tokens: spent.tokens, period: hold.periodId, resets_at: hold.resetsAt === null ? null : new Date(hold.resetsAt).toISOString() } }),
    };
  });
}

const TEAM_ADMIN_LEVELS: readonly Budget['level'][] = ['project', 'key'];

function teamAdminMayNotSet(level: Budget['level']): GatewayError {
  const what = level === 'team' ? "A team's own budget" : "An end user's budget";
  return new GatewayError('insufficient_role', `${what} is set by an administrator; a team admin sets the budgets of its teams' projects and keys.`);
}

/**
 * The admin API of budgets (docs/admin-api.md#budgets): one per team, project, key or end user,
 * and their alerts. A `team_admin` session sees the budgets of its teams, their projects and
 * their keys, and sets those of the projects and keys; another team's budget answers as an
 * unknown one.
 */
export const adminBudgetsRoutes: RouteModule = async (app, context) => {
  const { store, book, alerts } = context.budgets;
  /** This instance reads the budgets again at once; the others when the change is announced. */
  const changed = async () => {
    await book.reload();
    context.keys.propagation.announceChange('budgets');
  };
  /** The budgets a request may see: every one, or a team admin's teams'. */
  const visibleBudgets = (request: FastifyRequest): Promise<Budget[]> => {
    const teams = visibleTeams(request);
    return teams === null ? store.list() : store.listOfTeams(teams);
  };
  /** A budget a request may change: another team's (or, for a team admin, an end user's) is answered as unknown, its own team's is refused. */
  const changeableBudget = async (request: FastifyRequest, id: string): Promise<Budget> => {
    const budget = await store.get(id);
    if (budget === undefined) throw notFound(id);
    const teams = visibleTeams(request);
    if (teams === null) return budget;
    const team = budget.level === 'end_user' ? undefined : await store.teamOf(budget.level, budget.target);
    if (team === undefined || !teams.includes(team)) throw notFound(id);
    if (!TEAM_ADMIN_LEVELS.includes(budget.level)) throw teamAdminMayNotSet(budget.level);
    return budget;
  };

  await registerAdminRoutes(app, context, (admin) => {
    admin.get(
      '/budgets',
      { config: EVERY_ROLE_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: "Budgets, with what each spent in its current period (a team admin's: its teams')", response: { 200: listOf(BudgetView) } } },
      async (request) => ({ object: 'list' as const, data: await budgetsWithSpend(context, await visibleBudgets(request)) }),
    );

    admin.get(
      '/budgets/alerts',
      {
        config: EVERY_ROLE_MAY_CALL,
        schema: { ...ADMIN_SCHEMA, summary: "Budget alerts sent or being sent, newest first, with their delivery state (a team admin's: its teams' budgets')", response: { 200: listOf(AlertView) } },
      },
      async (request) => {
        const teams = visibleTeams(request);
        const ofBudgets = teams === null ? undefined : (await store.listOfTeams(teams)).map((budget) => budget.id);
        return { object: 'list' as const, data: await alerts.list(undefined, ofBudgets) };
      },
    );

    admin.post(
      '/budgets',
      { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: "Set a budget on a team, project, key or end user (a team admin: on its teams' projects and keys)", body: CreateBody, response: { 201: BudgetView } } },
      async (request, reply) => {
        const { level, target } = request.body;
        const teams = visibleTeams(request);
        if (teams !== null && !TEAM_ADMIN_LEVELS.includes(level)) throw teamAdminMayNotSet(level);
        if (level !== 'end_user') {
          const team = await store.teamOf(level, target);
          // Another team's project or key is answered as an unknown one.
          if (team === undefined || (teams !== null && !teams.includes(team))) throw invalidBody(`There is no ${level} "${target}".`, 'target');
        }
        if ((await store.find(level, target)) !== undefined) {
          throw new GatewayError('conflict', `The ${level} "${target}" has a budget already; change it with PATCH /admin/v1/budgets/{id}.`, { retryable: false });
        }
        const budget = await store.create(level, target, fieldsOf(request.body, undefined));
        await recordChange(context.audit, request, { action: 'budget.create', target: { type: 'budget', id: budget.id }, before: null, after: toBudgetView(budget) });
        await changed();
        reply.code(201);
        return toBudgetView(budget);
      },
    );

    admin.patch(
      '/budgets/:id',
      { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'Change a budget', params: IdParams, body: UpdateBody, response: { 200: BudgetView } } },
      async (request) => {
        const before = await changeableBudget(request, request.params.id);
        const after = (await store.update(before.id, fieldsOf(request.body, before)))!;
        await recordChange(context.audit, request, { action: 'budget.update', target: { type: 'budget', id: after.id }, before: toBudgetView(before), after: toBudgetView(after) });
        await changed();
        return toBudgetView(after);
      },
    );

    admin.delete('/budgets/:id', { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'Remove a budget', params: IdParams } }, async (request, reply) => {
      const before = await changeableBudget(request, request.params.id);
      if (!(await store.delete(before.id))) throw notFound(request.params.id);
      await recordChange(context.audit, request, { action: 'budget.delete', target: { type: 'budget', id: before.id }, before: toBudgetView(before) });
      await changed();
      return reply.code(204).send();
    });
  });
};

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `There is no budget ${id}. GET /admin/v1/budgets lists them.`);
}
