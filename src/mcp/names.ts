/**
 * Names at /mcp: a tool or prompt `tool` of server `files` is `files__tool`. Server names never
 * hold "__" nor end in "_" (checked with the config), so splitting at the first "__" reads one
 * name one way only.
 */
export const NAME_SEPARATOR = '__';

export interface QualifiedName {
  server: string;
  name: string;
}

export function qualifiedName(server: string, name: string): string {
  return `${server}${NAME_SEPARATOR}${name}`;
}

/** The server and upstream name of a gateway name, or null when it has no separator. */
export function splitQualifiedName(qualified: string): QualifiedName | null {
  const at = qualified.indexOf(NAME_SEPARATOR);
  if (at <= 0 || at + NAME_SEPARATOR.length >= qualified.length) return null;
  return { server: qualified.slice(0, at), name: qualified.slice(at + NAME_SEPARATOR.length) };
}
