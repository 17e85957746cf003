import { isIPv4, isIPv6 } from 'node:net';
import type { PiiKind } from './policy.js';

/**
 * Personal data in free text, one finder per kind. Each is a regular expression for the shape
 * and, where the kind has one, its check digits (Luhn for payment cards, ISO 13616 mod 97 for
 * IBANs, the control letter of a Spanish DNI), so a number that merely looks like one is left
 * alone. Test tables: test/guardrails-checks.test.ts.
 */

/** What a check found: where, and what kind it is (the mask says it: `[email]`). */
export interface Span {
  start: number;
  end: number;
  label: string;
}

interface Finder {
  pattern: RegExp;
  valid?: (match: string) => boolean;
  /**
   * Where to try the pattern (then sticky), instead of at every position: the start of the
   * run of characters around each of the shape's rare character (an email's `@`, an IPv6
   * address's `:`). Several times faster on prose, where that character seldom appears.
   */
  anchors?: (text: string) => Iterable<number>;
  /** A character a match may not follow (a lookbehind, tried at every position, costs more than this check of each match). */
  notAfter?: RegExp;
}

/** For every `marker` in `text`, where the run of `allowed` characters holding it begins (each run once). */
function* runStarts(text: string, marker: string, allowed: RegExp, longest: number): Iterable<number> {
  let after = -1;
  for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, at + 1)) {
    if (at < after) continue;
    let start = at;
    while (start > 0 && at - start < longest && allowed.test(text[start - 1]!)) start -= 1;
    after = at + 1;
    while (after < text.length && allowed.test(text[after]!)) after += 1;
    yield start;
  }
}

const LOCAL_CHARACTER = /[A-Za-z0-9._%+-]/;
const IPV6_CHARACTER = /[0-9A-Fa-f:]/;

/** A domain's last label that is a file type, not a top-level domain: `icon@2x.png`, `lib@1.0.js`. */
const FILE_SUFFIX = /\.(?:png|jpe?g|gif|svg|webp|ico|js|mjs|ts|tsx|css|json|map|html?|md|py|rb|go|rs|java|txt)$/i;

export function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = digits.length - 1; index >= 0; index -= 1) {
    let digit = digits.charCodeAt(index) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

/** ISO 13616: the country and check digits moved to the end, letters as 10–35, the number mod 97 is 1. */
export function ibanValid(iban: string): boolean {
  const compact = iban.replace(/ /g, '').toUpperCase();
  if (compact.length < 15 || compact.length > 34) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const character of rearranged) {
    const code = character.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : character;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

const FINDERS: { readonly [K in PiiKind]: readonly Finder[] } = {
  email: [{
    anchors: (text) => runStarts(text, '@', LOCAL_CHARACTER, 64),
    pattern: /(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,63})@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-]|\.[A-Za-z])/y,
    valid: (match) => !FILE_SUFFIX.test(match) && !match.includes('..'),
  }],
  // International (+ and 8–15 digits) or the North American 3-3-4 shape; dates and versions have other groupings.
  phone: [{
    pattern: /(?<![\w+])(?:\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}[ .-]?\d{2,4}|\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4})(?![\w-])/g,
    valid: (match) => {
      const digits = match.replace(/\D/g, '').length;
      return match.startsWith('+') ? digits >= 8 && digits <= 15 : digits === 10;
    },
  }],
  card: [{
    pattern: /(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])/g,
    valid: (match) => {
      const digits = match.replace(/\D/g, '');
      return digits.length >= 13 && digits.length <= 19 && /^[2-6]/.test(digits) && luhn(digits);
    },
  }],
  iban: [{ pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g, valid: ibanValid }],
  ip: [
    { pattern: /(?:\d{1,3}\.){3}\d{1,3}(?![\w.:])/g, notAfter: /[\w.:]/, valid: isIPv4 },
    {
      anchors: (text) => runStarts(text, ':', IPV6_CHARACTER, 39),
      pattern: /(?<![\w.:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w.:])/y,
      // Three groups at least: `a::b` and `std::vector` are code.
      valid: (match) => isIPv6(match) && match.split(':').filter((group) => group.length > 0).length >= 3,
    },
  ],
  // Area 000, 666 and 900–999, group 00 and serial 0000 are never issued.
  us_ssn: [{ pattern: /(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])/g }],
  // HMRC: no D, F, I, Q, U, V in the prefix, no O second, and some prefixes never issued; suffix A–D.
  uk_nino: [{ pattern: /\b(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g }],
  es_dni: [{ pattern: /(?<![\w])\d{8}-?[A-Z]\b/g, valid: (match) => DNI_LETTERS[Number(match.slice(0, 8)) % 23] === match.at(-1) }],
};

/** The personal data of the given kinds in `text`, in order, none overlapping. */
export function findPii(text: string, kinds: readonly PiiKind[]): Span[] {
  const spans: Span[] = [];
  for (const kind of kinds) {
    for (const { pattern, valid, anchors, notAfter } of FINDERS[kind]) {
      const found = (match: RegExpExecArray) => {
        if (notAfter !== undefined && match.index > 0 && notAfter.test(text[match.index - 1]!)) return;
        if (valid === undefined || valid(match[0])) spans.push({ start: match.index, end: match.index + match[0].length, label: kind });
      };
      if (anchors === undefined) {
        pattern.lastIndex = 0;
        for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) found(match);
        continue;
      }
      for (let start of anchors(text)) {
        // A run may begin with characters no match begins with (`._ada@…`): the first that may.
        for (; start < text.length; start += 1) {
          pattern.lastIndex = start;
          const match = pattern.exec(text);
          if (match !== null) {
            found(match);
            break;
          }
          if (/[A-Za-z0-9:]/.test(text[start]!)) break;
        }
      }
    }
  }
  return withoutOverlaps(spans);
}

/** Spans in order of their start; of two that overlap, the earlier (then the longer) is kept. */
export function withoutOverlaps(spans: Span[]): Span[] {
  if (spans.length < 2) return spans;
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Span[] = [];
  for (const span of spans) {
    const last = kept.at(-1);
    if (last === undefined || span.start >= last.end) kept.push(span);
  }
  return kept;
}
