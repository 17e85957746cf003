/**
 * OpenAI's Responses API (`POST /v1/responses`) for the OpenAI fake, following the published
 * API reference and recorded streams: the `response` object (message items with
 * `output_text` parts, `function_call` items, `reasoning` items with `encrypted_content`),
 * usage with `input_tokens_details` / `output_tokens_details`, and the stream as
 * `event: <type>` / `data: {"type", …, "sequence_number"}` frames from `response.created` to
 * `response.completed`, without a `[DONE]` line. A `previous_response_id` it did not store is
 * OpenAI's 400 `previous_response_not_found`.
 */
import type { ServerResponse } from 'node:http';
import type { RecordedRequest } from './fake-server.js';
import type { ScriptedUsage } from '../providers/conformance.js';
import { agentTurn, responsesTurnView } from './agent-turns.js';

/** What the fake answers a Responses request with: text in pieces (`incomplete`: cut, and why), or one function call. */
type ScriptedResponse =
  | { kind: 'text'; deltas: string[]; usage: ScriptedUsage; incomplete?: 'max_output_tokens' | 'content_filter' }
  | { kind: 'function-call'; name: string; arguments: string; usage: ScriptedUsage; callId?: string; preface?: string };

export type ResponsesScript =
  | ScriptedResponse
  /** The script this function picks for each request (one fake serving many scripted conversations). */
  | { kind: 'per-request'; script: (request: RecordedRequest) => ResponsesScript };

/** A coding agent's turn (agent-turns.ts) as a response: text, or one function call. */
export const AGENT_RESPONSES_TURNS: ResponsesScript = {
  kind: 'per-request',
  script(request) {
    const turn = agentTurn(responsesTurnView(request.json));
    const usage = { promptTokens: 23, completionTokens: 9 };
    return turn.kind === 'text' ? { kind: 'text', deltas: [turn.text], usage } : { kind: 'function-call', name: turn.name, arguments: JSON.stringify(turn.arguments), usage };
  },
};

/** OpenAI answers with the dated snapshot of the model asked for. */
const snapshotOf = (model: unknown) => `${String(model)}-2024-07-18`;

/** The Responses endpoint's state: the responses it stored, for previous_response_id. */
export class FakeResponses {
  private readonly stored = new Set<string>();
  private counter = 0;

  answer(script: ResponsesScript, request: RecordedRequest, response: ServerResponse): void {
    if (script.kind === 'per-request') return this.answer(script.script(request), request, response);
    const body = request.json as Record<string, unknown>;
    const previous = body.previous_response_id;
    if (typeof previous === 'string' && !this.stored.has(previous)) {
      response.writeHead(400, { 'content-type': 'application/json', 'x-request-id': 'req_fake' });
      response.end(
        JSON.stringify({ error: { message: `Previous response with id '${previous}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' } }),
      );
      return;
    }
    this.counter += 1;
    const id = `resp_fake${String(this.counter).padStart(4, '0')}`;
    if (body.store !== false) this.stored.add(id);
    const output = outputOf(script, body, this.counter);
    if (body.stream === true) return streamResponse(response, body, id, output, script);
    response.writeHead(200, { 'content-type': 'application/json', 'openai-processing-ms': '12', 'x-request-id': 'req_fake' });
    response.end(JSON.stringify(responseObject(body, id, statusOf(script), output, wireUsage(script.usage), incompleteReason(script))));
  }
}

/** `incomplete` when the answer was cut, and why. */
function statusOf(script: ScriptedResponse): 'completed' | 'incomplete' {
  return script.kind === 'text' && script.incomplete !== undefined ? 'incomplete' : 'completed';
}

function wireUsage(usage: ScriptedUsage) {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

function incompleteReason(script: ScriptedResponse): string | null {
  return script.kind === 'text' ? (script.incomplete ?? null) : null;
}

function responseObject(body: Record<string, unknown>, id: string, status: string, output: unknown[], usage: unknown, incomplete: string | null = null) {
  return {
    id,
    object: 'response',
    created_at: 1_788_205_738,
    status,
    background: false,
    completed_at: status === 'completed' ? 1_788_205_739 : null,
    error: null,
    incomplete_details: incomplete === null ? null : { reason: incomplete },
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: null,
    model: snapshotOf(body.model),
    output,
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: null,
    reasoning: { effort: (body.reasoning as { effort?: unknown } | undefined)?.effort ?? null, summary: null },
    safety_identifier: null,
    service_tier: 'default',
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_logprobs: 0,
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage,
    user: null,
    metadata: body.metadata ?? {},
  };
}

type OutputItem = Record<string, unknown> & { type: string; id: string };

/** A reasoning item first when the request asked for reasoning (as reasoning models answer), then the script's item. */
function outputOf(script: ScriptedResponse, body: Record<string, unknown>, counter: number): OutputItem[] {
  const items: OutputItem[] = [];
  if (body.reasoning !== undefined) {
    const include = Array.isArray(body.include) ? body.include : [];
    items.push({
      id: `rs_fake${counter}`,
      type: 'reasoning',
      ...(include.includes('reasoning.encrypted_content') ? { encrypted_content: 'gAAAAABpPDIUph8czEXzDePCV2lJ27wm7TsbCvazrvHSn0yWitN7RGWq8sjrPtfEYNkSVR8GZzB59nmPMV9haW4' } : {}),
      summary: [{ type: 'summary_text', text: '**Answering briefly**' }],
    });
  }
  if (script.kind === 'function-call' && script.preface !== undefined) {
    items.push({ id: `msg_fake${counter}`, type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text: script.preface }], role: 'assistant' });
  }
  if (script.kind === 'function-call') {
    items.push({ id: `fc_fake${counter}`, type: 'function_call', status: 'completed', arguments: script.arguments, call_id: script.callId ?? `call_fake${counter}`, name: script.name });
  } else {
    items.push({ id: `msg_fake${counter}`, type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text: script.deltas.join('') }], role: 'assistant' });
  }
  return items;
}

function streamResponse(response: ServerResponse, body: Record<string, unknown>, id: string, output: OutputItem[], script: ScriptedResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': 'req_fake' });
  let sequence = 0;
  const send = (type: string, members: Record<string, unknown>) => {
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...members, sequence_number: sequence })}\n\n`);
    sequence += 1;
  };
  const started = responseObject(body, id, 'in_progress', [], null);
  send('response.created', { response: started });
  send('response.in_progress', { response: started });
  for (const [index, item] of output.entries()) {
    if (item.type === 'reasoning') {
      send('response.output_item.added', { item: { ...item, summary: [] }, output_index: index });
      send('response.output_item.done', { item, output_index: index });
    } else if (item.type === 'function_call') {
      send('response.output_item.added', { item: { ...item, status: 'in_progress', arguments: '' }, output_index: index });
      send('response.function_call_arguments.delta', { delta: item.arguments, item_id: item.id, obfuscation: 'H2d0mf8T42i5Ya', output_index: index });
      send('response.function_call_arguments.done', { arguments: item.arguments, item_id: item.id, output_index: index });
      send('response.output_item.done', { item, output_index: index });
    } else {
      const text = (item.content as { text: string }[])[0]!.text;
      const deltas = script.kind === 'text' ? script.deltas : [text];
      const where = { content_index: 0, item_id: item.id, output_index: index };
      send('response.output_item.added', { item: { ...item, status: 'in_progress', content: [] }, output_index: index });
      send('response.content_part.added', { ...where, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
      for (const delta of deltas) send('response.output_text.delta', { content_index: 0, delta, item_id: item.id, logprobs: [], obfuscation: 'dTh', output_index: index });
      send('response.output_text.done', { ...where, logprobs: [], text });
      send('response.content_part.done', { ...where, part: { type: 'output_text', annotations: [], logprobs: [], text } });
      send('response.output_item.done', { item, output_index: index });
    }
  }
  const status = statusOf(script);
  send(`response.${status}`, { response: responseObject(body, id, status, output, wireUsage(script.usage), incompleteReason(script)) });
  response.end();
}
