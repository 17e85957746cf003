import { createHash } from 'node:crypto';
import { SECRET_FAMILIES } from './secret-patterns.js';

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
  'pwd',
  // A session identifier is a bearer credential like a cookie (VETTING's context.sessionId).
  'sessionid',
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

/** Secrets and media inside free text: every family in one expression, each its own named group. */
const TEXT_PATTERNS = new RegExp(SECRET_FAMILIES.map(({ family, pattern }) => `(?<${family}>${pattern})`).join('|'), 'g');
/**
 * Whether a text could hold a match at all: a search for the markers alone takes about half
 * the time the patterns take to find nothing, and most text holds none.
 */
const MAY_MATCH = new RegExp([...new Set(SECRET_FAMILIES.map(({ marker }) => marker))].join('|'));

/** What stands in for one match of TEXT_PATTERNS: the match itself when it is no secret after all. */
function placeholderOf(match: string, groups: Record<string, string | undefined>): string {
  if (groups.datauri !== undefined) return base64Reference(groups.data ?? '', groups.mime ?? null);
  for (const { family, placeholder, isSecret } of SECRET_FAMILIES) {
    if (groups[family] === undefined) continue;
    const keep = groups[`${family}Keep`] ?? '';
    if (isSecret !== undefined && !isSecret(match, keep)) return match;
    return placeholder ?? `${keep}${REDACTED}`;
  }
  return REDACTED;
}

/**
 * Whether a whole string is a placeholder this redaction wrote: it is never redacted again
 * (a reference to media would otherwise be taken for base64 and hashed a second time, and an
 * export would disagree with the record it came from).
 */
const PLACEHOLDER = /^\[(?:omitted|redacted)(?:[ :][^\]]*)?\]$/;

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

/** Base64 characters decoded per step: a multiple of 4, so every slice decodes on its own. */
const BASE64_SLICE = 64 * 1024;
const scratch = Buffer.allocUnsafe((BASE64_SLICE / 4) * 3);

/** Base64 as it is read a slice at a time: a string, or its characters as bytes (asciiText). */
type Base64Text = Pick<string, 'length' | 'indexOf' | 'includes' | 'endsWith' | 'slice'>;

/** Printable ASCII bytes read as Base64Text: each slice is made a string on its own, never the whole. */
function asciiText(bytes: Buffer): Base64Text {
  return {
    length: bytes.length,
    indexOf: (search: string) => bytes.indexOf(search),
    includes: (search: string) => bytes.includes(search),
    endsWith: (search: string) => bytes.length >= search.length && bytes.toString('latin1', bytes.length - search.length) === search,
    slice: (start?: number, end?: number) => bytes.toString('latin1', start, end === undefined ? undefined : Math.min(end, bytes.length)),
  };
}

/**
 * The reference of strict base64 (base64 characters only, `=` only at the end), decoded a
 * slice at a time into one scratch buffer and hashed as it goes: megabytes of media are
 * never copied whole. null when the text is not strict base64. Node's decoder skips what is
 * not base64, so a byte count short of what the length promises gives that away (a length
 * of 4k+1 promises no more than 4k does, so it is left to the regular path); it also takes
 * `-` and `_`, which are checked for.
 */
function streamedBase64Reference(base64: Base64Text, mime: string | null): string | null {
  const firstPad = base64.indexOf('=');
  const padding = firstPad < 0 ? 0 : base64.length - firstPad;
  const characters = base64.length - padding;
  if (characters === 0 || padding > 2 || !base64.endsWith('='.repeat(padding)) || characters % 4 === 1) return null;
  if (base64.includes('-') || base64.includes('_')) return null;
  const hash = createHash('sha256');
  let bytes = 0;
  let type = mime;
  for (let offset = 0; offset < base64.length; offset += BASE64_SLICE) {
    const written = scratch.write(base64.slice(offset, offset + BASE64_SLICE), 'base64');
    if (offset === 0) type ??= sniffMime(scratch.subarray(0, written));
    hash.update(scratch.subarray(0, written));
    bytes += written;
  }
  if (bytes !== Math.floor((characters * 3) / 4)) return null;
  return `[omitted ${type ?? 'application/octet-stream'}: ${bytes} bytes, sha256 ${hash.digest('hex')}]`;
}

function base64Reference(base64: string, mime: string | null): string {
  return streamedBase64Reference(base64, mime) ?? mediaReference(Buffer.from(base64, 'base64'), mime);
}

const DATA_URI_HEAD = /^data:(?<mime>[\w.+-]+\/[\w.+-]+)?(?:;[\w.+-]+=[^;,\s]*)*;base64,/;
/** How much of a text the head of a data URI is looked for in when the text is bytes: a type and its parameters fit. */
const DATA_URI_HEAD_CHARACTERS = 1024;

/**
 * The reference of a text that is one base64 data URI and nothing else (a media part), without
 * a regular expression over the data: `start` is the text's beginning, `data(from)` its base64.
 */
function dataUriReference(start: string, length: number, data: (from: number) => Base64Text): string | null {
  const head = DATA_URI_HEAD.exec(start);
  if (head === null || head[0].length === length) return null;
  return streamedBase64Reference(data(head[0].length), head.groups?.mime ?? null);
}

function wholeDataUriReference(text: string): string | null {
  return dataUriReference(text, text.length, (from) => text.slice(from));
}

/**
 * What redactValue puts in place of the member `name`'s string when that string is media (a
 * base64 data URI, bare base64), read from its bytes (printable ASCII, as a JSON text holds
 * it), so that the string itself is never made: the request log's thread reads megabytes of
 * images this way. null when it takes the string to tell (not media, a credential's field).
 */
export function mediaReferenceOfBytes(name: string, bytes: Buffer): string | null {
  const kind = fieldKind(name);
  if (kind === 'secret') return null;
  if (kind === 'base64') return streamedBase64Reference(asciiText(bytes), null);
  if (bytes.length < BARE_BASE64_MIN_LENGTH) return null;
  if (bytes.toString('latin1', 0, 5) === 'data:') {
    return dataUriReference(bytes.toString('latin1', 0, DATA_URI_HEAD_CHARACTERS), bytes.length, (from) => asciiText(bytes.subarray(from)));
  }
  return streamedBase64Reference(asciiText(bytes), null);
}

/**
 * The shortest text TEXT_PATTERNS can match (a query parameter: "?sig=" and one character):
 * shorter strings — most field values — are returned at once.
 */
const SHORTEST_MATCH = 6;

/** Shorter values are not searched for: they would take words out of ordinary text. */
const SHORTEST_KNOWN_SECRET = 8;
const knownSecrets = new Set<string>();
/** Every known secret, longest first (one that contains another is replaced whole); null while there is none. */
let knownSecretPattern: RegExp | null = null;
/** MAY_MATCH and the known secrets in one search: on ordinary text it costs what MAY_MATCH alone does (microbenchmark). */
let mayMatch = MAY_MATCH;
/** The shortest text redaction looks into: SHORTEST_MATCH, or less for a short known secret. */
let shortestRedacted = SHORTEST_MATCH;

/**
 * Credentials the gateway itself holds — its providers' keys, the admin token, storage
 * passwords — redacted by value wherever text is redacted: a provider that echoes its own
 * key back ("Invalid API key provided: …") must not have it shown to the caller or stored,
 * whatever the key looks like. Only ever grows (every gateway of a process adds its own).
 */
export function addKnownSecrets(values: Iterable<string | undefined>): void {
  for (const value of values) if (value !== undefined && value.length >= SHORTEST_KNOWN_SECRET) knownSecrets.add(value);
  if (knownSecrets.size === 0) return;
  const literals = [...knownSecrets].sort((a, b) => b.length - a.length).map((value) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  knownSecretPattern = new RegExp(literals.join('|'), 'g');
  mayMatch = new RegExp([MAY_MATCH.source, ...literals].join('|'));
  shortestRedacted = Math.min(SHORTEST_MATCH, ...[...knownSecrets].map((value) => value.length));
}

/**
 * A provider's answer without the gateway's own credentials in it (an upstream that echoes
 * the key it was sent), nothing else changed: the answer itself when it holds none, which a
 * native search of each known value tells without decoding it.
 */
export function withoutKnownSecrets<T extends string | Buffer>(answer: T): T {
  if (knownSecretPattern === null) return answer;
  for (const secret of knownSecrets) {
    if (!answer.includes(secret)) continue;
    knownSecretPattern.lastIndex = 0;
    if (typeof answer === 'string') return answer.replace(knownSecretPattern, REDACTED) as T;
    return Buffer.from(answer.toString('utf8').replace(knownSecretPattern, REDACTED), 'utf8') as T;
  }
  return answer;
}

/** Redacts credentials and replaces media inside a string. */
export function redactText(text: string): string {
  if (text.length < shortestRedacted) return text;
  if (text.startsWith('[') && PLACEHOLDER.test(text)) return text;
  if (text.length >= SHORTEST_MATCH) {
    // Media becomes a reference whatever it holds: it is never searched through.
    if (text.startsWith('data:')) {
      const reference = wholeDataUriReference(text);
      if (reference !== null) return reference;
    }
    if (text.length >= BARE_BASE64_MIN_LENGTH && BARE_BASE64.test(text)) return base64Reference(text, null);
  }
  if (!mayMatch.test(text)) return text;
  if (knownSecretPattern !== null) text = text.replace(knownSecretPattern, REDACTED);
  if (text.length < SHORTEST_MATCH) return text;
  return text.replace(TEXT_PATTERNS, (match: string, ...rest: unknown[]) => placeholderOf(match, rest[rest.length - 1] as Record<string, string | undefined>));
}

/**
 * Where the credentials of `text` are, by the same families and known secrets redaction
 * replaces (one list for the request log and the secrets guardrail): each span covers what
 * redaction would replace, the kept part (a header name, a URL's user) left out. Media is no
 * credential here.
 */
export function credentialSpans(text: string): { start: number; end: number }[] {
  if (text.length < shortestRedacted || !mayMatch.test(text)) return [];
  const spans: { start: number; end: number }[] = [];
  if (knownSecretPattern !== null) {
    knownSecretPattern.lastIndex = 0;
    for (let match = knownSecretPattern.exec(text); match !== null; match = knownSecretPattern.exec(text)) spans.push({ start: match.index, end: match.index + match[0].length });
  }
  TEXT_PATTERNS.lastIndex = 0;
  for (let match = TEXT_PATTERNS.exec(text); match !== null; match = TEXT_PATTERNS.exec(text)) {
    const groups = match.groups ?? {};
    if (groups.datauri !== undefined) continue;
    const family = SECRET_FAMILIES.find((candidate) => groups[candidate.family] !== undefined);
    if (family === undefined) continue;
    const keep = groups[`${family.family}Keep`] ?? '';
    if (family.isSecret !== undefined && !family.isSecret(match[0], keep)) continue;
    spans.push({ start: match.index + keep.length, end: match.index + match[0].length });
  }
  return spans;
}

function isSecretField(name: string): boolean {
  const normalized = name.toLowerCase().replace(/[-_\s]/g, '');
  return SECRET_FIELDS.has(normalized) || SECRET_SUFFIXES.some((suffix) => normalized.endsWith(suffix));
}

type FieldKind = 'secret' | 'base64' | 'other';

/** Field names seen, with what they hold: a few dozen in practice; bounded, as callers choose them. */
const fieldKinds = new Map<string, FieldKind>();
const FIELD_KINDS_LIMIT = 10_000;

function fieldKind(name: string): FieldKind {
  let kind = fieldKinds.get(name);
  if (kind === undefined) {
    kind = isSecretField(name) ? 'secret' : BASE64_FIELDS.has(name.toLowerCase().replace(/_/g, '')) ? 'base64' : 'other';
    if (fieldKinds.size >= FIELD_KINDS_LIMIT) fieldKinds.clear();
    fieldKinds.set(name, kind);
  }
  return kind;
}

export interface RedactionOptions {
  /**
   * Replace every string, whatever it looks like: encryption-utility payloads (plain text and
   * `enc::` values) are never stored, only their length.
   */
  opaqueStrings?: boolean;
}

/**
 * A redacted copy of a JSON-like value (also Errors, Buffers and Dates; other class instances
 * are returned as they are). Copy on write: a value with nothing to redact is returned itself,
 * and only the objects and arrays on the way to a change are copied, so the log can tell
 * "nothing changed" by identity and keep JSON it already has (a copy of every request and
 * response body cost as much as the rest of the record).
 */
export function redactValue(value: unknown, options: RedactionOptions = {}, depth = 0): unknown {
  if (typeof value === 'string') return options.opaqueStrings === true ? `[redacted: ${value.length} characters]` : redactString(value, depth);
  if (value === null || typeof value !== 'object') return typeof value === 'bigint' ? value.toString() : value;
  if (depth >= MAX_DEPTH) return '[omitted: nested too deep]';
  if (value instanceof Uint8Array) return mediaReference(value, null);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Error) return redactError(value);
  if (Array.isArray(value)) return redactArray(value, options, depth);
  // Framework objects (a request, a socket) are left to their own log serializers.
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const source = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  // for…in, not Object.keys: no array of names per object (V8 keeps the names with the
  // object's shape); own names only, in case Object.prototype was given enumerable ones.
  for (const name in source) {
    if (!hasOwn(source, name)) continue;
    const field = source[name];
    const kind = fieldKind(name);
    const redacted =
      field !== null && field !== undefined && kind === 'secret' && !isLogprobToken(source, name)
        ? REDACTED
        : typeof field === 'string' && kind === 'base64' && !PLACEHOLDER.test(field)
          ? base64Reference(field, null)
          : redactValue(field, options, depth + 1);
    if (copy === undefined && redacted !== field) copy = copyBefore(source, name);
    if (copy !== undefined) copy[name] = redacted;
  }
  return copy ?? value;
}

/** Longest string read as JSON before redaction: tool-call arguments and tool results are far smaller. */
const LONGEST_EMBEDDED_JSON = 1024 * 1024;

/**
 * A string field's value. One that holds a JSON object or array (tool-call `arguments`, a
 * tool's result) is read as JSON first, so its members are redacted by name like any other
 * (`{"password":"x"}` has no shape a text pattern could know), and written back only when
 * something changed.
 */
function redactString(text: string, depth: number): string {
  const first = text.charCodeAt(0);
  if ((first === 0x7b || first === 0x5b) && text.length <= LONGEST_EMBEDDED_JSON) {
    const last = text.charCodeAt(text.length - 1);
    if ((first === 0x7b && last === 0x7d) || (first === 0x5b && last === 0x5d)) {
      const parsed = parseJson(text);
      if (parsed !== undefined && typeof parsed === 'object' && parsed !== null) {
        // Member names are not redacted by redactValue: the text search runs over the whole.
        const redacted = redactValue(parsed, {}, depth + 1);
        return redactText(redacted === parsed ? text : JSON.stringify(redacted));
      }
    }
  }
  return redactText(text);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const hasOwn = (object: object, name: string): boolean => Object.prototype.hasOwnProperty.call(object, name);

/**
 * In a logprobs entry (`{"token", "logprob", "bytes", "top_logprobs"}`) `token` is a piece of
 * the model's output, not a credential: the log would otherwise lose every token of it. Its
 * text still goes through the text redaction, so a key inside it is redacted all the same.
 */
const isLogprobToken = (source: Record<string, unknown>, name: string): boolean => name === 'token' && typeof source.logprob === 'number';

/** A copy of the own members of `source` that come before `stop`. */
function copyBefore(source: Record<string, unknown>, stop: string): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const name in source) {
    if (name === stop) break;
    if (hasOwn(source, name)) copy[name] = source[name];
  }
  return copy;
}

function redactArray(items: readonly unknown[], options: RedactionOptions, depth: number): unknown[] {
  let copy: unknown[] | undefined;
  for (let position = 0; position < items.length; position += 1) {
    const item = items[position];
    const redacted = redactValue(item, options, depth + 1);
    if (copy === undefined && redacted !== item) copy = items.slice(0, position);
    if (copy !== undefined) copy.push(redacted);
  }
  return copy ?? (items as unknown[]);
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
