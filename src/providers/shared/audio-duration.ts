/**
 * The longest audio the gateway prices: a day. A provider's transcription file limit (25 MB
 * at OpenAI) holds far less; the bound keeps a duration — the caller's own, or one a provider
 * reports — from pricing a request at an amount no cost column holds (1e300 seconds), or at
 * none (1e308 seconds overflowed the cost's arithmetic and the request went unlogged).
 */
export const MAX_AUDIO_SECONDS = 86_400;

/** A duration in seconds as the gateway may price it, or null when it is not one. */
export function audioSeconds(value: unknown): number | null {
  return typeof value === 'number' && value >= 0 && value <= MAX_AUDIO_SECONDS ? value : null;
}
