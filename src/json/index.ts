export { QUOTE, BACKSLASH, COLON, COMMA, OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY, isWhitespace, skipWhitespace, endOfString } from './bytes.js';
export { MAX_JSON_DEPTH, nestsDeeperThan } from './depth.js';
export { memberEdits, rewriteObjectText } from './object-text.js';
export type { MemberEdits } from './object-text.js';
export { parseJsonBytes } from './parse-bytes.js';
export type { ParsedJson } from './parse-bytes.js';
export { readExactObject } from './structured-object.js';
