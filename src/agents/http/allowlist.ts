/**
 * The operator's list of hosts agent `http` nodes may call (agents.httpAllowlist,
 * MODELGATE_AGENT_HTTP_ALLOWLIST). Entries are `host` (port 443) or `host:port`; matching is
 * exact on the normalised form (lower case, IDN as punycode, no trailing dot, explicit port).
 * No wildcards: a suffix match is how allowlists get bypassed.
 */
export class AllowlistError extends Error {
  override name = 'AllowlistError';
}

const DEFAULT_PORT = '443';

function normalisedAuthority(url: URL): string {
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  return `${host}:${url.port === '' ? DEFAULT_PORT : url.port}`;
}

function parseEntry(entry: string): string {
  let url: URL;
  try {
    url = new URL(`https://${entry.trim()}`);
  } catch {
    throw new AllowlistError(`agents.httpAllowlist entry "${entry}" is not a host or host:port`);
  }
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    throw new AllowlistError(`agents.httpAllowlist entry "${entry}" must be just a host or host:port`);
  }
  return normalisedAuthority(url);
}

export class HostAllowlist {
  private readonly authorities: ReadonlySet<string>;

  constructor(entries: readonly string[]) {
    this.authorities = new Set(entries.map(parseEntry));
  }

  /** http nodes are refused altogether unless the operator listed at least one host. */
  get enabled(): boolean {
    return this.authorities.size > 0;
  }

  allows(url: URL): boolean {
    return url.protocol === 'https:' && this.authorities.has(normalisedAuthority(url));
  }
}
