import type { RouteModule } from '../app.js';
import { adminAccountsRoutes } from './admin-accounts.js';
import { adminAgentsRoutes } from './admin-agents.js';
import { adminAuditRoutes } from './admin-audit.js';
import { adminCatalogRoutes } from './admin-catalog.js';
import { adminGuardrailsRoutes } from './admin-guardrails.js';
import { adminKeysRoutes } from './admin-keys.js';
import { adminLogsRoutes } from './admin-logs.js';
import { adminPlaygroundRoutes } from './admin-playground.js';
import { adminStatusRoutes } from './admin-status.js';
import { agentRunsRoutes } from './agent-runs.js';
import { audioRoutes } from './audio.js';
import { dashboardRoutes } from './dashboard.js';
import { chatRoutes } from './chat.js';
import { embeddingsRoutes } from './embeddings.js';
import { healthRoutes } from './health.js';
import { imagesRoutes } from './images.js';
import { messagesRoutes } from './messages.js';
import { mcpRoutes } from './mcp.js';
import { adminMcpRoutes } from './admin-mcp.js';
import { metricsRoutes } from './metrics.js';
import { responsesRoutes } from './responses.js';
import { responsesTransportsRoutes } from './responses-transports.js';
import { statusRoutes } from './status.js';
import { utilsRoutes } from './utils.js';
import { vettingRoutes } from './vetting.js';

/** Every route module of the gateway, in registration order. */
export const ROUTE_MODULES: readonly RouteModule[] = [statusRoutes, healthRoutes, adminAccountsRoutes, adminCatalogRoutes, adminGuardrailsRoutes, adminKeysRoutes, adminLogsRoutes, adminPlaygroundRoutes, adminStatusRoutes, metricsRoutes, utilsRoutes, vettingRoutes, chatRoutes, responsesRoutes, responsesTransportsRoutes, messagesRoutes, embeddingsRoutes, imagesRoutes, audioRoutes, adminAgentsRoutes, agentRunsRoutes, adminMcpRoutes, adminAuditRoutes, mcpRoutes, dashboardRoutes];
