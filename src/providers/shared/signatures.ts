/*
 * Reasoning signatures (ReasoningMembers.reasoning_signature) travel through other formats as
 * `<provider>:<signature>`: the adapter that receives one adds its provider's name, and sends
 * one back only when the name is its own, so no vendor is ever sent another's opaque state.
 */

/** A vendor's signature as the gateway hands it out. */
export function signatureOf(provider: string, signature: string): string {
  return `${provider}:${signature}`;
}

/** The vendor's own signature in a value handed back, or null when another provider made it (or none did). */
export function ownSignature(value: unknown, provider: string): string | null {
  if (typeof value !== 'string' || !value.startsWith(`${provider}:`)) return null;
  const signature = value.slice(provider.length + 1);
  return signature.length > 0 ? signature : null;
}
