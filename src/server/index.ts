export { startGateway, storageOptions, waitingForStorage } from './gateway.js';
export { standbyWhileWaiting } from './standby.js';
export type { RunningGateway } from './gateway.js';
export { createProcessLogger } from './process-logger.js';
export { DASHBOARD_PATH } from './routes/dashboard.js';
export { configReloadChange } from './audit-trail.js';
