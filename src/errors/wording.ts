/**
 * "a" or "an" before a word that messages fill in (a mode, a node type, a MIME type): "an
 * embedding model", "an image node", "a chat model". By the first letter, which fits every
 * word the gateway puts there.
 */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
}
