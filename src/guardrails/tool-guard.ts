import { withTexts, type TextSlot } from './call-text.js';
import type { CallScope } from './call-guard.js';
import { runStage, type GuardedCaller, type GuardrailVerdict, type Guardrails } from './service.js';

/**
 * Guardrails on MCP tool calls (docs/guardrails.md#mcp-tool-calls): the input stage on the
 * call's arguments (every string in them, at any depth), the output stage on the tool's result
 * (its `text` content). A block throws `guardrail_blocked`; a mask sends masked arguments to the
 * tool, or hands the masked result on. The same for a call at /mcp and one made by a model
 * call's tool loop (src/mcp/service.ts makes both through here).
 */

type Json = Record<string, unknown>;

/** Every string of a JSON value, with its path (keys are not text a guardrail reads). */
function stringSlots(value: unknown, path: (string | number)[], slots: TextSlot[]): void {
  if (typeof value === 'string') slots.push({ path, text: value });
  else if (Array.isArray(value)) value.forEach((item, index) => stringSlots(item, [...path, index], slots));
  else if (typeof value === 'object' && value !== null) for (const [key, item] of Object.entries(value)) stringSlots(item, [...path, key], slots);
}

function resultSlots(result: Json): TextSlot[] {
  const slots: TextSlot[] = [];
  const content = result.content;
  if (Array.isArray(content)) {
    content.forEach((part, index) => {
      const item = part as Json;
      if (item?.type === 'text' && typeof item.text === 'string') slots.push({ path: ['content', index, 'text'], text: item.text });
    });
  }
  return slots;
}

export interface GuardedToolCall {
  caller: GuardedCaller;
  /** The tool's gateway name (`server__tool`). */
  tool: string;
  arguments: Json | undefined;
  requestId: string | null;
  signal?: AbortSignal | undefined;
  /** Told the verdicts of each stage (the record of the request that made the call). */
  record: (verdicts: readonly GuardrailVerdict[]) => void;
}

/** Makes the tool call `invoke` with the guardrails attached to its caller run on its arguments and result; without any, `invoke` as it is. */
export async function guardToolCall<R extends object>(guardrails: Guardrails | undefined, call: GuardedToolCall, invoke: (args: Json | undefined) => Promise<R>): Promise<R> {
  // Tools are attached by key, project or all traffic; a guardrail's models are catalog models.
  const attached = guardrails?.attached(call.caller, null) ?? null;
  if (attached === null) return invoke(call.arguments);
  const key = call.caller?.kind === 'key' ? call.caller : null;
  const scope: CallScope = { signal: call.signal, metadata: { requestId: call.requestId, keyId: key?.keyId ?? null, projectId: key?.projectId ?? null, model: null, capability: 'mcp', tool: call.tool } };
  let args = call.arguments;
  if (args !== undefined) {
    const slots: TextSlot[] = [];
    stringSlots(args, [], slots);
    const input = await runStage(attached, 'input', slots.map((slot) => slot.text), { ...scope, stage: 'input' });
    call.record(input.verdicts);
    if (input.blocked !== null) throw input.blocked;
    if (input.texts !== null) args = withTexts(args, slots, input.texts);
  }
  const result = await invoke(args);
  const slots = resultSlots(result as Json);
  const output = await runStage(attached, 'output', slots.map((slot) => slot.text), { ...scope, stage: 'output' });
  call.record(output.verdicts);
  if (output.blocked !== null) throw output.blocked;
  return output.texts === null ? result : (withTexts(result as Json, slots, output.texts) as R);
}
