/**
 * A token count a provider reported, as the gateway may use it: a whole number of at least
 * zero, or null ("not reported"). A negative count would hand a key's limits back what it
 * spent, and a fraction (some compatible servers report 12.5) could not be priced exactly.
 */
export function tokenCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : null;
}
