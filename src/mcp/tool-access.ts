import { splitQualifiedName } from './names.js';

/** An `allowedTools` entry: `server__name` (exact) or `server__*` (everything of the server). */
export const ALLOWED_TOOL_PATTERN = '^[a-z0-9_-]+__(\\*|[^*\\s]+)$';
const ALLOWED_TOOL = new RegExp(ALLOWED_TOOL_PATTERN);

export function isAllowedToolEntry(entry: string): boolean {
  return ALLOWED_TOOL.test(entry);
}

/** One allow-list (a key's or a project's): null allows everything. */
class AllowList {
  private readonly exact = new Set<string>();
  private readonly wholeServers = new Set<string>();
  /** Servers with at least one entry: the servers this list lets a caller see. */
  private readonly servers = new Set<string>();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const parts = splitQualifiedName(entry);
      if (parts === null) continue;
      this.servers.add(parts.server);
      if (parts.name === '*') this.wholeServers.add(parts.server);
      else this.exact.add(entry);
    }
  }

  allows(qualified: string, server: string): boolean {
    // Exact code points: a look-alike of a listed name is another name.
    return this.wholeServers.has(server) || this.exact.has(qualified);
  }

  seesServer(server: string): boolean {
    return this.servers.has(server);
  }

  grantsWholeServer(server: string): boolean {
    return this.wholeServers.has(server);
  }
}

/**
 * What one caller may see and use at /mcp: its key's `allowedTools` and its project's, both
 * (an unset list restricts nothing). Tools and prompts are matched by their gateway name;
 * resources belong to a server as a whole, so they need `server__*` (or no list).
 */
export class ToolAccess {
  private readonly lists: readonly AllowList[];

  constructor(...lists: (readonly string[] | null)[]) {
    this.lists = lists.filter((list): list is readonly string[] => list !== null).map((list) => new AllowList(list));
  }

  static readonly everything = new ToolAccess();

  /** May the caller see and call this tool (or prompt) of `server`, named `qualified` at /mcp? */
  allows(server: string, qualified: string): boolean {
    return this.lists.every((list) => list.allows(qualified, server));
  }

  /** May the caller know that `server` exists (some of its tools are allowed to it)? */
  seesServer(server: string): boolean {
    return this.lists.every((list) => list.seesServer(server));
  }

  /** May the caller read the server's resources (the whole server is allowed to it)? */
  seesResourcesOf(server: string): boolean {
    return this.lists.every((list) => list.grantsWholeServer(server));
  }
}
