/**
 * The local answer-key check: finds a protected term (a correct answer or key concept) stated
 * verbatim, ignoring case and whitespace, so a leaking draft is rejected without spending a
 * verification call, and so failure reasons can be scrubbed of the key before anyone sees them.
 */
export class AnswerKeyGuard {
  private readonly patterns: RegExp[];

  constructor(terms: readonly string[]) {
    this.patterns = terms.map(termPattern).filter((pattern): pattern is RegExp => pattern !== null);
  }

  /** Whether the text states any protected term. */
  leaks(text: string): boolean {
    const normalised = text.normalize('NFKC');
    return this.patterns.some((pattern) => {
      pattern.lastIndex = 0;
      return pattern.test(normalised);
    });
  }

  /** The text with every protected term replaced by a marker. */
  redact(text: string): string {
    let result = text.normalize('NFKC');
    for (const pattern of this.patterns) result = result.replace(pattern, '[protected]');
    return result;
  }
}

const WORD_CHARACTER = /[\p{L}\p{N}]/u;

/**
 * Whitespace-insensitive: any whitespace, and any invisible format character (zero-width
 * space and joiners, soft hyphen, word joiner: Unicode category Cf), may appear between the
 * term's characters — "Pa\u200Bris" reads "Paris" on screen. A term that starts or ends with
 * a letter or digit must stand alone there ("4" does not match "14").
 */
function termPattern(term: string): RegExp | null {
  const characters = [...term.normalize('NFKC').replace(/[\s\p{Cf}]+/gu, '')];
  const first = characters[0];
  const last = characters[characters.length - 1];
  if (first === undefined || last === undefined) return null;
  const body = characters.map((character) => character.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('[\\s\\p{Cf}]*');
  const before = WORD_CHARACTER.test(first) ? '(?<![\\p{L}\\p{N}]\\p{Cf}*)' : '';
  const after = WORD_CHARACTER.test(last) ? '(?!\\p{Cf}*[\\p{L}\\p{N}])' : '';
  return new RegExp(`${before}${body}${after}`, 'giu');
}
