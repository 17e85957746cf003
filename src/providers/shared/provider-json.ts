import { GatewayError } from '../../errors/index.js';

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
