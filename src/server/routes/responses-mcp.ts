import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CheckedCall } from '../../calls/index.js';
import { GatewayError } from '../../errors/index.js';
import { FinishedItemEvents, mcpCallItem, mcpListToolsItem, responseSkeleton, toolLoopResponse, type ResponsesDecodedCall } from '../../formats/index.js';
import { runChatToolLoop, splitQualifiedName, ToolLoopError, type ChatToolStep, type LoopTool, type ToolSource } from '../../mcp/index.js';
import type { JsonObject } from '../../model-api/index.js';
import type { GatewayContext } from '../context.js';
import { translation } from './format-call.js';
import { connectionGoneSignal, recordDroppedFields, sendLoggedJson } from './model-call.js';
import { openEventStream } from './stream-relay.js';

/**
 * A Responses request with `mcp` tools naming servers of the gateway (docs/mcp.md): the
 * gateway runs the tool loop itself, for every model, through the request's one checked
 * call: each round is a chat call of the model, each tool call goes to the gateway's server
 * within the key's allow-lists, and both are listed in the request's record. The answer
 * holds the API's own `mcp_list_tools` and `mcp_call` items before the model's last answer;
 * streamed, each item's events go out as soon as it is known.
 */

/** Model calls a tool loop makes at most; one more tool request ends the request with an error. */
export const MAX_TOOL_ROUNDS = 10;

/** Refuses a key that may call models but not use the gateway's MCP tools. */
export function checkMcpScope(request: FastifyRequest, decoded: ResponsesDecodedCall): void {
  const { principal } = request;
  if (principal.kind === 'key' && !principal.scopes.has('mcp:use')) {
    throw new GatewayError('insufficient_scope', `${decoded.mcp[0]!.param} uses an MCP server of the gateway, which needs an API key with the scope mcp:use.`, {
      param: `${decoded.mcp[0]!.param}.server_label`,
    });
  }
}

/** The gateway error of a loop that stopped without an answer, naming the servers at fault. */
function loopFailure(error: ToolLoopError): GatewayError {
  if (error.failure instanceof GatewayError) return error.failure;
  if (error.stop === 'max_rounds') {
    return new GatewayError('provider_error', `The model still asked for MCP tools after ${MAX_TOOL_ROUNDS} rounds; the gateway stopped the loop.`, { logDetail: { stop: 'max_rounds' } });
  }
  return new GatewayError('mcp_server_unavailable', `${error.message} Retry later, or leave the servers' mcp tools out.`, { logDetail: { mcp_servers: error.servers } });
}

/**
 * The tool source of the request's `mcp` tools: the servers they name (an unknown one refused,
 * naming its tool), the tools they allow, each call in the request's record. A server that
 * answered a call with an error tells the model (as the call's error); one that cannot be
 * reached stops the request, naming it.
 */
async function requestTools(request: FastifyRequest, context: GatewayContext, decoded: ResponsesDecodedCall): Promise<ToolSource> {
  const servers = [...new Set(decoded.mcp.map((tool) => tool.serverLabel))];
  const allowedTools = decoded.mcp.flatMap((tool) => (tool.allowedTools === null ? [`${tool.serverLabel}__*`] : tool.allowedTools.map((name) => `${tool.serverLabel}__${name}`)));
  const paramOf = (server: string) => `${decoded.mcp.find((tool) => tool.serverLabel === server)!.param}.server_label`;
  const source = await context.mcp.toolSource(request.principal, { servers, allowedTools, param: paramOf, onCallEnded: (ended) => request.call.toolCalled(ended), request: { id: request.id, guarded: (verdicts) => request.call.guarded(verdicts) } });
  return {
    list: (signal) => source.list(signal),
    call: async (name, args, signal) => {
      try {
        return await source.call(name, args, signal);
      } catch (error) {
        if (error instanceof GatewayError && error.code === 'mcp_server_error') return { content: [{ type: 'text', text: error.message }], isError: true };
        throw error;
      }
    },
  };
}

/** The `mcp_list_tools` items of the listed tools: one per server named, its tools by their names there. */
function listItems(decoded: ResponsesDecodedCall, tools: readonly LoopTool[]): JsonObject[] {
  return [...new Set(decoded.mcp.map((tool) => tool.serverLabel))].map((server) =>
    mcpListToolsItem(
      server,
      tools.flatMap((tool) => {
        const parts = splitQualifiedName(tool.name);
        return parts?.server === server ? [{ ...tool, name: parts.name }] : [];
      }),
    ),
  );
}

function callItem(step: ChatToolStep): JsonObject | null {
  const parts = splitQualifiedName(step.call.name);
  if (parts === null) return null;
  return mcpCallItem({ serverLabel: parts.server, name: parts.name, arguments: step.call.arguments, text: step.output.text, isError: step.output.isError });
}

/** The answer of a Responses request whose `mcp` tools run in the gateway, once the request is admitted. */
export function mcpToolLoopAnswer(request: FastifyRequest, reply: FastifyReply, context: GatewayContext, call: CheckedCall<'chat'>, decoded: ResponsesDecodedCall): () => Promise<FastifyReply> {
  checkMcpScope(request, decoded);
  const { extensions, dropped } = translation(context, call, decoded);
  return async () => {
    recordDroppedFields(request, reply, dropped);
    const signal = connectionGoneSignal(reply);
    const tools = await requestTools(request, context, decoded);
    const skeleton = responseSkeleton(decoded.turn.body, decoded.identity);
    const loopItems: JsonObject[] = [];
    // Streamed: the events of each item as it is known; the stream opens with the tool lists.
    const events = decoded.stream ? new FinishedItemEvents() : null;
    const send = (item: JsonObject) => {
      loopItems.push(item);
      if (events === null) return;
      if (!reply.sent) {
        openEventStream(reply, request.call);
        reply.raw.write(events.opening(skeleton));
      }
      reply.raw.write(events.item(item));
    };
    try {
      const result = await runChatToolLoop({
        body: decoded.body,
        tools,
        complete: async (body, _round, roundSignal) => {
          const providerCall = { body, sourceJson: undefined, extensions, signal: roundSignal, requestId: request.id };
          const answered = await call.invoke((chat, attempt) => chat.complete({ ...providerCall, ...attempt }), roundSignal);
          return { completion: answered.completion, usage: answered.usage };
        },
        maxRounds: MAX_TOOL_ROUNDS,
        signal,
        serverOf: (name) => splitQualifiedName(name)?.server ?? null,
        onListed: (listed) => listItems(decoded, listed).forEach(send),
        onStep: (step) => {
          const item = callItem(step);
          if (item !== null) send(item);
        },
      });
      const { response, answerItems } = toolLoopResponse(skeleton, loopItems, result, decoded.tools);
      await decoded.turn.keep(response);
      if (events === null) return sendLoggedJson(request, reply, response);
      request.call.answered({ payload: response });
      let frames = answerItems.map((item) => events.item(item)).join('');
      frames += events.closing(response);
      reply.raw.end(frames);
      return reply;
    } catch (caught) {
      const error = caught instanceof ToolLoopError ? loopFailure(caught) : caught;
      // Before the stream opened, the error is the request's answer (docs/errors.md).
      if (events === null || !reply.sent) throw error;
      request.call.failed(error);
      const message = error instanceof GatewayError ? error.message : 'The tool loop failed.';
      const failed = { ...skeleton, status: 'failed', error: { code: error instanceof GatewayError ? error.code : 'server_error', message }, output: loopItems };
      request.call.answered({ payload: failed });
      reply.raw.end(events.closing(failed));
      return reply;
    }
  };
}
