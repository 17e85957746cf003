import { isIP } from 'node:net';

/**
 * Which network addresses the gateway's outbound calls of operator- or author-given URLs (agent
 * `http` nodes, MCP servers) may reach. Every address a host resolves to is
 * checked, in every notation that can smuggle a private address: plain IPv4 and IPv6, IPv4
 * embedded in IPv6 (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4
 * 2002::/16). Private, loopback, link-local, CGNAT, metadata, multicast and reserved ranges
 * are refused unless the operator listed them (agents.httpAllowAddresses, mcp.allowAddresses).
 */
interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

export class AddressPolicyError extends Error {
  override name = 'AddressPolicyError';
}

function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9]\d{0,2})$/.test(part) && Number(part) <= 255)) return null;
  return Uint8Array.from(parts.map(Number));
}

function parseIpv6(text: string): Uint8Array | null {
  if (isIP(text) !== 6 || text.includes('%')) return null;
  let hex = text;
  if (text.includes('.')) {
    // A dotted IPv4 tail (::ffff:1.2.3.4) becomes its two 16-bit groups.
    const lastColon = text.lastIndexOf(':');
    const ipv4 = parseIpv4(text.slice(lastColon + 1));
    if (ipv4 === null) return null;
    hex = `${text.slice(0, lastColon + 1)}${((ipv4[0]! << 8) | ipv4[1]!).toString(16)}:${((ipv4[2]! << 8) | ipv4[3]!).toString(16)}`;
  }
  const [left, right] = hex.split('::') as [string, string | undefined];
  const groups = (part: string) => (part.length === 0 ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const leftGroups = groups(left);
  const rightGroups = right === undefined ? [] : groups(right);
  const missing = 8 - leftGroups.length - rightGroups.length;
  const words = right === undefined ? leftGroups : [...leftGroups, ...new Array<number>(Math.max(0, missing)).fill(0), ...rightGroups];
  if (words.length !== 8) return null;
  const bytes = new Uint8Array(16);
  words.forEach((word, index) => {
    bytes[index * 2] = word >> 8;
    bytes[index * 2 + 1] = word & 0xff;
  });
  return bytes;
}

/** The bytes of an IP address (4 or 16), or null when it is not one. */
export function parseIp(text: string): Uint8Array | null {
  const version = isIP(text);
  if (version === 4) return parseIpv4(text);
  if (version === 6) return parseIpv6(text);
  return null;
}

export function parseCidr(text: string): Cidr {
  const [address, prefixText] = text.trim().split('/') as [string, string | undefined];
  const bytes = parseIp(address);
  if (bytes === null) throw new AddressPolicyError(`"${text}" is not an IP address or CIDR range`);
  const prefix = prefixText === undefined ? bytes.length * 8 : Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText ?? '0') || !Number.isInteger(prefix) || prefix < 0 || prefix > bytes.length * 8) {
    throw new AddressPolicyError(`"${text}" has an invalid prefix length`);
  }
  return { bytes, prefix };
}

function contains(cidr: Cidr, bytes: Uint8Array): boolean {
  if (cidr.bytes.length !== bytes.length) return false;
  let bits = cidr.prefix;
  for (let index = 0; bits > 0; index += 1, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((cidr.bytes[index]! & mask) !== (bytes[index]! & mask)) return false;
  }
  return true;
}

const BLOCKED = [
  // IPv4
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.0.2.0/24',
  '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4',
  '168.63.129.16/32',
  // IPv6 (embedded IPv4 forms are checked through the IPv4 ranges)
  '::/128', '::1/128', '100::/64', '2001::/32', '2001:10::/28', '2001:20::/28', '2001:db8::/32', '64:ff9b:1::/48', 'fc00::/7', 'fe80::/10',
  'fec0::/10', 'ff00::/8',
].map(parseCidr);

const EMBEDDING = [
  { cidr: parseCidr('::ffff:0:0/96'), offset: 12 }, // IPv4-mapped
  { cidr: parseCidr('::/96'), offset: 12 }, // IPv4-compatible (deprecated)
  { cidr: parseCidr('64:ff9b::/96'), offset: 12 }, // NAT64
  { cidr: parseCidr('2002::/16'), offset: 2 }, // 6to4
];

/** The IPv4 address an IPv6 address carries, if it is of an embedding form. */
function embeddedIpv4(bytes: Uint8Array): Uint8Array | null {
  if (bytes.length !== 16) return null;
  const form = EMBEDDING.find((embedding) => contains(embedding.cidr, bytes));
  return form === undefined ? null : bytes.slice(form.offset, form.offset + 4);
}

export type AddressDecision = { allowed: true } | { allowed: false; reason: string };

export class AddressPolicy {
  private readonly allowed: readonly Cidr[];

  /** `allowCidrs`: the ranges `setting` lists; a bad entry stops start-up, naming the setting. */
  constructor(allowCidrs: readonly string[], setting: string) {
    this.allowed = allowCidrs.map((entry) => {
      try {
        return parseCidr(entry);
      } catch (error) {
        throw new AddressPolicyError(`${setting}: ${(error as Error).message}`);
      }
    });
  }

  check(address: string): AddressDecision {
    const bytes = parseIp(address);
    if (bytes === null) return { allowed: false, reason: `"${address}" is not an IP address` };
    const embedded = embeddedIpv4(bytes);
    const forms = embedded === null ? [bytes] : [bytes, embedded];
    if (forms.some((form) => this.allowed.some((cidr) => contains(cidr, form)))) return { allowed: true };
    const blocked = forms.some((form) => BLOCKED.some((cidr) => contains(cidr, form)));
    return blocked ? { allowed: false, reason: `${address} is a private, loopback, link-local or reserved address` } : { allowed: true };
  }
}
