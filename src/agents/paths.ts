import { isForbiddenKey } from './values.js';

/**
 * Dot paths, the one way templates and expressions name a value: `input`, `<node>.content`,
 * `<node>.json.<field>`, `<image_node>.url`, `vars.<name>` (docs/agents.md, "Templates and expressions").
 */
export const MAX_PATH_SEGMENTS = 16;
const ROOT = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const SEGMENT = /^[A-Za-z0-9_-]{1,128}$/;

export class PathError extends Error {
  override name = 'PathError';
}

/** Checks the segments of a path (root first); throws a PathError that says what is wrong. */
export function checkPath(segments: readonly string[], text: string = segments.join('.')): void {
  if (segments.length === 0 || segments.length > MAX_PATH_SEGMENTS) {
    throw new PathError(`"${text}" must have between 1 and ${MAX_PATH_SEGMENTS} dot-separated parts`);
  }
  if (!ROOT.test(segments[0]!)) throw new PathError(`"${text}" must start with a node id, "input" or "vars"`);
  for (const segment of segments) {
    if (isForbiddenKey(segment)) throw new PathError(`"${text}" uses the forbidden name "${segment}"`);
    if (!SEGMENT.test(segment)) throw new PathError(`"${text}" has an invalid part "${segment.slice(0, 40)}"`);
  }
}

export function parsePath(text: string): string[] {
  const segments = text.trim().split('.');
  checkPath(segments, text.trim());
  return segments;
}
