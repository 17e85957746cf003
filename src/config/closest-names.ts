/** Levenshtein distance, bounded by the longer string; inputs are short model ids. */
function editDistance(a: string, b: string): number {
  const previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    let diagonal = previous[0]!;
    previous[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const above = previous[j]!;
      previous[j] = Math.min(above + 1, previous[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return previous[b.length]!;
}

/** Up to `limit` candidates closest to `input` (model ids, setting names), only those plausibly meant. */
export function closestIds(input: string, candidates: readonly string[], limit: number): string[] {
  const needle = input.toLowerCase().slice(0, 128);
  return [...new Set(candidates)]
    .map((id) => {
      const lower = id.toLowerCase();
      const contains = lower.includes(needle) || needle.includes(lower);
      return { id, score: contains ? 0 : editDistance(needle, lower) / Math.max(needle.length, lower.length) };
    })
    .filter((candidate) => candidate.score <= 0.5)
    .sort((a, b) => a.score - b.score || a.id.localeCompare(b.id))
    .slice(0, limit)
    .map((candidate) => candidate.id);
}
