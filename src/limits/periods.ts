/**
 * Budget periods: a calendar day, an ISO week (from Monday) or a calendar month in a time
 * zone, or `total` (never resets). Computed from an instant the caller passes, so a test's
 * clock decides which period a request falls in.
 */
export type BudgetPeriod = 'day' | 'week' | 'month' | 'total';

export interface PeriodSpan {
  /** Names the period: `2026-12-02`, `W2026-11-30` (its Monday), `2026-12`, `total`; counters are kept per id. */
  id: string;
  /** Epoch ms of its first instant (0 for `total`). */
  start: number;
  /** Epoch ms when the next period begins; null for `total`. */
  end: number | null;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Whether `timeZone` is one the runtime knows (an IANA name such as `Europe/Berlin`, or `UTC`). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatterOf(timeZone);
    return true;
  } catch {
    return false;
  }
}

interface LocalDate {
  year: number;
  /** 1–12. */
  month: number;
  day: number;
}

function localParts(timeZone: string, at: number): LocalDate & { hour: number; minute: number; second: number } {
  const parts: Record<string, number> = {};
  for (const part of formatterOf(timeZone).formatToParts(new Date(at))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

/** The zone's offset from UTC at `at`, in ms (east positive). */
function offsetAt(timeZone: string, at: number): number {
  const local = localParts(timeZone, at);
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  return asUtc - Math.floor(at / 1000) * 1000;
}

/** The instant local midnight begins on a date (day overflow allowed: the 32nd is the 1st of the next month). */
function midnight(timeZone: string, date: LocalDate): number {
  const guess = Date.UTC(date.year, date.month - 1, date.day);
  const first = guess - offsetAt(timeZone, guess);
  // Across an offset change the zone's offset at midnight itself is the one that counts.
  return guess - offsetAt(timeZone, first);
}

function isoDate(year: number, month: number, day: number): string {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.toISOString().slice(0, 10);
}

/** The last span computed per period and zone, kept until `at` leaves it (every admission asks). */
const spans = new Map<string, PeriodSpan>();

/** The period of `period` in `timeZone` that contains `at`. */
export function periodAt(period: BudgetPeriod, timeZone: string, at: number): PeriodSpan {
  if (period === 'total') return { id: 'total', start: 0, end: null };
  const cacheKey = `${period} ${timeZone}`;
  const cached = spans.get(cacheKey);
  if (cached !== undefined && at >= cached.start && cached.end !== null && at < cached.end) return cached;
  const local = localParts(timeZone, at);
  let span: PeriodSpan;
  if (period === 'day') {
    span = {
      id: isoDate(local.year, local.month, local.day),
      start: midnight(timeZone, local),
      end: midnight(timeZone, { ...local, day: local.day + 1 }),
    };
  } else if (period === 'week') {
    const weekday = (new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay() + 6) % 7; // Monday 0
    const monday = { ...local, day: local.day - weekday };
    span = {
      id: `W${isoDate(monday.year, monday.month, monday.day)}`,
      start: midnight(timeZone, monday),
      end: midnight(timeZone, { ...monday, day: monday.day + 7 }),
    };
  } else {
    span = {
      id: isoDate(local.year, local.month, 1).slice(0, 7),
      start: midnight(timeZone, { year: local.year, month: local.month, day: 1 }),
      end: midnight(timeZone, { year: local.year, month: local.month + 1, day: 1 }),
    };
  }
  spans.set(cacheKey, span);
  return span;
}

const resetTexts = new Map<string, string>();

/** When a period ends, as the refusal and the alerts say it: `2026-12-03 00:00 Europe/Berlin`. */
export function describeReset(end: number | null, timeZone: string): string {
  if (end === null) return 'never (a total budget)';
  // Asked on every admission under a budget: formatted once per period end and zone.
  const cacheKey = `${end} ${timeZone}`;
  const cached = resetTexts.get(cacheKey);
  if (cached !== undefined) return cached;
  if (resetTexts.size > 1000) resetTexts.clear();
  const text = formatReset(end, timeZone);
  resetTexts.set(cacheKey, text);
  return text;
}

function formatReset(end: number, timeZone: string): string {
  const local = localParts(timeZone, end);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${local.year}-${pad(local.month)}-${pad(local.day)} ${pad(local.hour)}:${pad(local.minute)} ${timeZone}`;
}
