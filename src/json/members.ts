import { CLOSE_ARRAY, CLOSE_OBJECT, COMMA, endOfString, isWhitespace, OPEN_ARRAY, OPEN_OBJECT, QUOTE, skipWhitespace } from './bytes.js';

/**
 * The top-level members of a JSON object's bytes, found without parsing it: where each
 * `"key": value` begins and ends. The text must be valid JSON (it was parsed before).
 */

export interface JsonMember {
  key: string;
  /** Byte range of `"key": value`. */
  start: number;
  end: number;
}

/** endOfString for text that was parsed before, so every string is closed. */
function endOfParsedString(bytes: Buffer, quote: number): number {
  const end = endOfString(bytes, quote);
  if (end < 0) throw new SyntaxError('unterminated string in JSON text');
  return end;
}

/** Position just past the value that starts at `start`. */
function endOfValue(bytes: Buffer, start: number): number {
  const first = bytes[start];
  if (first === QUOTE) return endOfParsedString(bytes, start);
  let index = start;
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
    // A number, true, false or null.
    while (index < bytes.length && !isWhitespace(bytes[index]) && bytes[index] !== COMMA && bytes[index] !== CLOSE_OBJECT) index += 1;
    return index;
  }
  let depth = 0;
  for (; index < bytes.length; index += 1) {
    const byte = bytes[index];
    if (byte === QUOTE) {
      index = endOfParsedString(bytes, index) - 1;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
    } else if ((byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) && --depth === 0) {
      return index + 1;
    }
  }
  throw new SyntaxError('unterminated value in JSON text');
}

function membersOf(bytes: Buffer): JsonMember[] {
  const members: JsonMember[] = [];
  let index = skipWhitespace(bytes, 0) + 1; // past `{`
  for (;;) {
    index = skipWhitespace(bytes, index);
    if (bytes[index] !== QUOTE) return members; // `}`
    const keyEnd = endOfParsedString(bytes, index);
    const key = JSON.parse(bytes.toString('utf8', index, keyEnd)) as string;
    const valueStart = skipWhitespace(bytes, skipWhitespace(bytes, keyEnd) + 1); // past `:`
    const end = endOfValue(bytes, valueStart);
    members.push({ key, start: index, end });
    index = skipWhitespace(bytes, end);
    if (bytes[index] === COMMA) index += 1;
  }
}

/**
 * Remembered per buffer: the scan steps through every string of the body, which for a body of
 * many small objects takes tens of milliseconds. A large body's are found while it is parsed,
 * in a turn of the event loop of their own, and the pass-through patch later only reads them.
 */
const found = new WeakMap<Buffer, readonly JsonMember[]>();

/** The members of the object whose JSON text `bytes` holds, in the order written (repeated keys included). */
export function topLevelMembers(bytes: Buffer): readonly JsonMember[] {
  let members = found.get(bytes);
  if (members === undefined) {
    members = membersOf(bytes);
    found.set(bytes, members);
  }
  return members;
}

/** Keeps members found by a scan that checked the text as it went (see parseObjectInSteps), for topLevelMembers to answer. */
export function rememberTopLevelMembers(bytes: Buffer, members: readonly JsonMember[]): void {
  found.set(bytes, members);
}
