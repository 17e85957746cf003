import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, isWhitespace, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from './bytes.js';

/**
 * Rewrites top-level members of a JSON object's text without parsing or serialising the rest:
 * a provider's small JSON objects (stream chunks) go on as the provider wrote them, with only
 * the gateway's members changed. Strings are skipped with native searches; the structure in
 * between is walked a character at a time. The text must be valid JSON (it was parsed before).
 * `members.ts` finds the same for bytes, where a large body must not be
 * decoded into a string at all.
 */

function skipWhitespace(text: string, from: number): number {
  let index = from;
  while (isWhitespace(text.charCodeAt(index))) index += 1;
  return index;
}

/** Position just past the string that opens at `quote`. */
function endOfString(text: string, quote: number): number {
  let index = quote;
  for (;;) {
    index = text.indexOf('"', index + 1);
    if (index < 0) throw new SyntaxError('unterminated string in JSON text');
    let backslashes = 0;
    while (text.charCodeAt(index - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return index + 1;
  }
}

/** Position just past the value that starts at `start`. */
function endOfValue(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return endOfString(text, start);
  let index = start;
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
    // A number, true, false or null.
    for (let code = first; index < text.length && !isWhitespace(code) && code !== COMMA && code !== CLOSE_OBJECT; code = text.charCodeAt(++index));
    return index;
  }
  let depth = 0;
  for (; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      index = endOfString(text, index) - 1;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      depth += 1;
    } else if ((code === CLOSE_OBJECT || code === CLOSE_ARRAY) && --depth === 0) {
      return index + 1;
    }
  }
  throw new SyntaxError('unterminated value in JSON text');
}

/** What to change in an object's text: members to give new values (as JSON text), members to leave out. */
export interface MemberEdits {
  /** The edited members' names: those to set first, then those to remove. */
  keys: readonly string[];
  /** The new values of the first `values.length` keys, as JSON text. */
  values: readonly string[];
}

/** At most 31 members: which ones a text has is kept in the bits of a number. */
export function memberEdits(set: Readonly<Record<string, unknown>>, remove: readonly string[]): MemberEdits {
  const setKeys = Object.keys(set);
  if (setKeys.length + remove.length > 31) throw new RangeError('at most 31 members can be edited at once');
  return { keys: [...setKeys, ...remove], values: setKeys.map((key) => JSON.stringify(set[key])) };
}

/** The position in `keys` of the key at `quote` (compared without making a string for every key), or -1. */
function editedKey(text: string, quote: number, keyEnd: number, keys: readonly string[]): number {
  const length = keyEnd - quote - 2;
  for (let position = 0; position < keys.length; position += 1) {
    const key = keys[position]!;
    if (key.length === length && text.startsWith(key, quote + 1)) return position;
  }
  for (let index = quote + 1; index < keyEnd - 1; index += 1) {
    // A key written with escapes, which may still name an edited member.
    if (text.charCodeAt(index) === BACKSLASH) return keys.indexOf(JSON.parse(text.slice(quote, keyEnd)) as string);
  }
  return -1;
}

/**
 * The object `text` with `edits` applied; everything else is kept as written, in its place.
 * Undefined when the text is not an object, when a member to set is missing, or when a member
 * to set or remove appears more than once: the caller then serialises the parsed object.
 */
export function rewriteObjectText(text: string, edits: MemberEdits): string | undefined {
  let index = skipWhitespace(text, 0);
  if (text.charCodeAt(index) !== OPEN_OBJECT) return undefined;
  const { keys, values } = edits;
  let seen = 0; // a bit per edited key
  let result = '';
  let copiedTo = 0;
  let previousValueEnd = -1;
  let keptBefore = false;
  for (index = skipWhitespace(text, index + 1); text.charCodeAt(index) === QUOTE; ) {
    const memberStart = index;
    const keyEnd = endOfString(text, memberStart);
    const colon = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(colon) !== COLON) throw new SyntaxError('expected a colon in JSON text');
    const valueStart = skipWhitespace(text, colon + 1);
    const valueEnd = endOfValue(text, valueStart);
    index = skipWhitespace(text, valueEnd);
    const hasNext = text.charCodeAt(index) === COMMA;
    if (hasNext) index = skipWhitespace(text, index + 1);
    const edited = editedKey(text, memberStart, keyEnd, keys);
    if (edited < 0) {
      keptBefore = true;
    } else {
      if ((seen & (1 << edited)) !== 0) return undefined;
      seen |= 1 << edited;
      if (edited < values.length) {
        result += `${text.slice(copiedTo, valueStart)}${values[edited]}`;
        copiedTo = valueEnd;
        keptBefore = true;
      } else {
        // Left out with the comma before it, or, before any kept member, the comma after it.
        result += text.slice(copiedTo, keptBefore ? previousValueEnd : memberStart);
        copiedTo = keptBefore || !hasNext ? valueEnd : index;
      }
    }
    previousValueEnd = valueEnd;
    if (!hasNext) break;
  }
  const allSet = (1 << values.length) - 1;
  if ((seen & allSet) !== allSet) return undefined;
  return copiedTo === 0 ? text : `${result}${text.slice(copiedTo)}`;
}
