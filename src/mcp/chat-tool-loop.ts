import type { JsonObject, TokenUsage } from '../model-api/index.js';
import { runToolLoop, type LoopTool, type LoopToolCall, type ModelCallRequest, type ModelTurn, type ToolOutput, type ToolSource } from './tool-loop.js';

/**
 * The tool loop over the internal chat call (the shape every provider takes): the gateway's
 * MCP tools are offered as functions next to the caller's own, each round is one chat call, and
 * the tool calls and results of the earlier rounds go back to the model as an assistant message
 * with `tool_calls` and `tool` messages. A call of one of the caller's own functions ends the
 * loop: its answer goes to the caller, who runs that function.
 */

/** One chat call's answer as the loop reads it. */
export interface ChatRound {
  completion: JsonObject;
  usage: TokenUsage | null;
}

/** A tool call the loop ran, with what the model was given back. */
export interface ChatToolStep {
  round: number;
  call: LoopToolCall;
  output: ToolOutput;
}

export interface ChatToolLoopOptions {
  /** The chat request without the gateway's tools: messages, the caller's own function tools, sampling, … */
  body: JsonObject;
  tools: ToolSource;
  /** Makes one chat call (through the request's checked call). */
  complete(body: JsonObject, round: number, signal: AbortSignal): Promise<ChatRound>;
  maxRounds: number;
  signal: AbortSignal;
  serverOf: (toolName: string) => string | null;
  /** Told the tools once listed, before the first model call. */
  onListed?: (tools: readonly LoopTool[]) => void;
  /** Told of each tool call's result as the next round begins (the streamed answer's items). */
  onStep?: (step: ChatToolStep) => void;
}

export interface ChatToolLoopResult {
  /** The last chat answer: no tool of the gateway asked for. */
  completion: JsonObject;
  usage: TokenUsage | null;
  tools: readonly LoopTool[];
  steps: ChatToolStep[];
}

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The assistant message of a chat completion's first choice. */
function messageOf(completion: JsonObject): JsonObject {
  const choice = Array.isArray(completion.choices) && isRecord(completion.choices[0]) ? completion.choices[0] : {};
  return isRecord(choice.message) ? choice.message : { role: 'assistant', content: '' };
}

function toolCallsOf(message: JsonObject): LoopToolCall[] {
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isRecord) : [];
  return calls.map((call) => {
    const fn = isRecord(call.function) ? call.function : {};
    return { id: String(call.id ?? ''), name: String(fn.name ?? ''), arguments: typeof fn.arguments === 'string' ? fn.arguments : '' };
  });
}

/** A gateway tool as a chat function. */
export function chatFunctionOf(tool: LoopTool): JsonObject {
  return { type: 'function', function: { name: tool.name, ...(tool.description === undefined ? {} : { description: tool.description }), parameters: tool.inputSchema } };
}

/** Each earlier round as chat messages: the model's message with its tool calls, then one tool message per result. */
function historyMessages(history: ModelCallRequest<ChatRound>['history']): JsonObject[] {
  return history.flatMap(({ turn, outputs }) => [
    { ...messageOf(turn.output.completion), role: 'assistant' },
    ...outputs.map((output) => ({ role: 'tool', tool_call_id: output.callId, content: output.text })),
  ]);
}

function withoutCalls(round: ChatRound, calls: readonly LoopToolCall[]): ChatRound {
  if (calls.length === 0) return round;
  const ids = new Set(calls.map((call) => call.id));
  const choices = Array.isArray(round.completion.choices) ? round.completion.choices : [];
  const [first, ...rest] = choices;
  if (!isRecord(first)) return round;
  const message = messageOf(round.completion);
  const kept = (Array.isArray(message.tool_calls) ? message.tool_calls : []).filter((call: unknown) => !(isRecord(call) && ids.has(String(call.id))));
  return { ...round, completion: { ...round.completion, choices: [{ ...first, message: { ...message, tool_calls: kept } }, ...rest] } };
}

export async function runChatToolLoop(options: ChatToolLoopOptions): Promise<ChatToolLoopResult> {
  const steps: ChatToolStep[] = [];
  let offered: readonly LoopTool[] = [];
  const tools: ToolSource = {
    list: async (signal) => {
      const listed = await options.tools.list(signal);
      offered = listed.tools;
      if (listed.unavailable.length === 0) options.onListed?.(listed.tools);
      return listed;
    },
    call: (name, args, signal) => options.tools.call(name, args, signal),
  };
  const callerTools = Array.isArray(options.body.tools) ? options.body.tools : [];
  const baseMessages = Array.isArray(options.body.messages) ? options.body.messages : [];
  const model = async (request: ModelCallRequest<ChatRound>): Promise<ModelTurn<ChatRound>> => {
    // The results of the round before: the caller learns of them as the model does.
    const last = request.history.at(-1);
    if (last !== undefined) {
      for (const [index, output] of last.outputs.entries()) {
        const step = { round: request.round - 1, call: last.turn.toolCalls[index]!, output };
        steps.push(step);
        options.onStep?.(step);
      }
    }
    const body: JsonObject = {
      ...options.body,
      messages: [...baseMessages, ...historyMessages(request.history)],
      tools: [...callerTools, ...request.tools.map(chatFunctionOf)],
    };
    const round = await options.complete(body, request.round, request.signal);
    const calls = toolCallsOf(messageOf(round.completion));
    const gatewayCalls = calls.filter((call) => offered.some((tool) => tool.name === call.name));
    // A call of one of the caller's own functions (or a name nobody offered, when the caller has functions) is the caller's to answer.
    const callersTurn = callerTools.length > 0 && gatewayCalls.length < calls.length;
    if (!callersTurn) return { output: round, toolCalls: calls, usage: round.usage };
    // The gateway's calls of that turn are not run: the answer holds only the caller's.
    return { output: withoutCalls(round, gatewayCalls), toolCalls: [], usage: round.usage };
  };
  const result = await runToolLoop({ model, tools, maxRounds: options.maxRounds, signal: options.signal, serverOf: options.serverOf });
  return { completion: result.final.output.completion, usage: result.usage, tools: offered, steps };
}
