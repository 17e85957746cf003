import { GatewayError, invalidBody } from '../../errors/index.js';

/**
 * JSON text of a value a provider sent, or null when JSON.stringify cannot make it: JSON.parse
 * reads text nested to any depth, JSON.stringify overflows the stack on a few thousand levels.
 */
export function providerJsonText(value: unknown): string | null {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/**
 * JSON text of a value a provider sent (an answer, tool arguments); one too deep to write
 * again is a provider_error (the request log names the provider).
 */
export function stringifyProviderValue(value: unknown, what: string): string {
  const text = providerJsonText(value);
  if (text === null) {
    throw new GatewayError('provider_error', 'The model provider sent a response the gateway could not read. Try again later.', {
      logDetail: { reason: `${what} nested too deep to write as JSON` },
    });
  }
  return text;
}

/**
 * Runs the mapping of what the caller sent into the provider's request (and its JSON). A
 * caller's value nested deeper than the mapping's recursion or JSON.stringify survive (a tool
 * schema, or tool-call arguments, thousands of levels deep) is the caller's invalid_body, not
 * a 500.
 */
export function fromCallerInput<T>(map: () => T): T {
  try {
    return map();
  } catch (error) {
    if (error instanceof RangeError) {
      throw invalidBody('The request nests too deep to pass on to the model provider: flatten its tools, schemas or tool-call arguments.');
    }
    throw error;
  }
}
