/**
 * Finding one's way through JSON text as bytes, without decoding or parsing it: strings are
 * skipped with native byte searches, so megabytes of base64 cost almost nothing and no large
 * string is made.
 */

// JSON's structural characters, as bytes and as UTF-16 code units alike (object-text.ts).
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const COMMA = 0x2c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;

/** JSON's four whitespace characters (a byte or a code unit; undefined or NaN past the end is not one). */
export function isWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

export function skipWhitespace(bytes: Buffer, from: number): number {
  let index = from;
  while (isWhitespace(bytes[index])) index += 1;
  return index;
}

/** Position just past the string that opens at `quote`, or -1 when it is not closed. */
export function endOfString(bytes: Buffer, quote: number): number {
  let index = quote;
  for (;;) {
    index = bytes.indexOf(QUOTE, index + 1);
    if (index < 0) return -1;
    let backslashes = 0;
    while (bytes[index - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return index + 1;
  }
}
