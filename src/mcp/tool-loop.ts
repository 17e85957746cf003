import type { TokenUsage } from '../model-api/index.js';

/**
 * The tool loop of a model call that uses gateway MCP tools (a Responses `mcp` tool, an agent
 * `llm` node's `tools`): call the model with the tools, run the tool calls it asks for, give it
 * their results, until it answers without asking for one. Pure: the model call and the tools are
 * handed in, so the loop knows no format, no vendor and no HTTP (docs/mcp.md, decisions/0022).
 */

/** A tool as the model is offered it: its gateway name (`server__tool`) and JSON Schema. */
export interface LoopTool {
  name: string;
  description: string | undefined;
  inputSchema: Record<string, unknown>;
}

/** A tool call the model asked for; `arguments` as the model wrote them (JSON text). */
export interface LoopToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One model call's answer: what it said, the tool calls it asks for (none: it is done), its usage. */
export interface ModelTurn<Output = unknown> {
  output: Output;
  toolCalls: readonly LoopToolCall[];
  usage: TokenUsage | null;
}

/** What a tool call gave back, as the model will read it: text, never rendered as a template. */
export interface ToolOutput {
  callId: string;
  name: string;
  /** The result's content as text (text parts joined; other parts as their JSON). */
  text: string;
  /** The tool reported an error (`isError`), or the call failed and `onToolFailure` is `tell_model`. */
  isError: boolean;
}

/** What the model is given on each round: the tools, and every earlier turn with its tool outputs. */
export interface ModelCallRequest<Output> {
  round: number;
  tools: readonly LoopTool[];
  history: readonly { turn: ModelTurn<Output>; outputs: readonly ToolOutput[] }[];
  signal: AbortSignal;
}

/** Makes one model call (the caller's format and the gateway's call path live behind it). */
export type MakeModelCall<Output> = (request: ModelCallRequest<Output>) => Promise<ModelTurn<Output>>;

/** The result of one tool call: MCP's `content` and `isError`. */
export interface ToolResult {
  content: readonly unknown[];
  isError?: boolean;
  structuredContent?: unknown;
}

/** The tools of the gateway a loop may use (the caller's allow-lists applied), and how to call them. */
export interface ToolSource {
  /** The tools, and the servers that did not answer. */
  list(signal: AbortSignal): Promise<{ tools: readonly LoopTool[]; unavailable: readonly string[] }>;
  /** Throws when the call could not be made (an unknown tool, a server that did not answer). */
  call(name: string, args: Record<string, unknown> | undefined, signal: AbortSignal): Promise<ToolResult>;
}

/** One round as the request record keeps it: the model's usage, and each tool call it made. */
export interface LoopRound {
  round: number;
  usage: TokenUsage | null;
  toolCalls: { name: string; latencyMs: number; outcome: 'ok' | 'tool_error' | 'failed'; error?: string }[];
}

export type ToolLoopStop = 'servers_unavailable' | 'max_rounds' | 'tool_failed';

/** The loop stopped without an answer; `servers` names the MCP servers at fault, if any. */
export class ToolLoopError extends Error {
  override name = 'ToolLoopError';
  constructor(
    readonly stop: ToolLoopStop,
    message: string,
    readonly servers: readonly string[] = [],
    readonly rounds: readonly LoopRound[] = [],
    /** The failure of the tool call that stopped the loop (`tool_failed`). */
    readonly failure?: unknown,
  ) {
    super(message);
  }
}

export interface ToolLoopOptions<Output> {
  model: MakeModelCall<Output>;
  tools: ToolSource;
  /** Model calls at most; one more tool request is the `max_rounds` stop. */
  maxRounds: number;
  signal: AbortSignal;
  /**
   * A tool call that could not be made: `fail` stops the loop (the default: the caller learns
   * which server failed), `tell_model` gives the model the failure as an error output.
   */
  onToolFailure?: 'fail' | 'tell_model';
  /** The server a tool name belongs to, for messages (the gateway's `server__tool` split). */
  serverOf: (toolName: string) => string | null;
}

export interface ToolLoopResult<Output> {
  /** The model's last answer, which asks for no tool. */
  final: ModelTurn<Output>;
  rounds: LoopRound[];
  /** Usage of every model call, added up. */
  usage: TokenUsage | null;
}

/** MCP content as text for the model: text parts as they are; anything else (images, resources) as its JSON. */
export function toolResultText(result: ToolResult): string {
  return result.content
    .map((part) => {
      const item = part as { type?: unknown; text?: unknown };
      return item.type === 'text' && typeof item.text === 'string' ? item.text : JSON.stringify(part);
    })
    .join('\n');
}

function addUsage(total: TokenUsage | null, usage: TokenUsage | null): TokenUsage | null {
  if (usage === null) return total;
  if (total === null) return { ...usage };
  return {
    promptTokens: total.promptTokens + usage.promptTokens,
    completionTokens: total.completionTokens + usage.completionTokens,
    totalTokens: total.totalTokens + usage.totalTokens,
    cachedPromptTokens: total.cachedPromptTokens === null && usage.cachedPromptTokens === null ? null : (total.cachedPromptTokens ?? 0) + (usage.cachedPromptTokens ?? 0),
  };
}

function parseArguments(text: string): Record<string, unknown> | undefined | null {
  if (text.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Runs the loop. The tools are listed once, before the first model call: when a server the
 * caller may use does not answer, the loop stops naming it rather than call the model with
 * fewer tools than it was promised (a model without its tools makes answers up).
 */
export async function runToolLoop<Output>(options: ToolLoopOptions<Output>): Promise<ToolLoopResult<Output>> {
  const { signal } = options;
  const listed = await options.tools.list(signal);
  if (listed.unavailable.length > 0) {
    throw new ToolLoopError('servers_unavailable', `MCP servers unavailable: ${listed.unavailable.join(', ')}; the model was not called without their tools.`, listed.unavailable);
  }
  const history: { turn: ModelTurn<Output>; outputs: ToolOutput[] }[] = [];
  const rounds: LoopRound[] = [];
  let usage: TokenUsage | null = null;
  for (let round = 1; round <= options.maxRounds; round += 1) {
    const turn = await options.model({ round, tools: listed.tools, history, signal });
    usage = addUsage(usage, turn.usage);
    const record: LoopRound = { round, usage: turn.usage, toolCalls: [] };
    rounds.push(record);
    if (turn.toolCalls.length === 0) return { final: turn, rounds, usage };
    const outputs: ToolOutput[] = [];
    for (const call of turn.toolCalls) outputs.push(await runCall(options, call, listed.tools, record, rounds));
    history.push({ turn, outputs });
  }
  throw new ToolLoopError('max_rounds', `The model still asked for tools after ${options.maxRounds} rounds.`, [], rounds);
}

async function runCall<Output>(options: ToolLoopOptions<Output>, call: LoopToolCall, tools: readonly LoopTool[], record: LoopRound, rounds: LoopRound[]): Promise<ToolOutput> {
  const started = Date.now();
  const args = parseArguments(call.arguments);
  const failed = (message: string, stop: ToolLoopStop, failure: unknown): ToolOutput => {
    record.toolCalls.push({ name: call.name, latencyMs: Date.now() - started, outcome: 'failed', error: message });
    const server = options.serverOf(call.name);
    if ((options.onToolFailure ?? 'fail') === 'fail') throw new ToolLoopError(stop, message, server === null ? [] : [server], rounds, failure);
    return { callId: call.id, name: call.name, text: message, isError: true };
  };
  // The model's own mistakes (a tool it was not offered, arguments that are not an object): it is
  // told, whatever onToolFailure says, and may try again; nothing reaches a server.
  const mistake = !tools.some((tool) => tool.name === call.name) ? `There is no tool "${call.name}".` : args === null ? 'The arguments must be a JSON object.' : null;
  if (mistake !== null || args === null) {
    record.toolCalls.push({ name: call.name, latencyMs: 0, outcome: 'failed', error: mistake ?? 'invalid arguments' });
    return { callId: call.id, name: call.name, text: mistake ?? 'The arguments must be a JSON object.', isError: true };
  }
  try {
    const result = await options.tools.call(call.name, args, options.signal);
    const isError = result.isError === true;
    record.toolCalls.push({ name: call.name, latencyMs: Date.now() - started, outcome: isError ? 'tool_error' : 'ok' });
    return { callId: call.id, name: call.name, text: toolResultText(result), isError };
  } catch (error) {
    if (options.signal.aborted) throw error;
    return failed((error as Error).message, 'tool_failed', error);
  }
}
