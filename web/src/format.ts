/** How numbers and times read on the pages (usage numbers exactly as the admin API gives them). */

/**
 * Dollars as the pages show them: cents from a dollar up (`$5.00`), up to three significant
 * digits below it (`$0.011`, `$0.000053`, never more than six decimals), `<$0.000001` for a
 * cost too small to show, and `—` for an unknown one.
 */
export function formatUsd(value: number | null): string {
  if (value === null) return '—';
  const size = Math.abs(value);
  const sign = value < 0 ? '-' : '';
  if (size === 0) return '$0.00';
  if (size < 0.0000005) return `${sign}<$0.000001`;
  const text =
    size >= 1
      ? size.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })
      : Number(size.toPrecision(3)).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });
  return `${sign}$${text}`;
}

export function formatCount(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toLocaleString('en-US');
}

export function formatTime(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** The page's URL parameters as an object of the named ones that are set. */
export function paramsOf<Name extends string>(search: URLSearchParams, names: readonly Name[]): Partial<Record<Name, string>> {
  const values: Partial<Record<Name, string>> = {};
  for (const name of names) {
    const value = search.get(name);
    if (value !== null && value !== '') values[name] = value;
  }
  return values;
}

const shellQuoted = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

/** A curl command for a JSON call of the public API, the key left as $MODELGATE_API_KEY: no secret is ever in it. */
export function curlCommand(url: string, body: unknown, headers: Record<string, string> = {}): string {
  const lines = [`curl ${url}`, '-H "Authorization: Bearer $MODELGATE_API_KEY"', '-H "Content-Type: application/json"'];
  for (const [name, value] of Object.entries(headers)) lines.push(`-H ${shellQuoted(`${name}: ${value}`)}`);
  if (body !== null && body !== undefined) lines.push(`-d ${shellQuoted(JSON.stringify(body))}`);
  return lines.join(' \\\n  ');
}
