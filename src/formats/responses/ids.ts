import { randomHex } from '../../crypto/index.js';

/** The kinds of object the Responses format names: responses, message items, function-call (and custom tool call) items, reasoning items, MCP tool lists and calls, and other input items. */
export type ResponsesIdPrefix = 'resp' | 'msg' | 'fc' | 'ctc' | 'rs' | 'mcpl' | 'mcp' | 'item';

/** An id in the Responses API's style: a prefix and 192 random bits, hex. Never derived from caller input. */
export function newResponsesId(prefix: ResponsesIdPrefix): string {
  return `${prefix}_${randomHex(24)}`;
}
