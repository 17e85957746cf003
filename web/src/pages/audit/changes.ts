/** One field of an audit entry's target, before and after the change. */
export interface FieldChange {
  /** `limits.rpm`, `status`, … */
  path: string;
  before: unknown;
  after: unknown;
  changed: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Flattens objects to dotted paths (arrays and scalars are leaves). */
function leaves(value: unknown, prefix: string, into: Map<string, unknown>): void {
  if (isRecord(value)) {
    for (const [name, child] of Object.entries(value)) leaves(child, prefix === '' ? name : `${prefix}.${name}`, into);
  } else if (value !== null || prefix !== '') {
    into.set(prefix === '' ? '(value)' : prefix, value);
  }
}

/** Every field of before and after, changed ones first, each group in name order. */
export function changedFields(before: unknown, after: unknown): FieldChange[] {
  const was = new Map<string, unknown>();
  const is = new Map<string, unknown>();
  leaves(before, '', was);
  leaves(after, '', is);
  const paths = [...new Set([...was.keys(), ...is.keys()])].sort();
  const rows = paths.map((path) => ({ path, before: was.get(path), after: is.get(path), changed: JSON.stringify(was.get(path)) !== JSON.stringify(is.get(path)) }));
  return [...rows.filter((row) => row.changed), ...rows.filter((row) => !row.changed)];
}
