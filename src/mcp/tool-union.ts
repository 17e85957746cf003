import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Prompt, Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { GatewayError } from '../errors/index.js';
import { qualifiedName, splitQualifiedName } from './names.js';
import type { ServerSet } from './server-set.js';
import type { ToolAccess } from './tool-access.js';
import { UpstreamFailure, type UpstreamServer } from './upstream-server.js';

/** A list of every server a caller may see, and the servers of it that did not answer. */
export interface UnionList<T> {
  items: T[];
  /** Servers the caller may see whose list is missing from `items` (decisions §12: never a silently shorter list). */
  unavailable: string[];
}

/** The one answer to a name the caller may not use and to one that does not exist. */
export function unknownName(kind: 'tool' | 'prompt', name: string): GatewayError {
  return new GatewayError('tool_not_found', `Unknown ${kind} "${name}". tools/list and prompts/list name what this key may use.`);
}

export function unknownResource(uri: string): GatewayError {
  return new GatewayError('tool_not_found', `Unknown resource "${uri}". resources/list names the resources this key may read.`);
}

/** Tools, prompts and resources of the servers, as one caller sees them: its allowed part of each, named by server. */
export class ToolUnion {
  /** Which server listed a resource URI (or template) last: where a read of it goes. */
  private readonly resourceOwners = new Map<string, string>();
  private templates: { server: string; template: UriTemplate }[] = [];

  constructor(private readonly servers: ServerSet) {}

  async listTools(access: ToolAccess, signal?: AbortSignal): Promise<UnionList<Tool>> {
    return this.union(
      (server) => access.seesServer(server),
      (server) => server.listTools(signal),
      (server, tool) => {
        const name = qualifiedName(server, tool.name);
        return access.allows(server, name) ? { ...tool, name } : undefined;
      },
    );
  }

  async listPrompts(access: ToolAccess, signal?: AbortSignal): Promise<UnionList<Prompt>> {
    return this.union(
      (server) => access.seesServer(server),
      (server) => server.listPrompts(signal),
      (server, prompt) => {
        const name = qualifiedName(server, prompt.name);
        return access.allows(server, name) ? { ...prompt, name } : undefined;
      },
    );
  }

  async listResources(access: ToolAccess, signal?: AbortSignal): Promise<UnionList<Resource>> {
    return this.union((server) => access.seesResourcesOf(server), (server) => server.listResources(signal), (server, resource) => {
      if (!this.resourceOwners.has(resource.uri)) this.resourceOwners.set(resource.uri, server);
      return resource;
    });
  }

  async listResourceTemplates(access: ToolAccess, signal?: AbortSignal): Promise<UnionList<ResourceTemplate>> {
    const found: { server: string; template: UriTemplate }[] = [];
    const list = await this.union((server) => access.seesResourcesOf(server), (server) => server.listResourceTemplates(signal), (server, template) => {
      found.push({ server, template: new UriTemplate(template.uriTemplate) });
      return template;
    });
    this.templates = [...found, ...this.templates.filter((known) => !found.some((item) => item.server === known.server))];
    return list;
  }

  server(name: string): UpstreamServer | undefined {
    return this.servers.get(name);
  }

  /** The server and upstream name of a tool the caller may call; the unknown-name answer otherwise. */
  toolTarget(access: ToolAccess, name: string): { server: UpstreamServer; name: string } {
    return this.target(access, 'tool', name);
  }

  /**
   * Calls a tool the caller may use and the server lists (its list is read again once for a
   * name it did not list last time): a name outside both gets the unknown-tool answer, so a
   * `server__*` entry never lets a made-up name through to the server.
   */
  async callTool(access: ToolAccess, name: string, args: Record<string, unknown> | undefined, signal?: AbortSignal, onprogress?: RequestOptions['onprogress']) {
    const target = this.toolTarget(access, name);
    if (!target.server.listed(target.name) && !(await target.server.listTools(signal)).some((tool) => tool.name === target.name)) throw unknownName('tool', name);
    return target.server.callTool(target.name, args, signal, onprogress);
  }

  async getPrompt(access: ToolAccess, name: string, args: Record<string, string> | undefined, signal?: AbortSignal) {
    const target = this.target(access, 'prompt', name);
    return target.server.getPrompt(target.name, args, signal);
  }

  /** Reads a resource from the server that listed it (or whose template matches it), if the caller may read that server's resources. */
  async readResource(access: ToolAccess, uri: string, signal?: AbortSignal) {
    let owner = this.ownerOf(uri);
    if (owner === undefined || !access.seesResourcesOf(owner)) {
      // Not listed yet (a link in a tool result): the caller's servers are asked once.
      await Promise.all([this.listResources(access, signal), this.listResourceTemplates(access, signal)]);
      owner = this.ownerOf(uri, access);
    }
    const server = owner === undefined ? undefined : this.servers.get(owner);
    if (server === undefined || owner === undefined || !access.seesResourcesOf(owner)) throw unknownResource(uri);
    return server.readResource(uri, signal);
  }

  private ownerOf(uri: string, access?: ToolAccess): string | undefined {
    const listed = this.resourceOwners.get(uri);
    if (listed !== undefined && (access === undefined || access.seesResourcesOf(listed))) return listed;
    return this.templates.find(({ server, template }) => (access === undefined || access.seesResourcesOf(server)) && template.match(uri) !== null)?.server;
  }

  private target(access: ToolAccess, kind: 'tool' | 'prompt', name: string): { server: UpstreamServer; name: string } {
    const parts = splitQualifiedName(name);
    const server = parts === null ? undefined : this.servers.get(parts.server);
    if (parts === null || server === undefined || !access.allows(parts.server, name)) throw unknownName(kind, name);
    return { server, name: parts.name };
  }

  private async union<T, U>(
    visible: (server: string) => boolean,
    list: (server: UpstreamServer) => Promise<T[]>,
    map: (server: string, item: T) => U | undefined,
  ): Promise<UnionList<U>> {
    const servers = this.servers.all().filter((server) => visible(server.name));
    const results = await Promise.allSettled(servers.map((server) => list(server)));
    const items: U[] = [];
    const unavailable: string[] = [];
    results.forEach((result, index) => {
      const server = servers[index]!.name;
      if (result.status === 'rejected') {
        if (!(result.reason instanceof UpstreamFailure) && !(result.reason instanceof Error && result.reason.name === 'AbortError')) throw result.reason;
        unavailable.push(server);
        return;
      }
      for (const item of result.value) {
        const mapped = map(server, item);
        if (mapped !== undefined) items.push(mapped);
      }
    });
    return { items, unavailable };
  }
}
