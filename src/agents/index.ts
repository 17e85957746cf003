/** The agents domain as the server sees it: services, access, the run response. Everything else is internal. */
export { createAgentServices } from './services.js';
export type { AgentServices, AgentServiceParts } from './services.js';
export { assertAgentAccess, ownerOf } from './access.js';
export { RunTracker } from './agent-runner.js';
export type { RunTarget } from './agent-runner.js';
export { SLUG_PATTERN } from './store/agent-store.js';
export { ConversationStore } from './store/conversation-store.js';
export type { AgentRow } from './store/agent-store.js';
export { withAssetReferences } from './media/payload.js';
export type { AgentRunResponse } from './run-response.js';
export type { GraphIssue } from './graph/types.js';
export { parseSafeJson } from './values.js';
export { agentGraphSchema } from './graph/node-schema.js';
export type { AgentGraphSchema, ConfigFieldSchema, NodeTypeSchema } from './graph/node-schema.js';
export type { TestTraceStep } from './run-response.js';
