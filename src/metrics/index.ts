export { GatewayMetrics } from './gateway-metrics.js';
export type { MetricSources, RequestObservation, UpstreamObservation } from './gateway-metrics.js';
export { Counter, Gauge, Histogram, LabelledGauge, Registry, mergeRenderings, PROMETHEUS_CONTENT_TYPE } from './registry.js';
export type { Labels } from './registry.js';
export { RoutingMetrics } from './routing-metrics.js';
export { McpMetrics } from './mcp-metrics.js';
export { CacheMetrics } from './cache-metrics.js';
