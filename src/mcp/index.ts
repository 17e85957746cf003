export { McpGateway } from './service.js';
export { McpServerStore } from './server-store.js';
export type { McpGatewayOptions, McpHttpRequest } from './service.js';
export type { ServerSummary } from './server-set.js';
export type { ServerHealth } from './upstream-server.js';
export { ToolAccess, ALLOWED_TOOL_PATTERN, isAllowedToolEntry } from './tool-access.js';
export { qualifiedName, splitQualifiedName, NAME_SEPARATOR } from './names.js';
export { runToolLoop, toolResultText, ToolLoopError } from './tool-loop.js';
export type { LoopRound, LoopTool, LoopToolCall, MakeModelCall, ModelCallRequest, ModelTurn, ToolLoopOptions, ToolLoopResult, ToolLoopStop, ToolOutput, ToolResult, ToolSource } from './tool-loop.js';
