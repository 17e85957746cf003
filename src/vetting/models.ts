import type { CheckedCall } from '../calls/index.js';
import type { CallContext } from '../model-api/index.js';
import type { ChatCaller } from './types.js';

/**
 * A ChatCaller bound to one model that passed the model-call path (resolution, allow-list,
 * input policy): each draft or verification of the loop is a call through it.
 */
export function chatCallerFor(call: CheckedCall<'chat'>, context: CallContext): ChatCaller {
  return (body) => call.invoke((chat, attempt) => chat.complete({ ...attempt, body, signal: context.signal, requestId: context.requestId }), context.signal);
}
