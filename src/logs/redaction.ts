import { createHash } from 'node:crypto';

/**
 * The one redaction every writer goes through: the request log, its exports and the process
 * log. Credentials are replaced by a marker; media (base64 and binary) by a reference that
 * says what it was (type, byte length, SHA-256) so a record stays small and replayable
 * without holding the bytes.
 */

export const REDACTED = '[redacted]';

/** Field names whose values are credentials, compared lower-case without `-` and `_`. */
const SECRET_FIELDS = new Set([
  'authorization',
  'proxyauthorization',
  'cookie',
  'setcookie',
  'apikey',
  'xapikey',
  'xgoogapikey',
  'token',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'privatekey',
  'encryptionkey',
  'credentials',
]);
const SECRET_SUFFIXES = ['apikey', 'token', 'secret', 'password', 'privatekey', 'secretkey', 'accesskey'];

/** Fields that carry generated media as bare base64. */
const BASE64_FIELDS = new Set(['b64json']);

const MAX_DEPTH = 64;
/** A bare base64 string this long is media or a file, not text (text has spaces). */
const BARE_BASE64_MIN_LENGTH = 1024;
const BARE_BASE64 = /^[A-Za-z0-9+/\r\n]+={0,2}$/;

/**
 * Secrets and media inside free text, in one pass. Order matters: private keys and data URIs
 * first, so their bodies are not half-matched by the key patterns.
 */
const TEXT_PATTERNS = new RegExp(
  [
    /(?<pem>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----)/.source,
    /(?<datauri>data:(?<mime>[\w.+-]+\/[\w.+-]+)?(?:;[\w.+-]+=[^;,\s]*)*;base64,(?<data>[A-Za-z0-9+/]+={0,2}))/.source,
    /(?<bearer>\b(?:Bearer|Basic)\s+)[A-Za-z0-9._~+/-]{8,}=*/.source,
    /(?<ours>\bsk-mg-[A-Za-z0-9]{8,})/.source,
    /(?<anthropic>\bsk-ant-[A-Za-z0-9_-]{8,})/.source,
    /(?<vendor>\bsk-[A-Za-z0-9_-]{16,})/.source,
    /(?<google>\bAIza[0-9A-Za-z_-]{30,})/.source,
    /(?<admin>\bmg-admin-[A-Za-z0-9_-]{16,})/.source,
    /(?<aws>\bAKIA[0-9A-Z]{16}\b)/.source,
    /(?<github>\bgh[pousr]_[A-Za-z0-9]{30,})/.source,
  ].join('|'),
  'g',
);

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** What the bytes are, from their first bytes (generated images carry no type). */
function sniffMime(bytes: Uint8Array): string | null {
  const hex = Buffer.from(bytes.subarray(0, 12)).toString('hex');
  if (hex.startsWith('89504e47')) return 'image/png';
  if (hex.startsWith('ffd8ff')) return 'image/jpeg';
  if (hex.startsWith('47494638')) return 'image/gif';
  if (hex.startsWith('52494646') && hex.slice(16, 24) === '57454250') return 'image/webp';
  if (hex.startsWith('25504446')) return 'application/pdf';
  return null;
}

/** The reference that stands in for media: type, size and digest, never the bytes. */
export function mediaReference(bytes: Uint8Array, mime: string | null): string {
  const type = mime ?? sniffMime(bytes) ?? 'application/octet-stream';
  return `[omitted ${type}: ${bytes.byteLength} bytes, sha256 ${sha256(bytes)}]`;
}

function base64Reference(base64: string, mime: string | null): string {
  return mediaReference(Buffer.from(base64, 'base64'), mime);
}

/** Redacts credentials and replaces media inside a string. */
export function redactText(text: string): string {
  if (text.length >= BARE_BASE64_MIN_LENGTH && BARE_BASE64.test(text)) return base64Reference(text, null);
  return text.replace(TEXT_PATTERNS, (match: string, ...rest: unknown[]) => {
    const groups = rest[rest.length - 1] as Record<string, string | undefined>;
    if (groups.pem !== undefined) return '[redacted private key]';
    if (groups.datauri !== undefined) return base64Reference(groups.data ?? '', groups.mime ?? null);
    if (groups.bearer !== undefined) return `${groups.bearer}${REDACTED}`;
    if (groups.ours !== undefined) return 'sk-mg-[redacted]';
    return REDACTED;
  });
}

function isSecretField(name: string): boolean {
  const normalized = name.toLowerCase().replace(/[-_\s]/g, '');
  return SECRET_FIELDS.has(normalized) || SECRET_SUFFIXES.some((suffix) => normalized.endsWith(suffix));
}

export interface RedactionOptions {
  /**
   * Replace every string, whatever it looks like: encryption-utility payloads (plain text and
   * `enc::` values) are never stored, only their length.
   */
  opaqueStrings?: boolean;
}

/** A redacted deep copy of a JSON-like value (also Errors, Buffers and Dates; other class instances are returned as they are). */
export function redactValue(value: unknown, options: RedactionOptions = {}, depth = 0): unknown {
  if (typeof value === 'string') return options.opaqueStrings === true ? `[redacted: ${value.length} characters]` : redactText(value);
  if (value === null || typeof value !== 'object') return typeof value === 'bigint' ? value.toString() : value;
  if (depth >= MAX_DEPTH) return '[omitted: nested too deep]';
  if (value instanceof Uint8Array) return mediaReference(value, null);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Error) return redactError(value);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, options, depth + 1));
  // Framework objects (a request, a socket) are left to their own log serializers.
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (field !== null && field !== undefined && isSecretField(name)) {
      copy[name] = REDACTED;
    } else if (typeof field === 'string' && BASE64_FIELDS.has(name.toLowerCase().replace(/_/g, ''))) {
      copy[name] = base64Reference(field, null);
    } else {
      copy[name] = redactValue(field, options, depth + 1);
    }
  }
  return copy;
}

/** An Error as a plain object (the shape pino's err serializer gives), redacted. */
function redactError(error: Error): Record<string, unknown> {
  const plain: Record<string, unknown> = { type: error.name, message: redactText(error.message) };
  if (error.stack !== undefined) plain.stack = redactText(error.stack);
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') plain.code = code;
  if (error.cause !== undefined) plain.cause = redactValue(error.cause, {}, 1);
  return plain;
}
