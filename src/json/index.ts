export { QUOTE, BACKSLASH, COLON, COMMA, OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY, isWhitespace, skipWhitespace, endOfString } from './bytes.js';
export { MAX_JSON_DEPTH, nestsDeeperThan } from './depth.js';
export { topLevelMembers } from './members.js';
export type { JsonMember } from './members.js';
export { memberEdits, rewriteObjectText } from './object-text.js';
export type { MemberEdits } from './object-text.js';
export { decodeJsonBytes, parseDecodedJson, parseJsonBytes } from './parse-bytes.js';
export type { DecodedJson, ParsedJson } from './parse-bytes.js';
export { readExactObject } from './structured-object.js';
