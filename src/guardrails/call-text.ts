/**
 * Where the text of a model call is, for each provider capability: the texts of its input
 * body (messages, instructions, an embedding's input, a prompt) and of its answer, each with
 * its path so a masked text is put back in a copy of the value, never in the caller's own.
 * Media, tool definitions and ids are not text a guardrail reads.
 */

type Path = readonly (string | number)[];

export interface TextSlot {
  path: Path;
  text: string;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A content that is a string, or an array of parts whose text parts are of `types`. */
function contentSlots(content: unknown, path: Path, types: readonly string[], slots: TextSlot[]): void {
  if (typeof content === 'string') {
    slots.push({ path, text: content });
    return;
  }
  if (!Array.isArray(content)) return;
  content.forEach((part, index) => {
    if (isObject(part) && typeof part.text === 'string' && typeof part.type === 'string' && types.includes(part.type)) slots.push({ path: [...path, index, 'text'], text: part.text });
  });
}

/** Gemini's parts: each `{text}` part's text (a thought summary is text the model wrote too). */
function partsSlots(parts: unknown, path: Path, slots: TextSlot[]): void {
  if (!Array.isArray(parts)) return;
  parts.forEach((part, index) => {
    if (isObject(part) && typeof part.text === 'string') slots.push({ path: [...path, index, 'text'], text: part.text });
  });
}

function messagesSlots(messages: unknown, types: readonly string[], slots: TextSlot[]): void {
  if (!Array.isArray(messages)) return;
  messages.forEach((message, index) => {
    if (isObject(message)) contentSlots(message.content, ['messages', index, 'content'], types, slots);
  });
}

/** The texts of a call's input body, by the capability it is made through. */
export function inputSlots(capability: string, body: Json): TextSlot[] {
  const slots: TextSlot[] = [];
  switch (capability) {
    case 'chat':
      messagesSlots(body.messages, ['text'], slots);
      break;
    case 'messages':
      contentSlots(body.system, ['system'], ['text'], slots);
      messagesSlots(body.messages, ['text'], slots);
      break;
    case 'responses': {
      if (typeof body.instructions === 'string') slots.push({ path: ['instructions'], text: body.instructions });
      const input = body.input;
      if (typeof input === 'string') slots.push({ path: ['input'], text: input });
      else if (Array.isArray(input)) {
        input.forEach((item, index) => {
          if (isObject(item)) contentSlots(item.content, ['input', index, 'content'], ['input_text', 'output_text', 'text'], slots);
        });
      }
      break;
    }
    case 'embeddings': {
      const input = body.input;
      if (typeof input === 'string') slots.push({ path: ['input'], text: input });
      else if (Array.isArray(input)) input.forEach((item, index) => typeof item === 'string' && slots.push({ path: ['input', index], text: item }));
      break;
    }
    case 'images':
      if (typeof body.prompt === 'string') slots.push({ path: ['prompt'], text: body.prompt });
      break;
    case 'speech':
      if (typeof body.input === 'string') slots.push({ path: ['input'], text: body.input });
      break;
    case 'geminiApi': {
      partsSlots(isObject(body.systemInstruction) ? body.systemInstruction.parts : undefined, ['systemInstruction', 'parts'], slots);
      const contents = body.contents;
      if (Array.isArray(contents)) contents.forEach((content, index) => isObject(content) && partsSlots(content.parts, ['contents', index, 'parts'], slots));
      break;
    }
    default:
      break;
  }
  return slots;
}

/** The texts of a whole answer (the result's own value: a chat completion, a response, a message). */
export function outputSlots(capability: string, answer: Json): TextSlot[] {
  const slots: TextSlot[] = [];
  switch (capability) {
    case 'chat': {
      const choices = answer.choices;
      if (!Array.isArray(choices)) break;
      choices.forEach((choice, index) => {
        const message = isObject(choice) ? choice.message : undefined;
        if (isObject(message) && typeof message.content === 'string') slots.push({ path: ['choices', index, 'message', 'content'], text: message.content });
      });
      break;
    }
    case 'responses': {
      const output = answer.output;
      if (!Array.isArray(output)) break;
      output.forEach((item, index) => {
        if (isObject(item)) contentSlots(item.content, ['output', index, 'content'], ['output_text'], slots);
      });
      break;
    }
    case 'messages':
      contentSlots(answer.content, ['content'], ['text'], slots);
      break;
    case 'geminiApi': {
      const candidates = answer.candidates;
      if (Array.isArray(candidates)) candidates.forEach((candidate, index) => isObject(candidate) && isObject(candidate.content) && partsSlots(candidate.content.parts, ['candidates', index, 'content', 'parts'], slots));
      break;
    }
    default:
      break;
  }
  return slots;
}

/** A copy of `value` with the texts at the slots' paths replaced; the rest shared with the original, which is left as it was. */
export function withTexts<T extends Json>(value: T, slots: readonly TextSlot[], texts: readonly string[]): T {
  const copy = { ...value };
  const copied = new Set<unknown>([copy]);
  slots.forEach((slot, index) => {
    if (texts[index] === slot.text) return;
    let node: Json | unknown[] = copy;
    for (const key of slot.path.slice(0, -1)) {
      const child: unknown = (node as Record<string | number, unknown>)[key];
      let next = child as Json | unknown[];
      if (!copied.has(child)) {
        next = Array.isArray(child) ? [...(child as unknown[])] : { ...(child as Json) };
        copied.add(next);
        (node as Record<string | number, unknown>)[key] = next;
      }
      node = next;
    }
    (node as Record<string | number, unknown>)[slot.path.at(-1)!] = texts[index];
  });
  return copy;
}

/** The text a stream event adds to the answer, by capability (a chat chunk's delta, a Responses text delta, a Messages text delta); '' for none. */
export function deltaText(capability: string, event: { type: string }): string {
  switch (capability) {
    case 'chat': {
      if (event.type !== 'chunk-received') return '';
      const choices = (event as unknown as { chunk: Json }).chunk.choices;
      let text = '';
      if (Array.isArray(choices)) for (const choice of choices) if (isObject(choice) && isObject(choice.delta) && typeof choice.delta.content === 'string') text += choice.delta.content;
      return text;
    }
    case 'responses': {
      if (event.type !== 'response-event-received') return '';
      const received = event as unknown as { eventType: string; json: string };
      if (received.eventType !== 'response.output_text.delta') return '';
      const delta = (JSON.parse(received.json) as Json).delta;
      return typeof delta === 'string' ? delta : '';
    }
    case 'messages': {
      if (event.type !== 'messages-event-received') return '';
      const value = (event as unknown as { value: Json }).value;
      const delta = value.delta;
      return value.type === 'content_block_delta' && isObject(delta) && delta.type === 'text_delta' && typeof delta.text === 'string' ? delta.text : '';
    }
    case 'geminiApi': {
      if (event.type !== 'content-frame-received') return '';
      let text = '';
      for (const part of geminiParts((event as unknown as { value: Json }).value)) if (isObject(part) && typeof part.text === 'string') text += part.text;
      return text;
    }
    default:
      return '';
  }
}

/** The parts of a Gemini stream frame's first candidate (a stream has one). */
function geminiParts(value: Json): unknown[] {
  const candidate: unknown = Array.isArray(value.candidates) ? value.candidates[0] : undefined;
  const parts = isObject(candidate) && isObject(candidate.content) ? candidate.content.parts : undefined;
  return Array.isArray(parts) ? parts : [];
}

/**
 * A copy of a stream event whose text (as `deltaText` reads it) is `text` instead, for masking
 * within a stream's held-back window; null when the capability's events cannot be rewritten so
 * (a Responses stream: its closing events repeat the whole text) or the event holds the text of
 * several choices or candidates.
 */
export function withDeltaText<E extends { type: string }>(capability: string, event: E, text: string): E | null {
  switch (capability) {
    case 'chat': {
      const chunk = (event as unknown as { chunk: Json }).chunk;
      const choices = chunk.choices;
      if (!Array.isArray(choices) || choices.length !== 1 || !isObject(choices[0]) || !isObject(choices[0].delta)) return null;
      const choice = choices[0];
      // Without `json` the chat format writes the chunk object, not the provider's text of it.
      return { type: event.type, chunk: { ...chunk, choices: [{ ...choice, delta: { ...(choice.delta as Json), content: text } }] } } as unknown as E;
    }
    case 'messages': {
      const value = (event as unknown as { value: Json }).value;
      const changed = { ...value, delta: { ...(value.delta as Json), text } };
      return { ...event, value: changed, data: JSON.stringify(changed) };
    }
    case 'geminiApi': {
      const value = (event as unknown as { value: Json }).value;
      if (!Array.isArray(value.candidates) || value.candidates.length !== 1) return null;
      const candidate = value.candidates[0] as Json;
      // The frame's text goes in its first text part; its other text parts are emptied.
      let placed = false;
      const parts = geminiParts(value).map((part) => {
        if (!isObject(part) || typeof part.text !== 'string') return part;
        const own = placed ? '' : text;
        placed = true;
        return { ...part, text: own };
      });
      const changed = { ...value, candidates: [{ ...candidate, content: { ...(candidate.content as Json), parts } }] };
      return { ...event, value: changed, data: JSON.stringify(changed) };
    }
    default:
      return null;
  }
}
