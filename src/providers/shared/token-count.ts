/**
 * A token count a provider reported, as the gateway may use it: a whole number from zero to
 * 2^53 - 1, or null ("not reported"). A negative count would hand a key's limits back what it
 * spent, a fraction (some compatible servers report 12.5) could not be priced exactly, and a
 * count past 2^53 is no count at all: no integer column or Redis counter would take it.
 */
export function tokenCount(value: unknown): number | null {
  return typeof value === 'number' && value >= 0 && value <= Number.MAX_SAFE_INTEGER ? Math.round(value) : null;
}
