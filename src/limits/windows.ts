/** UTC windows of the three limits, and the seconds until each resets. */
export function minuteWindow(now: number): { id: number; resetSeconds: number } {
  const id = Math.floor(now / 60_000);
  return { id, resetSeconds: Math.max(1, Math.ceil(((id + 1) * 60_000 - now) / 1000)) };
}

export function dayWindow(now: number): { id: string; resetSeconds: number } {
  const date = new Date(now);
  const next = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
  return { id: date.toISOString().slice(0, 10), resetSeconds: Math.max(1, Math.ceil((next - now) / 1000)) };
}

export function monthWindow(now: number): { id: string; resetSeconds: number } {
  const date = new Date(now);
  const next = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  return { id: date.toISOString().slice(0, 7), resetSeconds: Math.max(1, Math.ceil((next - now) / 1000)) };
}

export function rateLimitHeaders(limit: number, remaining: number, resetSeconds: number): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(limit),
    'x-ratelimit-remaining-requests': String(Math.max(0, remaining)),
    'x-ratelimit-reset-requests': `${resetSeconds}s`,
  };
}
