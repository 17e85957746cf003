import { isAscii } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { BACKSLASH, COLON, endOfString, QUOTE, skipWhitespace } from './bytes.js';

/**
 * JSON.parse for a body as bytes, cheaper when it carries long plain strings (base64 media):
 * such a string is cut out of the text before JSON.parse and put back as a string made
 * straight from its bytes. Decoding the whole body and then JSON.parse copying the string
 * out of it made two fresh large strings per image (each new large object costs page
 * faults); this makes one, and JSON.parse reads only the small rest.
 * The result is always what JSON.parse of the decoded bytes gives, errors included: only
 * strings JSON.parse would take as they are (printable ASCII, no escape) are cut out.
 */

/** Strings this long or longer are cut out; a body with none goes the plain way. */
const LONG_STRING_BYTES = 32 * 1024;

/** Marks a cut-out string in the text JSON.parse reads; unguessable, so no caller's string is taken for one. */
const STAND_IN = `${randomBytes(12).toString('base64url')}:`;

export interface ParsedJson {
  value: unknown;
  /** The text JSON.parse read: the body's, with its long plain strings stood in for. */
  text: string;
}

/**
 * Whether some aligned window of LONG_STRING_BYTES holds no quote: any string of twice that
 * length covers one. A few native searches, so bodies without long strings pay next to nothing.
 */
function mayHoldLongString(bytes: Buffer): boolean {
  for (let window = 0; window + LONG_STRING_BYTES <= bytes.length; window += LONG_STRING_BYTES) {
    const quote = bytes.indexOf(QUOTE, window);
    if (quote < 0 || quote >= window + LONG_STRING_BYTES) return true;
  }
  return false;
}

/** High bit of each byte of `word` that is below 0x20, for a word of ASCII bytes (see isPrintableAscii). */
function controlBits(word: number): number {
  return (word - 0x20202020) & ~word & 0x80808080;
}

/**
 * Whether every byte is printable ASCII (0x20–0x7f), the bytes a JSON string may hold
 * unescaped and that decode to themselves. Four bytes at a time: a byte below 0x20 sets its
 * high bit in `word - 0x20202020` while its own high bit is clear (bytes are ASCII here);
 * four words per step, which keeps the loop's overhead small against the bytes it tests.
 */
function isPrintableAscii(part: Buffer): boolean {
  if (!isAscii(part)) return false;
  const misalignment = (part.byteOffset & 3) === 0 ? 0 : 4 - (part.byteOffset & 3);
  const head = Math.min(part.length, misalignment);
  const words = (part.length - head) >>> 2;
  for (let index = 0; index < head; index += 1) if (part[index]! < 0x20) return false;
  const view = new Uint32Array(part.buffer, part.byteOffset + head, words);
  let index = 0;
  for (const unrolled = words & ~3; index < unrolled; index += 4) {
    if ((controlBits(view[index]!) | controlBits(view[index + 1]!) | controlBits(view[index + 2]!) | controlBits(view[index + 3]!)) !== 0) return false;
  }
  for (; index < words; index += 1) if (controlBits(view[index]!) !== 0) return false;
  for (let byte = head + words * 4; byte < part.length; byte += 1) if (part[byte]! < 0x20) return false;
  return true;
}

export interface Span {
  start: number;
  end: number;
}

/** The long plain strings that are values (not keys), as byte spans of their content; null when the text ends inside a string. */
function longPlainStrings(bytes: Buffer): Span[] | null {
  const spans: Span[] = [];
  for (let quote = bytes.indexOf(QUOTE); quote >= 0; ) {
    const end = endOfString(bytes, quote);
    if (end < 0) return null;
    if (end - quote - 2 >= LONG_STRING_BYTES && bytes[skipWhitespace(bytes, end)] !== COLON) {
      const content = bytes.subarray(quote + 1, end - 1);
      if (content.indexOf(BACKSLASH) < 0 && isPrintableAscii(content)) spans.push({ start: quote + 1, end: end - 1 });
    }
    quote = bytes.indexOf(QUOTE, end);
  }
  return spans;
}

/**
 * What a cut-out string is put back as, from its bytes (printable ASCII) and the name of the
 * member it is (an array's index as text): by default the string itself.
 */
export type LongStringValue = (name: string, bytes: Buffer) => unknown;

// Latin-1, which decodes ASCII as UTF-8 does: from about 1 MB Node makes a Latin-1 string
// external, its memory malloc's and used again, where a string that large on V8's heap is a
// fresh mapping whose every page faults (~340 faults for an image of 1 MiB). The extra
// collections V8 runs for external memory cost less (docs/performance.md).
const asString: LongStringValue = (_name, bytes) => bytes.toString('latin1');

/** Puts the cut-out strings back in place of their stand-ins; returns how many it put back. */
function restore(value: unknown, bytes: Buffer, spans: readonly Span[], longString: LongStringValue): number {
  let restored = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop() as Record<string, unknown>;
    for (const key in node) {
      const member = node[key];
      if (typeof member === 'object' && member !== null) {
        pending.push(member);
      } else if (typeof member === 'string' && member.startsWith(STAND_IN)) {
        const span = spans[Number(member.slice(STAND_IN.length))];
        if (span === undefined) return -1;
        node[key] = longString(key, bytes.subarray(span.start, span.end));
        restored += 1;
      }
    }
  }
  return restored;
}

/**
 * The text JSON.parse is to read for a body: its decoded bytes, with long plain strings stood
 * in for (`spans`, their byte ranges, in order). Decoding and parsing are apart so that a large
 * body can take them in two turns of the event loop (see parseJsonBytes).
 */
export interface DecodedJson {
  text: string;
  spans: readonly Span[];
}

/** The first half of parseJsonBytes: the text to parse. */
export function decodeJsonBytes(bytes: Buffer): DecodedJson {
  const spans = bytes.length < 2 * LONG_STRING_BYTES || !mayHoldLongString(bytes) ? null : longPlainStrings(bytes);
  if (spans === null || spans.length === 0) return { text: bytes.toString('utf8'), spans: [] };
  let text = '';
  let from = 0;
  spans.forEach((span, index) => {
    // Quotes are ASCII, so the pieces between them decode as they would in the whole.
    text += `${bytes.toString('utf8', from, span.start)}${STAND_IN}${index}`;
    from = span.end;
  });
  text += bytes.toString('utf8', from);
  return { text, spans };
}

/** The second half of parseJsonBytes: JSON.parse of the decoded text, the cut-out strings put back. */
export function parseDecodedJson(decoded: DecodedJson, bytes: Buffer, longString: LongStringValue = asString): ParsedJson {
  const { text, spans } = decoded;
  const value = JSON.parse(text) as unknown;
  if (spans.length === 0) return { value, text };
  if (typeof value !== 'object' || value === null || restore(value, bytes, spans, longString) !== spans.length) {
    const plain = bytes.toString('utf8');
    return { value: JSON.parse(plain) as unknown, text: plain };
  }
  return { value, text };
}

/**
 * JSON.parse of the bytes as UTF-8; throws its SyntaxError for text that is not JSON.
 * `longString` decides what a long plain string becomes (see LongStringValue); when JSON.parse
 * of the whole text has to be used instead, every string is the string itself.
 */
export function parseJsonBytes(bytes: Buffer, longString?: LongStringValue): ParsedJson {
  return parseDecodedJson(decodeJsonBytes(bytes), bytes, longString);
}
