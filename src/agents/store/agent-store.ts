import type { Kysely, Selectable } from 'kysely';
import { GatewayError } from '../../errors/index.js';
import type { AgentDraftsTable, AgentsTable, AgentVersionsTable, Database } from '../../storage/index.js';
import type { SafeObject } from '../values.js';
import { newId } from './ids.js';

export type AgentRow = Selectable<AgentsTable>;
export type AgentDraftRow = Selectable<AgentDraftsTable>;
export type AgentVersionRow = Selectable<AgentVersionsTable>;

export const SLUG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

export interface SaveDraft {
  slug: string;
  /** Project of a new agent; an existing agent keeps its project (a different one is a conflict). */
  projectId: string | undefined;
  name: string;
  graph: SafeObject;
}

/** Agents, their numbered drafts, their immutable published versions, and grants. */
export class AgentStore {
  constructor(private readonly db: Kysely<Database>) {}

  async findBySlug(slug: string): Promise<AgentRow | undefined> {
    return this.db.selectFrom('agents').selectAll().where('slug', '=', slug).executeTakeFirst();
  }

  async getBySlug(slug: string): Promise<AgentRow> {
    const agent = await this.findBySlug(slug);
    if (agent === undefined) throw new GatewayError('agent_not_found', `There is no agent "${slug}". List agents with GET /admin/v1/agents.`);
    return agent;
  }

  async list(): Promise<AgentRow[]> {
    return this.db.selectFrom('agents').selectAll().orderBy('project_id').orderBy('slug').execute();
  }

  /** Saves the graph as the next draft, creating the agent on its first save. */
  async saveDraft(input: SaveDraft): Promise<{ agent: AgentRow; draft: number }> {
    const now = Date.now();
    const graph = JSON.stringify(input.graph);
    return this.db.transaction().execute(async (trx) => {
      let agent = await trx.selectFrom('agents').selectAll().where('slug', '=', input.slug).executeTakeFirst();
      if (agent === undefined) {
        const projectId = input.projectId ?? 'default';
        const project = await trx.selectFrom('projects').select('id').where('id', '=', projectId).executeTakeFirst();
        if (project === undefined) throw new GatewayError('invalid_body', `There is no project "${projectId}"; create it first.`, { param: 'project' });
        const row: AgentRow = { id: newId('agt'), project_id: projectId, slug: input.slug, name: input.name, latest_draft: 0, published_version: null, created_at: now, updated_at: now };
        const inserted = await trx.insertInto('agents').values(row).onConflict((conflict) => conflict.column('slug').doNothing()).executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) throw new GatewayError('conflict', `The agent "${input.slug}" was created concurrently; save again.`);
        agent = row;
      } else if (input.projectId !== undefined && input.projectId !== agent.project_id) {
        throw new GatewayError('conflict', `The agent "${input.slug}" belongs to project "${agent.project_id}", not "${input.projectId}".`, { retryable: false });
      }
      const draft = agent.latest_draft + 1;
      // The guard on latest_draft makes a concurrent save of the same agent fail instead of reusing a number.
      const updated = await trx
        .updateTable('agents')
        .set({ latest_draft: draft, name: input.name, updated_at: now })
        .where('id', '=', agent.id)
        .where('latest_draft', '=', agent.latest_draft)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) throw new GatewayError('conflict', `The agent "${input.slug}" was saved concurrently; save again.`);
      await trx.insertInto('agent_drafts').values({ agent_id: agent.id, version: draft, graph, created_at: now }).execute();
      return { agent: { ...agent, latest_draft: draft, name: input.name, updated_at: now }, draft };
    });
  }

  async getDraft(agent: AgentRow, version: number = agent.latest_draft): Promise<AgentDraftRow> {
    const draft = await this.db.selectFrom('agent_drafts').selectAll().where('agent_id', '=', agent.id).where('version', '=', version).executeTakeFirst();
    if (draft === undefined) throw new GatewayError('not_found', `The agent "${agent.slug}" has no draft ${version}.`);
    return draft;
  }

  /** Publishes a draft as a new immutable version and serves it at the slug. */
  async publish(agent: AgentRow, draftVersion: number): Promise<AgentVersionRow> {
    const draft = await this.getDraft(agent, draftVersion);
    const now = Date.now();
    return this.db.transaction().execute(async (trx) => {
      const current = await trx.selectFrom('agents').select('published_version').where('id', '=', agent.id).executeTakeFirstOrThrow();
      // Versions only grow through here, so the published one is the newest; the guarded update serialises publishers.
      const version = (current.published_version ?? 0) + 1;
      const updated = await trx
        .updateTable('agents')
        .set({ published_version: version, updated_at: now })
        .where('id', '=', agent.id)
        .where((eb) => (current.published_version === null ? eb('published_version', 'is', null) : eb('published_version', '=', current.published_version)))
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) throw new GatewayError('conflict', `The agent "${agent.slug}" was published concurrently; publish again.`);
      const row: AgentVersionRow = { agent_id: agent.id, version, draft_version: draft.version, graph: draft.graph, published_at: now };
      await trx.insertInto('agent_versions').values(row).execute();
      return row;
    });
  }

  async getVersion(agent: AgentRow, version: number): Promise<AgentVersionRow> {
    const row = await this.db.selectFrom('agent_versions').selectAll().where('agent_id', '=', agent.id).where('version', '=', version).executeTakeFirst();
    if (row === undefined) throw new GatewayError('not_found', `The agent "${agent.slug}" has no published version ${version}.`);
    return row;
  }

  async listVersions(agent: AgentRow): Promise<Omit<AgentVersionRow, 'graph'>[]> {
    return this.db
      .selectFrom('agent_versions')
      .select(['agent_id', 'version', 'draft_version', 'published_at'])
      .where('agent_id', '=', agent.id)
      .orderBy('version', 'desc')
      .execute();
  }

  async addGrant(agent: AgentRow, keyId: string): Promise<void> {
    await this.db
      .insertInto('agent_grants')
      .values({ agent_id: agent.id, key_id: keyId, created_at: Date.now() })
      .onConflict((conflict) => conflict.columns(['agent_id', 'key_id']).doNothing())
      .execute();
  }

  async removeGrant(agent: AgentRow, keyId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('agent_grants').where('agent_id', '=', agent.id).where('key_id', '=', keyId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async listGrants(agent: AgentRow): Promise<{ key_id: string; created_at: number }[]> {
    return this.db.selectFrom('agent_grants').select(['key_id', 'created_at']).where('agent_id', '=', agent.id).orderBy('created_at').execute();
  }

  async hasGrant(agentId: string, keyId: string): Promise<boolean> {
    const row = await this.db.selectFrom('agent_grants').select('key_id').where('agent_id', '=', agentId).where('key_id', '=', keyId).executeTakeFirst();
    return row !== undefined;
  }
}
