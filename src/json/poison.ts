const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Whether an object has a `__proto__` key, or a `constructor` key whose value has a
 * `prototype`: the two shapes that poison prototypes when merged (Fastify's default parser
 * rejects them the same way). Looks at the object's own keys only.
 */
export function holdsPoisonKey(node: object): boolean {
  if (hasOwn.call(node, '__proto__')) return true;
  const constructor = hasOwn.call(node, 'constructor') ? (node as { constructor: unknown }).constructor : undefined;
  return typeof constructor === 'object' && constructor !== null && hasOwn.call(constructor, 'prototype');
}

/** Whether a parsed value holds a poisoning key anywhere in it (see holdsPoisonKey). */
export function isPoisoned(root: unknown): boolean {
  if (typeof root !== 'object' || root === null) return false;
  const pending: object[] = [root];
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (holdsPoisonKey(node)) return true;
    for (const key in node) {
      const value = (node as Record<string, unknown>)[key];
      if (typeof value === 'object' && value !== null) pending.push(value);
    }
  }
  return false;
}

/**
 * Whether JSON text could spell a poisoning key: as keys, the two names can only be written
 * plainly or with a \u escape. With the quote the search skips through base64 quickly;
 * 'constructor' alone stops at every `c` of it. Text, not bytes: a Buffer's search for a
 * string is many times slower.
 */
export function maySpellPoisonKey(text: string): boolean {
  return text.includes('"__proto__"') || text.includes('"constructor"') || text.includes('\\u');
}
