import { Counter, Histogram, LabelledGauge, type Labels, type Registry } from './registry.js';

const TOOL_CALL_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120] as const;

/**
 * The metrics of the MCP gateway (docs/mcp.md): tool calls per server, tool and outcome, their
 * duration, and whether each server answers. Labels are bounded: servers come from the
 * configuration, tools from what the servers listed (any other name is counted as `other`).
 */
export class McpMetrics {
  private readonly calls: Counter;
  private readonly duration: Histogram;
  private servers: () => readonly { name: string; up: boolean }[] = () => [];

  constructor(registry: Registry) {
    this.calls = registry.register(
      new Counter('modelgate_mcp_tool_calls_total', 'MCP tool calls by server, tool and outcome (ok, tool_error, or the error code).', ['server', 'tool', 'outcome']),
    );
    this.duration = registry.register(
      new Histogram('modelgate_mcp_tool_call_duration_seconds', 'Time an MCP tool call took, by server and tool.', ['server', 'tool'], TOOL_CALL_BUCKETS),
    );
    registry.register(
      new LabelledGauge('modelgate_mcp_server_up', '1 while the MCP server answers, 0 while it is unavailable, by server.', ['server'], () =>
        this.servers().map(({ name, up }): { labels: Labels; value: number } => ({ labels: { server: name }, value: up ? 1 : 0 })),
      ),
    );
  }

  toolCallEnded(server: string, tool: string, outcome: string, seconds: number): void {
    this.calls.inc({ server, tool, outcome });
    this.duration.observe({ server, tool }, seconds);
  }

  watchServers(read: () => readonly { name: string; up: boolean }[]): void {
    this.servers = read;
  }
}
