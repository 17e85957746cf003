import { GatewayError } from '../errors/index.js';
import { describeIssues, validateGraph, type GraphEnvironment, type ValidationResult } from './graph/validate.js';
import type { AgentRow, AgentStore, AgentVersionRow } from './store/agent-store.js';
import { parseSafeJson } from './values.js';

function invalidGraph(result: ValidationResult & { ok: false }): GatewayError {
  return new GatewayError('invalid_agent_graph', `The agent graph has ${result.issues.length} problem(s): ${describeIssues(result.issues)}`, {
    param: 'graph',
    logDetail: { issues: result.issues },
  });
}

/**
 * The authoring order (docs/agents.md): validate, save (every save is a numbered draft), test
 * (AgentRunner, on a draft), publish (an immutable version; publishing again adds one).
 * Nothing invalid is ever saved or published.
 */
export class AgentAuthoring {
  constructor(
    private readonly store: AgentStore,
    private readonly environment: GraphEnvironment,
  ) {}

  validate(graph: unknown): ValidationResult {
    return validateGraph(graph, this.environment);
  }

  async save(slug: string, graph: unknown, projectId: string | undefined): Promise<{ agent: AgentRow; draft: number }> {
    const result = this.validate(graph);
    if (!result.ok) throw invalidGraph(result);
    return this.store.saveDraft({ slug, projectId, name: result.graph.name, graph: result.graph.source });
  }

  /** Publishes a draft (the newest by default), validated again against today's catalog and allowlist. */
  async publish(slug: string, draftVersion: number | undefined): Promise<{ agent: AgentRow; version: AgentVersionRow }> {
    const agent = await this.store.getBySlug(slug);
    const draft = await this.store.getDraft(agent, draftVersion ?? agent.latest_draft);
    const result = this.validate(parseSafeJson(draft.graph));
    if (!result.ok) throw invalidGraph(result);
    return { agent, version: await this.store.publish(agent, draft.version) };
  }
}
