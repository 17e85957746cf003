import { GatewayError } from '../errors/index.js';
import type { Principal } from '../keys/index.js';
import type { AgentRow, AgentStore } from './store/agent-store.js';

/** Who owns a conversation or asset: the key, or the anonymous caller of the migration window. */
export function ownerOf(principal: Principal): string {
  return principal.kind === 'key' ? `key:${principal.keyId}` : 'anonymous';
}

/**
 * A key may run an agent of its own project, or of another project through a grant. Keyless
 * callers of the migration window (requireKeys false) reach only the default project's agents.
 */
export async function assertAgentAccess(agent: AgentRow, principal: Principal, agents: AgentStore): Promise<void> {
  if (principal.kind === 'anonymous') {
    if (agent.project_id === 'default') return;
  } else if (principal.projectId === agent.project_id || (await agents.hasGrant(agent.id, principal.keyId))) {
    return;
  }
  throw new GatewayError(
    'agent_access_denied',
    `This API key may not run the agent "${agent.slug}": it belongs to another project. Use a key of that project, or ask an administrator for a grant.`,
  );
}
