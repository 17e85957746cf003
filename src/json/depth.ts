import { CLOSE_ARRAY, CLOSE_OBJECT, endOfString, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from './bytes.js';

/**
 * The deepest nesting of objects and arrays a JSON body may have. Real requests stay far
 * below it (a chat with tool schemas and structured output reaches about 20 levels); a body
 * nested millions of levels deep held the event loop for seconds in JSON.parse and in every
 * walk over the value after it.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether JSON text nests objects and arrays deeper than `limit`, in one pass over its bytes
 * before any parsing: strings (keys, text, base64 media) are skipped with native searches, so
 * only the bytes between them are looked at. Stepping through short strings here instead was
 * slower (measured). Text that is not JSON answers false (the parser then says what is wrong
 * with it).
 */
export function nestsDeeperThan(bytes: Buffer, limit: number): boolean {
  let depth = 0;
  for (let index = 0; index < bytes.length; index += 1) {
    const byte = bytes[index];
    if (byte === QUOTE) {
      const end = endOfString(bytes, index);
      if (end < 0) return false;
      index = end - 1;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
      if (depth > limit) return true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth -= 1;
    }
  }
  return false;
}
