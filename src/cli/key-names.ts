import type { ApiKeyView } from '../keys/index.js';
import type { AdminClient } from './admin-client.js';

/** Key id → name, so tables show which key a row is about; empty when the keys cannot be read. */
export async function keyNames(client: AdminClient): Promise<Map<string, string>> {
  const list = await client.request<{ data: ApiKeyView[] }>('GET', '/keys').catch(() => ({ data: [] }));
  return new Map(list.data.map((key) => [key.id, key.name]));
}

/** `key_… (name)`, or `-` for no key. */
export function keyLabel(id: string | null | undefined, names: ReadonlyMap<string, string>): string {
  if (id === null || id === undefined) return '-';
  const name = names.get(id);
  return name === undefined ? id : `${id} (${name})`;
}
