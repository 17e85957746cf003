import type { UpstreamObjectKind, UpstreamObjectRef } from './types.js';

/** Collects the vendor-account objects a body names, each with the field that names it. */
export class UpstreamRefs {
  readonly found: UpstreamObjectRef[] = [];

  /** A string id at `param`; anything else (absent, null, a number) names nothing. */
  add(kind: UpstreamObjectKind, id: unknown, param: string): void {
    if (typeof id === 'string' && id.length > 0) this.found.push({ kind, id, param });
  }

  /** Every string of an id list at `param`. */
  addAll(kind: UpstreamObjectKind, ids: unknown, param: string): void {
    if (!Array.isArray(ids)) return;
    ids.forEach((id, index) => this.add(kind, id, `${param}[${index}]`));
  }
}

export function recordOf(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** The elements of `value` that are objects, with their index (a list of content blocks, tools, items). */
export function recordsOf(value: unknown): [Record<string, unknown>, number][] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((element, index) => {
    const record = recordOf(element);
    return record === null ? [] : [[record, index] as [Record<string, unknown>, number]];
  });
}
