import type { JsonObject, TokenUsage } from '../../model-api/index.js';
import { eventFrame } from './frames.js';
import { newResponsesId } from './ids.js';
import type { ToolNames } from './request-decoder.js';
import { finishedResponse, outputOfCompletion, reasoningTokensOf, responsesUsage } from './response-encoder.js';

/**
 * The Responses API's own items of a tool loop the gateway ran for `mcp` tools: one
 * `mcp_list_tools` per server (the tools offered, by their names on the server), one `mcp_call`
 * per tool call (its arguments, and its output or error); and the events that stream a finished
 * item, in the order the official SDK's stream helper applies them.
 */

/** A tool of a server, as an `mcp_list_tools` item lists it. */
export interface ListedMcpTool {
  name: string;
  description: string | undefined;
  inputSchema: Record<string, unknown>;
}

export function mcpListToolsItem(serverLabel: string, tools: readonly ListedMcpTool[]): JsonObject {
  return {
    id: newResponsesId('mcpl'),
    type: 'mcp_list_tools',
    server_label: serverLabel,
    tools: tools.map((tool) => ({ name: tool.name, description: tool.description ?? null, input_schema: tool.inputSchema, annotations: null })),
    error: null,
  };
}

/** One tool call the gateway ran: its output, or (the tool said it failed) its error. */
export function mcpCallItem(call: { serverLabel: string; name: string; arguments: string; text: string; isError: boolean }): JsonObject {
  return {
    id: newResponsesId('mcp'),
    type: 'mcp_call',
    status: call.isError ? 'failed' : 'completed',
    server_label: call.serverLabel,
    name: call.name,
    arguments: call.arguments,
    output: call.isError ? null : call.text,
    error: call.isError ? call.text : null,
    approval_request_id: null,
  };
}

/**
 * The finished response of a tool loop: the `mcp_list_tools` and `mcp_call` items of the loop
 * (`loopItems`, in order), then the output of the model's last answer; the usage of every round.
 */
export function toolLoopResponse(
  skeleton: JsonObject,
  loopItems: readonly JsonObject[],
  last: { completion: JsonObject; usage: TokenUsage | null },
  tools: ToolNames,
): { response: JsonObject; answerItems: JsonObject[] } {
  const { output, finishReason } = outputOfCompletion(last.completion, tools);
  const usage = last.usage === null ? null : responsesUsage(last.usage, reasoningTokensOf(last.completion));
  return { response: finishedResponse(skeleton, [...loopItems, ...output], usage, finishReason), answerItems: output };
}

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The events of a response whose items are each known whole when sent (a tool loop's answer):
 * `response.created` and `.in_progress`, then per item `response.output_item.added`, its own
 * events and `response.output_item.done`, then `response.completed` (or `.incomplete`, `.failed`).
 */
export class FinishedItemEvents {
  private sequence = 0;
  private outputIndex = 0;

  opening(skeleton: JsonObject): string {
    return this.frame('response.created', { response: skeleton }) + this.frame('response.in_progress', { response: skeleton });
  }

  /** Every event of one finished item, at the next output index. */
  item(item: JsonObject): string {
    const outputIndex = this.outputIndex;
    this.outputIndex += 1;
    const where = { item_id: item.id as string, output_index: outputIndex };
    let frames = this.frame('response.output_item.added', { item: announced(item), output_index: outputIndex });
    switch (item.type) {
      case 'mcp_list_tools':
        frames += this.frame('response.mcp_list_tools.in_progress', where) + this.frame('response.mcp_list_tools.completed', where);
        break;
      case 'mcp_call':
        frames += this.frame('response.mcp_call.in_progress', where);
        frames += this.frame('response.mcp_call_arguments.delta', { ...where, delta: item.arguments as string });
        frames += this.frame('response.mcp_call_arguments.done', { ...where, arguments: item.arguments as string });
        frames += this.frame(item.status === 'failed' ? 'response.mcp_call.failed' : 'response.mcp_call.completed', where);
        break;
      case 'function_call':
        frames += this.frame('response.function_call_arguments.delta', { ...where, delta: item.arguments as string });
        frames += this.frame('response.function_call_arguments.done', { ...where, arguments: item.arguments as string });
        break;
      case 'custom_tool_call':
        frames += this.frame('response.custom_tool_call_input.delta', { ...where, delta: item.input as string });
        frames += this.frame('response.custom_tool_call_input.done', { ...where, input: item.input as string });
        break;
      case 'message':
        frames += this.messageParts(item, where);
        break;
      case 'reasoning':
        frames += this.summaryParts(item, where);
        break;
      default:
        break;
    }
    return frames + this.frame('response.output_item.done', { item, output_index: outputIndex });
  }

  /** The last event: the finished response, by its status. */
  closing(response: JsonObject): string {
    const type = response.status === 'failed' ? 'response.failed' : response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    return this.frame(type, { response });
  }

  private messageParts(item: JsonObject, where: { item_id: string; output_index: number }): string {
    const parts = Array.isArray(item.content) ? item.content.filter(isRecord) : [];
    let frames = '';
    for (const [contentIndex, part] of parts.entries()) {
      const at = { ...where, content_index: contentIndex };
      if (part.type === 'refusal') {
        frames += this.frame('response.content_part.added', { ...at, part: { type: 'refusal', refusal: '' } });
        frames += this.frame('response.refusal.delta', { ...at, delta: part.refusal as string });
        frames += this.frame('response.refusal.done', { ...at, refusal: part.refusal as string });
      } else {
        frames += this.frame('response.content_part.added', { ...at, part: { ...part, text: '' } });
        frames += this.frame('response.output_text.delta', { ...at, delta: part.text as string, logprobs: [] });
        frames += this.frame('response.output_text.done', { ...at, text: part.text as string, logprobs: [] });
      }
      frames += this.frame('response.content_part.done', { ...at, part });
    }
    return frames;
  }

  private summaryParts(item: JsonObject, where: { item_id: string; output_index: number }): string {
    const summary = Array.isArray(item.summary) ? item.summary.filter(isRecord) : [];
    let frames = '';
    for (const [summaryIndex, part] of summary.entries()) {
      const at = { ...where, summary_index: summaryIndex };
      frames += this.frame('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
      frames += this.frame('response.reasoning_summary_text.delta', { ...at, delta: part.text as string });
      frames += this.frame('response.reasoning_summary_text.done', { ...at, text: part.text as string });
      frames += this.frame('response.reasoning_summary_part.done', { ...at, part });
    }
    return frames;
  }

  private frame(type: string, members: JsonObject): string {
    const data = JSON.stringify({ type, ...members, sequence_number: this.sequence });
    this.sequence += 1;
    return eventFrame(type, data);
  }
}

/** An item as `response.output_item.added` announces it: in progress, its content to follow. */
function announced(item: JsonObject): JsonObject {
  switch (item.type) {
    case 'message':
      return { ...item, status: 'in_progress', content: [] };
    case 'reasoning':
      return { ...item, summary: [] };
    case 'mcp_list_tools':
      return { ...item, tools: [] };
    case 'mcp_call':
      return { ...item, status: 'in_progress', arguments: '', output: null, error: null };
    case 'function_call':
      return { ...item, status: 'in_progress', arguments: '' };
    case 'custom_tool_call':
      return { ...item, status: 'in_progress', input: '' };
    default:
      return item;
  }
}
