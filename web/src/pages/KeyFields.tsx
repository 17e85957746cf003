import { useEffect, useMemo, useState } from 'react';
import type { PublicModelEntry } from '@modelgate/admin-api';
import { adminApi, type KeyLimitsInput } from '../api.js';

/**
 * The limit and allowed-model fields shared by the create and edit dialogs, each checked as
 * it is typed with the bounds the admin API enforces (the API checks them again).
 */

export interface LimitTexts {
  rpm: string;
  dailyTokens: string;
  monthlyCost: string;
}

export function limitTextsOf(limits: { rpm: number | null; daily_tokens: number | null; monthly_cost_usd: number | null }): LimitTexts {
  return {
    rpm: limits.rpm === null ? '' : String(limits.rpm),
    dailyTokens: limits.daily_tokens === null ? '' : String(limits.daily_tokens),
    monthlyCost: limits.monthly_cost_usd === null ? '' : String(limits.monthly_cost_usd),
  };
}

export const NO_LIMITS: LimitTexts = { rpm: '', dailyTokens: '', monthlyCost: '' };

function wholeNumberProblem(text: string, maximum: number): string | null {
  if (text === '') return null;
  if (!/^\d+$/.test(text) || Number(text) < 1) return 'a whole number of 1 or more, or empty for no limit';
  if (Number(text) > maximum) return `at most ${maximum.toLocaleString('en-US')}`;
  return null;
}

export function limitProblems(texts: LimitTexts): Partial<Record<keyof LimitTexts, string>> {
  const problems: Partial<Record<keyof LimitTexts, string>> = {};
  const rpm = wholeNumberProblem(texts.rpm, 2_147_483_647);
  const daily = wholeNumberProblem(texts.dailyTokens, Number.MAX_SAFE_INTEGER);
  if (rpm !== null) problems.rpm = rpm;
  if (daily !== null) problems.dailyTokens = daily;
  if (texts.monthlyCost !== '') {
    const cost = Number(texts.monthlyCost);
    if (!/^\d+(\.\d+)?$/.test(texts.monthlyCost) || cost < 0.000001) problems.monthlyCost = 'an amount in USD of at least 0.000001, or empty for no cap';
    else if (cost > 1_000_000_000) problems.monthlyCost = 'at most 1,000,000,000';
  }
  return problems;
}

export function limitsInputOf(texts: LimitTexts): KeyLimitsInput {
  return {
    rpm: texts.rpm === '' ? null : Number(texts.rpm),
    daily_tokens: texts.dailyTokens === '' ? null : Number(texts.dailyTokens),
    monthly_cost_usd: texts.monthlyCost === '' ? null : Number(texts.monthlyCost),
  };
}

export function LimitFields({ texts, onChange }: { texts: LimitTexts; onChange: (texts: LimitTexts) => void }) {
  const problems = limitProblems(texts);
  const field = (name: keyof LimitTexts, label: string, hint: string) => (
    <div className="field">
      <label htmlFor={`limit-${name}`}>{label}</label>
      <input
        id={`limit-${name}`}
        inputMode="decimal"
        placeholder="no limit"
        value={texts[name]}
        aria-invalid={problems[name] !== undefined}
        aria-describedby={`limit-${name}-hint`}
        onChange={(event) => onChange({ ...texts, [name]: event.target.value.trim() })}
      />
      <small id={`limit-${name}-hint`} className={problems[name] !== undefined ? 'error' : 'muted'}>
        {problems[name] ?? hint}
      </small>
    </div>
  );
  return (
    <fieldset className="limits">
      <legend>Limits</legend>
      {field('rpm', 'Requests per minute', 'counted exactly, per key')}
      {field('dailyTokens', 'Tokens per UTC day', 'prompt plus completion')}
      {field('monthlyCost', 'Cost per UTC month (USD)', 'at list prices')}
    </fieldset>
  );
}

/** Allowed models picked from the live catalog; none picked means any model. */
export function ModelPicker({ selected, onChange }: { selected: string[]; onChange: (models: string[]) => void }) {
  const [models, setModels] = useState<PublicModelEntry[]>([]);
  const [aliases, setAliases] = useState<string[]>([]);
  const [filter, setFilter] = useState('');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    adminApi
      .models()
      .then((list) => {
        setModels(list.data);
        setAliases(Object.keys(list.aliases));
      })
      .catch(() => setError('The catalog could not be loaded.'));
  }, []);
  const ids = useMemo(() => [...models.map((model) => model.id), ...aliases], [models, aliases]);
  const unknown = selected.filter((id) => models.length > 0 && !ids.includes(id));
  const shown = ids.filter((id) => id.toLowerCase().includes(filter.toLowerCase()));
  const toggle = (id: string) => onChange(selected.includes(id) ? selected.filter((other) => other !== id) : [...selected, id]);
  return (
    <fieldset className="models">
      <legend>Allowed models</legend>
      <p className="muted" id="models-hint">
        {selected.length === 0 ? 'Any model (none picked).' : `${selected.length} picked: ${selected.join(', ')}`}
      </p>
      {unknown.length > 0 && <p className="error">Not in the catalog now: {unknown.join(', ')} (calls for them are refused).</p>}
      {error !== null && <p className="error">{error}</p>}
      <label htmlFor="model-filter" className="visually-hidden">
        Filter models
      </label>
      <input id="model-filter" type="search" placeholder="filter models" value={filter} onChange={(event) => setFilter(event.target.value)} aria-describedby="models-hint" />
      <ul className="model-list">
        {shown.map((id) => (
          <li key={id}>
            <label>
              <input type="checkbox" checked={selected.includes(id)} onChange={() => toggle(id)} /> {id}
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}
