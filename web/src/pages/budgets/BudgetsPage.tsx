import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import type { BudgetLevel, BudgetListView, BudgetPeriod } from '@modelgate/admin-api';
import { adminApi, ApiError, type BudgetInput } from '../../api.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { SelectField, type SelectOption } from '../../components/SelectField.js';
import { formatCount, formatTime, formatUsd } from '../../format.js';
import { useSession } from '../../session.js';

/**
 * Budgets on teams, projects, keys and end users (docs/dashboard.md#budgets, GET /admin/v1/budgets):
 * each with its limits, period and what it spent so far; below, the alerts sent or being sent.
 * Administrators create, edit and delete budgets; a team admin sees its teams' and sets those of
 * their projects and keys; a viewer reads them (the gateway enforces the same).
 */

const BUDGETS = ['budgets'] as const;
const PERIODS: readonly SelectOption[] = [
  { value: 'day', label: 'day' },
  { value: 'week', label: 'week' },
  { value: 'month', label: 'month' },
  { value: 'total', label: 'total (never resets)' },
];
/** The levels a team admin sets: a team's own budget and end users' are an administrator's. */
const TEAM_ADMIN_LEVELS: readonly BudgetLevel[] = ['project', 'key'];
/** The fields the form shows an error next to; a refusal naming another is shown under the form. */
const FIELDS = new Set(['target', 'usd', 'tokens', 'reset_tz', 'thresholds']);
const LEVEL_LABEL: Record<BudgetLevel, string> = { team: 'team', project: 'project', key: 'key', end_user: 'end user' };
const BUDGET_LEVELS = Object.keys(LEVEL_LABEL) as BudgetLevel[];

const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : String(failure));
const percent = (spent: number, limit: number) => `${Math.round((spent / limit) * 100)}%`;

/**
 * The options of the target picker: the teams, projects or keys the gateway lists; null when
 * the id is typed instead (an end user, or more active keys than one page of the key list).
 */
function useTargets(level: BudgetLevel, enabled: boolean): SelectOption[] | null {
  const teams = useQuery({ queryKey: ['teams'], queryFn: adminApi.teams.list, enabled: enabled && level === 'team' });
  const projects = useQuery({ queryKey: ['projects'], queryFn: adminApi.projects, enabled: enabled && level === 'project' });
  const keys = useQuery({ queryKey: ['keys', 'budget-picker'], queryFn: () => adminApi.keys.page({ status: 'active' }, undefined, 100), enabled: enabled && level === 'key' });
  if (level === 'team') return (teams.data?.data ?? []).map((team) => ({ value: team.id, label: team.name === team.id ? team.id : `${team.name} (${team.id})` }));
  if (level === 'project') return (projects.data?.data ?? []).map((project) => ({ value: project.id, label: project.name === project.id ? project.id : `${project.name} (${project.id})` }));
  if (level === 'key' && keys.data?.has_more !== true) return (keys.data?.data ?? []).map((key) => ({ value: key.id, label: `${key.name} (${key.id})` }));
  return null;
}

/** A form field with the API's refusal of it, if any, next to it (linked for screen readers). */
function Field(props: { id: string; label: string; error: string | null; hint?: string; children: (describedBy: string | undefined) => ReactNode }) {
  const ids = [props.hint !== undefined ? `${props.id}-hint` : null, props.error !== null ? `${props.id}-error` : null].filter((id) => id !== null);
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      {props.children(ids.length > 0 ? ids.join(' ') : undefined)}
      {props.hint !== undefined && (
        <small id={`${props.id}-hint`} className="muted">
          {props.hint}
        </small>
      )}
      <ErrorAlert id={`${props.id}-error`} message={props.error} />
    </div>
  );
}

const amountOf = (text: string) => (text.trim() === '' ? null : Number(text));

/** Create a budget, or (given one) change its amounts, period, time zone and thresholds. */
function BudgetForm({ budget, levels, onDone }: { budget?: BudgetListView; levels: readonly BudgetLevel[]; onDone: () => void }) {
  const client = useQueryClient();
  const editing = budget !== undefined;
  const prefix = editing ? `edit-${budget.id}` : 'budget';
  const [level, setLevel] = useState<BudgetLevel>(budget?.level ?? levels[0]!);
  const [target, setTarget] = useState(budget?.target ?? '');
  const [usd, setUsd] = useState(budget?.usd === null || budget?.usd === undefined ? '' : String(budget.usd));
  const [tokens, setTokens] = useState(budget?.tokens === null || budget?.tokens === undefined ? '' : String(budget.tokens));
  const [period, setPeriod] = useState<BudgetPeriod>(budget?.period ?? 'month');
  const [resetTz, setResetTz] = useState(budget?.reset_tz ?? 'UTC');
  const [thresholds, setThresholds] = useState((budget?.thresholds ?? [50, 80, 100]).join(', '));
  const targets = useTargets(level, !editing);
  const chosenTarget = targets === null || target !== '' ? target : (targets[0]?.value ?? '');
  const save = useMutation({
    mutationFn: () => {
      const input: BudgetInput = {
        usd: amountOf(usd),
        tokens: amountOf(tokens),
        period,
        reset_tz: resetTz.trim(),
        thresholds: thresholds
          .split(',')
          .map((part) => part.trim())
          .filter((part) => part !== '')
          .map(Number),
      };
      return editing ? adminApi.budgets.update(budget.id, input) : adminApi.budgets.create({ ...input, level, target: chosenTarget.trim() });
    },
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: BUDGETS });
      void client.invalidateQueries({ queryKey: ['overview'] });
      if (!editing) {
        setTarget('');
        setUsd('');
        setTokens('');
      }
      onDone();
    },
  });
  const failure = save.error instanceof ApiError ? save.error : null;
  // `thresholds[1]` is the thresholds field's: the refusal goes next to the field it names.
  const refused = failure?.param?.split(/[.[]/)[0] ?? null;
  const fieldError = (name: string) => (refused === name ? failure!.message : null);
  const formError = save.error === null || (refused !== null && FIELDS.has(refused)) ? null : messageOf(save.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const title = editing ? `Edit the budget of the ${LEVEL_LABEL[budget.level]} ${budget.target}` : 'New budget';
  return (
    <form className="filters" aria-labelledby={`${prefix}-title`} onSubmit={submit}>
      <h2 id={`${prefix}-title`}>{title}</h2>
      {!editing && (
        <>
          <SelectField
            id="budget-level"
            label="Level"
            value={level}
            options={levels.map((option) => ({ value: option, label: LEVEL_LABEL[option] }))}
            onChange={(value) => {
              setLevel(value as BudgetLevel);
              setTarget('');
            }}
          />
          <Field id="budget-target" label={level === 'end_user' ? 'End user' : `Target ${LEVEL_LABEL[level]}`} error={fieldError('target')} {...(level === 'end_user' ? { hint: 'as requests name it (X-End-User-ID or the body field)' } : targets === null ? { hint: `the ${LEVEL_LABEL[level]} id` } : {})}>
            {(describedBy) =>
              targets === null || targets.length === 0 ? (
                <input id="budget-target" required maxLength={256} aria-describedby={describedBy} value={target} onChange={(event) => setTarget(event.target.value)} />
              ) : (
                <select id="budget-target" aria-describedby={describedBy} value={chosenTarget} onChange={(event) => setTarget(event.target.value)}>
                  {targets.map((option) => (
                    <option key={option.value} value={option.value}>
                      {option.label}
                    </option>
                  ))}
                </select>
              )
            }
          </Field>
        </>
      )}
      <Field id={`${prefix}-usd`} label="USD per period" error={fieldError('usd')} hint="empty for none">
        {(describedBy) => <input id={`${prefix}-usd`} type="number" min="0.000001" step="any" inputMode="decimal" aria-describedby={describedBy} value={usd} onChange={(event) => setUsd(event.target.value)} />}
      </Field>
      <Field id={`${prefix}-tokens`} label="Tokens per period" error={fieldError('tokens')} hint="empty for none">
        {(describedBy) => <input id={`${prefix}-tokens`} type="number" min="1" step="1" inputMode="numeric" aria-describedby={describedBy} value={tokens} onChange={(event) => setTokens(event.target.value)} />}
      </Field>
      <SelectField id={`${prefix}-period`} label="Period" value={period} options={PERIODS} onChange={(value) => setPeriod(value as BudgetPeriod)} />
      <Field id={`${prefix}-reset-tz`} label="Reset time zone" error={fieldError('reset_tz')} hint="IANA name, e.g. Europe/Berlin">
        {(describedBy) => <input id={`${prefix}-reset-tz`} required maxLength={64} aria-describedby={describedBy} value={resetTz} onChange={(event) => setResetTz(event.target.value)} />}
      </Field>
      <Field id={`${prefix}-thresholds`} label="Alert thresholds (%)" error={fieldError('thresholds')} hint="comma-separated, 1 to 100">
        {(describedBy) => <input id={`${prefix}-thresholds`} aria-describedby={describedBy} value={thresholds} onChange={(event) => setThresholds(event.target.value)} />}
      </Field>
      <div className="field actions">
        <button type="submit" disabled={save.isPending}>
          {editing ? 'Save budget' : 'Create budget'}
        </button>
        {editing && (
          <button type="button" className="secondary" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
      <ErrorAlert message={formError} />
    </form>
  );
}

function SpendCell({ spent, limit, money }: { spent: number | undefined; limit: number | null; money: boolean }) {
  if (limit === null) return <span className="muted">no limit</span>;
  const show = money ? formatUsd : formatCount;
  if (spent === undefined) return <>— of {show(limit)}</>;
  return (
    <>
      {show(spent)} of {show(limit)} <span className="muted">({percent(spent, limit)})</span>
    </>
  );
}

/** A budget's row; `actions`: the table has the actions column, `manage`: this budget's are offered in it. */
function BudgetRow({ budget, actions, manage, onEdit }: { budget: BudgetListView; actions: boolean; manage: boolean; onEdit: () => void }) {
  const client = useQueryClient();
  const [failure, setFailure] = useState<string | null>(null);
  const name = `the ${LEVEL_LABEL[budget.level]} ${budget.target}`;
  return (
    <tr data-budget={budget.id}>
      <td>{LEVEL_LABEL[budget.level]}</td>
      <th scope="row">{budget.target}</th>
      <td>
        <SpendCell spent={budget.spent?.usd} limit={budget.usd} money />
      </td>
      <td>
        <SpendCell spent={budget.spent?.tokens} limit={budget.tokens} money={false} />
      </td>
      <td>
        {budget.period} <span className="muted">({budget.reset_tz})</span>
        {budget.spent?.resets_at !== null && budget.spent?.resets_at !== undefined && <div className="muted">resets {formatTime(budget.spent.resets_at)}</div>}
      </td>
      <td>{budget.thresholds.length === 0 ? <span className="muted">none</span> : budget.thresholds.map((threshold) => `${threshold}%`).join(', ')}</td>
      {actions && !manage && <td />}
      {manage && (
        <td className="row-actions">
          <button type="button" className="secondary small" aria-label={`Edit the budget of ${name}`} onClick={onEdit}>
            Edit
          </button>
          <ConfirmButton
            label={`Delete the budget of ${name}`}
            title={`Delete the budget of ${name}?`}
            description="Its requests are no longer held to it. Alerts already sent stay in the list."
            confirmLabel="Delete"
            danger
            onConfirm={async () => {
              setFailure(null);
              await adminApi.budgets.remove(budget.id).then(
                () => client.invalidateQueries({ queryKey: BUDGETS }),
                (error: unknown) => setFailure(messageOf(error)),
              );
            }}
          />
          <ErrorAlert message={failure} />
        </td>
      )}
    </tr>
  );
}

function AlertsTable() {
  const alerts = useQuery({ queryKey: [...BUDGETS, 'alerts'], queryFn: adminApi.budgets.alerts, refetchInterval: 30_000 });
  const list = alerts.data?.data ?? [];
  return (
    <>
      <h2 id="alerts-title">Alerts</h2>
      <ErrorAlert message={alerts.error === null ? null : messageOf(alerts.error)} />
      <table aria-labelledby="alerts-title">
        <thead>
          <tr>
            <th scope="col">Budget</th>
            <th scope="col">Threshold</th>
            <th scope="col">Period</th>
            <th scope="col">Spent then</th>
            <th scope="col">State</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last error</th>
            <th scope="col">Raised</th>
          </tr>
        </thead>
        <tbody>
          {!alerts.isPending && list.length === 0 && (
            <tr>
              <td colSpan={8} className="muted">
                No alert yet.
              </td>
            </tr>
          )}
          {list.map((alert) => (
            <tr key={alert.id} data-alert={alert.id}>
              <td>
                {LEVEL_LABEL[alert.level]} {alert.target}
              </td>
              <td>{alert.threshold}%</td>
              <td>{alert.period}</td>
              <td>
                {formatUsd(alert.spent_usd)}, {formatCount(alert.spent_tokens)} tokens
              </td>
              <td>{alert.state.replace('_', ' ')}</td>
              <td>{alert.attempts}</td>
              <td>{alert.last_error ?? <span className="muted">—</span>}</td>
              <td>{formatTime(alert.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

export function BudgetsPage() {
  const { session } = useSession();
  const role = session?.user.role;
  // What this account may set: every level, its teams' projects and keys, or nothing.
  const levels = role === 'admin' ? BUDGET_LEVELS : role === 'team_admin' ? TEAM_ADMIN_LEVELS : [];
  const manage = levels.length > 0;
  const budgets = useQuery({ queryKey: BUDGETS, queryFn: adminApi.budgets.list, refetchInterval: 30_000 });
  const [editing, setEditing] = useState<string | null>(null);
  const list = budgets.data?.data ?? [];
  const edited = list.find((budget) => budget.id === editing);
  return (
    <section aria-labelledby="budgets-title">
      <div className="page-head">
        <h1 id="budgets-title">Budgets</h1>
      </div>
      <p className="muted">
        A request is admitted only while every budget above it (its team, project, key and end user) has room.{' '}
        {role === 'admin' ? '' : role === 'team_admin' ? "You see your teams' budgets and set those of their projects and keys; a team's own budget is an administrator's." : 'You can read the budgets; an administrator changes them.'}
      </p>
      <ErrorAlert message={budgets.error === null ? null : messageOf(budgets.error)} />
      {manage && (edited === undefined ? <BudgetForm levels={levels} onDone={() => undefined} /> : <BudgetForm key={edited.id} budget={edited} levels={levels} onDone={() => setEditing(null)} />)}
      <table>
        <caption>Budgets and what each spent in its current period</caption>
        <thead>
          <tr>
            <th scope="col">Level</th>
            <th scope="col">Target</th>
            <th scope="col">USD</th>
            <th scope="col">Tokens</th>
            <th scope="col">Period</th>
            <th scope="col">Thresholds</th>
            {manage && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {budgets.isPending && (
            <tr>
              <td colSpan={manage ? 7 : 6} className="muted">
                Loading…
              </td>
            </tr>
          )}
          {!budgets.isPending && list.length === 0 && (
            <tr>
              <td colSpan={manage ? 7 : 6} className="muted">
                No budget yet.
              </td>
            </tr>
          )}
          {list.map((budget) => (
            <BudgetRow key={budget.id} budget={budget} actions={manage} manage={levels.includes(budget.level)} onEdit={() => setEditing(budget.id)} />
          ))}
        </tbody>
      </table>
      <AlertsTable />
    </section>
  );
}
