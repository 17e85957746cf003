/** UTC windows of the three limits, and the seconds until each resets. */
export function minuteWindow(now: number): { id: number; resetSeconds: number } {
  const id = Math.floor(now / 60_000);
  return { id, resetSeconds: Math.max(1, Math.ceil(((id + 1) * 60_000 - now) / 1000)) };
}

interface Span {
  start: number;
  end: number;
  id: string;
}

/**
 * The UTC day and month last asked for, kept until `now` leaves them: every admission asks,
 * and formatting dates each time showed in profiles.
 */
const spans = { day: { start: 0, end: 0, id: '' }, month: { start: 0, end: 0, id: '' } };

function spanOf(kind: 'day' | 'month', now: number): Span {
  const cached = spans[kind];
  if (now >= cached.start && now < cached.end) return cached;
  const date = new Date(now);
  const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()];
  const span =
    kind === 'day'
      ? { start: Date.UTC(year, month, day), end: Date.UTC(year, month, day + 1), id: date.toISOString().slice(0, 10) }
      : { start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1), id: date.toISOString().slice(0, 7) };
  spans[kind] = span;
  return span;
}

export function dayWindow(now: number): { id: string; resetSeconds: number } {
  const span = spanOf('day', now);
  return { id: span.id, resetSeconds: Math.max(1, Math.ceil((span.end - now) / 1000)) };
}

export function monthWindow(now: number): { id: string; resetSeconds: number } {
  const span = spanOf('month', now);
  return { id: span.id, resetSeconds: Math.max(1, Math.ceil((span.end - now) / 1000)) };
}

export function rateLimitHeaders(limit: number, remaining: number, resetSeconds: number): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(limit),
    'x-ratelimit-remaining-requests': String(Math.max(0, remaining)),
    'x-ratelimit-reset-requests': `${resetSeconds}s`,
  };
}
