/**
 * What a vendor fake answers a coding agent, decided from the request itself so that one fake
 * serves many agent runs at once. The test's prompt carries a marker:
 * - `mg-plain-<id>`: the answer is `PLAIN <id>`;
 * - `mg-shell-<id>`: the model asks for the agent's shell tool to run `echo mg-shell-<id> | tr a-z A-Z`;
 *   once the conversation holds a tool result with `MG-SHELL-<ID>` (the agent ran it and sent
 *   the output back), the answer is `SHELL SAID MG-SHELL-<ID>`.
 * Any other request (an agent's title or summary call) gets a short text.
 * Each fake turns the decision into its vendor's own wire format; the views below read the
 * vendor's request format into the few things the decision needs.
 */

/** Request JSON as received: read loosely, as the vendors' parsers do. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

export interface TurnTool {
  name: string;
  /** The tool's JSON schema for its arguments. */
  schema: Loose;
}

/** What a model call carries that the decision reads. */
export interface TurnView {
  /** Text the user wrote (every user message, oldest first). */
  userText: string;
  /** Text of every tool result in the conversation. */
  toolResults: string;
  tools: TurnTool[];
}

export type AgentTurn = { kind: 'text'; text: string } | { kind: 'tool-call'; name: string; arguments: Record<string, unknown> };

/** The shell tools of the agents under test, by the names they give them. */
const SHELL_TOOL = /^(bash|shell|shell_command|exec_command|local_shell|run_shell_command)$/i;

export const shellCommandFor = (marker: string) => `echo ${marker} | tr a-z A-Z`;

export function agentTurn(view: TurnView): AgentTurn {
  const plain = /mg-plain-([a-z0-9]+)/.exec(view.userText);
  if (plain !== null) return { kind: 'text', text: `PLAIN ${plain[1]}` };
  const shell = /mg-shell-[a-z0-9]+/.exec(view.userText);
  if (shell === null) return { kind: 'text', text: 'OK' };
  const printed = shell[0].toUpperCase();
  if (view.toolResults.includes(printed)) return { kind: 'text', text: `SHELL SAID ${printed}` };
  const tool = view.tools.find((candidate) => SHELL_TOOL.test(candidate.name));
  if (tool === undefined) return { kind: 'text', text: `NO SHELL TOOL among ${view.tools.map((candidate) => candidate.name).join(', ') || 'none'}` };
  return { kind: 'tool-call', name: tool.name, arguments: shellArguments(tool.schema, shellCommandFor(shell[0])) };
}

/** The arguments a shell tool takes, by its schema: `command` (a string, or argv) or `cmd`, and a description where required. */
function shellArguments(schema: Loose, command: string): Record<string, unknown> {
  const properties: Loose = schema?.properties ?? {};
  const required: string[] = Array.isArray(schema?.required) ? schema.required : [];
  const args: Record<string, unknown> = {};
  if (properties.command !== undefined) {
    args.command = String(properties.command.type).toLowerCase() === 'array' ? ['bash', '-lc', command] : command;
  } else {
    args.cmd = command;
  }
  if (properties.description !== undefined || required.includes('description')) args.description = 'Print the marker in capitals';
  return args;
}

/** Text of a content value: a string, or the text of its parts/blocks (nested tool-result content included). */
function textOf(content: Loose): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? '' : JSON.stringify(content);
  return content.map((part: Loose) => (typeof part === 'string' ? part : (part?.text ?? textOf(part?.content) ?? ''))).join('\n');
}

/** Anthropic Messages: user text blocks, tool_result blocks, tools[].input_schema. */
export function messagesTurnView(body: Loose): TurnView {
  const messages: Loose[] = Array.isArray(body?.messages) ? body.messages : [];
  const blocks = (role: string) => messages.filter((message) => message.role === role).flatMap((message) => (typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content ?? [])));
  const userBlocks = blocks('user');
  return {
    userText: userBlocks.filter((block: Loose) => block.type === 'text').map((block: Loose) => block.text).join('\n'),
    toolResults: userBlocks.filter((block: Loose) => block.type === 'tool_result').map((block: Loose) => textOf(block.content)).join('\n'),
    tools: (body?.tools ?? []).filter((tool: Loose) => typeof tool.name === 'string').map((tool: Loose) => ({ name: tool.name, schema: tool.input_schema })),
  };
}

/** OpenAI chat completions: user messages, tool messages, tools[].function. */
export function chatTurnView(body: Loose): TurnView {
  const messages: Loose[] = Array.isArray(body?.messages) ? body.messages : [];
  return {
    userText: messages.filter((message) => message.role === 'user').map((message) => textOf(message.content)).join('\n'),
    toolResults: messages.filter((message) => message.role === 'tool').map((message) => textOf(message.content)).join('\n'),
    tools: (body?.tools ?? []).filter((tool: Loose) => tool.type === 'function').map((tool: Loose) => ({ name: tool.function.name, schema: tool.function.parameters })),
  };
}

/** OpenAI Responses: user message items, function_call_output items, function tools (and those inside namespace tools). */
export function responsesTurnView(body: Loose): TurnView {
  const input: Loose[] = typeof body?.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : (body?.input ?? []);
  const functions = (tools: Loose[]): TurnTool[] =>
    tools.flatMap((tool: Loose) => (tool.type === 'function' ? [{ name: tool.name, schema: tool.parameters }] : tool.type === 'namespace' ? functions(tool.tools ?? []) : []));
  return {
    userText: input.filter((item) => (item.type === 'message' || item.type === undefined) && item.role === 'user').map((item) => textOf(item.content)).join('\n'),
    toolResults: input.filter((item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output').map((item) => textOf(item.output)).join('\n'),
    tools: functions(body?.tools ?? []),
  };
}

/** Gemini generateContent: user text parts, functionResponse parts, functionDeclarations. */
export function geminiTurnView(body: Loose): TurnView {
  const contents: Loose[] = Array.isArray(body?.contents) ? body.contents : [];
  const parts = contents.filter((content) => content.role !== 'model').flatMap((content) => content.parts ?? []);
  return {
    userText: parts.filter((part: Loose) => typeof part.text === 'string').map((part: Loose) => part.text).join('\n'),
    toolResults: parts.filter((part: Loose) => part.functionResponse !== undefined).map((part: Loose) => JSON.stringify(part.functionResponse.response)).join('\n'),
    tools: (body?.tools ?? [])
      .flatMap((tool: Loose) => tool.functionDeclarations ?? [])
      .map((declaration: Loose) => ({ name: declaration.name, schema: declaration.parameters ?? declaration.parametersJsonSchema })),
  };
}
