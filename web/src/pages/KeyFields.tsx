import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
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
  const catalog = useQuery({ queryKey: ['models'], queryFn: adminApi.models });
  const [filter, setFilter] = useState('');
  const models = catalog.data?.data ?? [];
  const ids = useMemo(() => (catalog.data === undefined ? [] : [...catalog.data.data.map((model) => model.id), ...Object.keys(catalog.data.aliases)]), [catalog.data]);
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
      {catalog.isError && <p className="error">The catalog could not be loaded.</p>}
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

/** Expiry, tags and metadata as typed: a local date and time, a tag list, `name=value` lines. */
export interface DetailTexts {
  expiresAt: string;
  tags: string;
  metadata: string;
}

export const NO_DETAILS: DetailTexts = { expiresAt: '', tags: '', metadata: '' };

const TAG = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$/;

/** A time as `<input type="datetime-local">` shows it: the browser's local time, to the minute. */
function localInputOf(iso: string): string {
  const time = new Date(iso);
  const local = new Date(time.getTime() - time.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

export function detailTextsOf(key: { expires_at: string | null; tags: string[]; metadata: Record<string, string> }): DetailTexts {
  return {
    expiresAt: key.expires_at === null ? '' : localInputOf(key.expires_at),
    tags: key.tags.join(', '),
    metadata: Object.entries(key.metadata)
      .map(([name, value]) => `${name}=${value}`)
      .join('\n'),
  };
}

const tagsOf = (text: string) => text.split(/[\s,]+/).filter((tag) => tag.length > 0);
const metadataLinesOf = (text: string) => text.split('\n').map((line) => line.trim()).filter((line) => line.length > 0);

/** `savedExpiry`: the key's expiry as saved, which may have passed (an expired key keeps it while other fields change). */
export function detailProblems(texts: DetailTexts, savedExpiry = ''): Partial<Record<keyof DetailTexts, string>> {
  const problems: Partial<Record<keyof DetailTexts, string>> = {};
  const now = Date.now();
  if (texts.expiresAt !== '' && texts.expiresAt !== savedExpiry) {
    const time = new Date(texts.expiresAt).getTime();
    if (Number.isNaN(time)) problems.expiresAt = 'a date and time, or empty for never';
    else if (time <= now) problems.expiresAt = 'a time in the future';
  }
  const badTag = tagsOf(texts.tags).find((tag) => !TAG.test(tag));
  if (badTag !== undefined) problems.tags = `"${badTag}": letters, digits and _ . : / -, up to 64, starting with a letter or digit`;
  else if (tagsOf(texts.tags).length > 50) problems.tags = 'at most 50 tags';
  const lines = metadataLinesOf(texts.metadata);
  const badLine = lines.find((line) => {
    const at = line.indexOf('=');
    return at < 1 || at > 64 || line.length - at - 1 > 500;
  });
  if (badLine !== undefined) problems.metadata = `"${badLine.slice(0, 40)}": one name=value a line (a name of 1-64 characters, a value of up to 500)`;
  else if (lines.length > 50) problems.metadata = 'at most 50 fields';
  return problems;
}

export function detailsInputOf(texts: DetailTexts): { expires_at: string | null; tags: string[]; metadata: Record<string, string> } {
  const metadata: Record<string, string> = {};
  for (const line of metadataLinesOf(texts.metadata)) {
    const at = line.indexOf('=');
    metadata[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return { expires_at: texts.expiresAt === '' ? null : new Date(texts.expiresAt).toISOString(), tags: [...new Set(tagsOf(texts.tags))], metadata };
}

export function DetailFields({ texts, savedExpiry, onChange }: { texts: DetailTexts; savedExpiry?: string; onChange: (texts: DetailTexts) => void }) {
  const problems = detailProblems(texts, savedExpiry);
  const hint = (name: keyof DetailTexts, text: string) => (
    <small id={`detail-${name}-hint`} className={problems[name] !== undefined ? 'error' : 'muted'}>
      {problems[name] ?? text}
    </small>
  );
  return (
    <fieldset className="details">
      <legend>Expiry, tags and metadata</legend>
      <div className="field">
        <label htmlFor="detail-expiresAt">Expires</label>
        <input
          id="detail-expiresAt"
          type="datetime-local"
          value={texts.expiresAt}
          aria-invalid={problems.expiresAt !== undefined}
          aria-describedby="detail-expiresAt-hint"
          onChange={(event) => onChange({ ...texts, expiresAt: event.target.value })}
        />
        {hint('expiresAt', 'your local time; after it calls are refused (401 key_expired); empty: never')}
      </div>
      <div className="field">
        <label htmlFor="detail-tags">Tags</label>
        <input
          id="detail-tags"
          value={texts.tags}
          placeholder="class-2026, team:search"
          aria-invalid={problems.tags !== undefined}
          aria-describedby="detail-tags-hint"
          onChange={(event) => onChange({ ...texts, tags: event.target.value })}
        />
        {hint('tags', 'comma-separated; the key list filters by a tag')}
      </div>
      <div className="field">
        <label htmlFor="detail-metadata">Metadata</label>
        <textarea
          id="detail-metadata"
          rows={3}
          value={texts.metadata}
          placeholder={'owner=ana@example.com\ncost-center=4711'}
          aria-invalid={problems.metadata !== undefined}
          aria-describedby="detail-metadata-hint"
          onChange={(event) => onChange({ ...texts, metadata: event.target.value })}
        />
        {hint('metadata', 'one name=value a line; never a secret (it is shown to every admin)')}
      </div>
    </fieldset>
  );
}
