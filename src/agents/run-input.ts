import { invalidBody } from '../errors/index.js';

/**
 * The input forms of an agent run (docs/agents.md, "Running an agent"): `input` as a string, a
 * content-part array or a Responses-style message array; `message`; `messages`. Each yields
 * one turn: its text and the images it carries (not yet decoded or checked).
 */
interface ImagePart {
  image_url: string | { url: string; detail?: string };
  filename?: string;
  detail?: string;
}

export type ContentPart =
  | { type: 'input_text'; text: string }
  | { type: 'text'; text: string }
  /** Assistant text of a Responses-style history the caller pasted back. */
  | { type: 'output_text'; text: string }
  | (ImagePart & { type: 'input_image' })
  | (ImagePart & { type: 'image_url' });

export interface InputMessage {
  type?: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | ContentPart[];
}

export interface RunInputBody {
  input?: string | (ContentPart | InputMessage)[];
  message?: string;
  messages?: InputMessage[];
}

export interface ImageReference {
  url: string;
  filename: string | null;
  /** Where it was in the body, for error messages (`input[1].image_url`). */
  param: string;
}

export interface TurnInput {
  text: string;
  images: ImageReference[];
}

function isMessage(item: ContentPart | InputMessage): item is InputMessage {
  return 'role' in item;
}

function fromParts(parts: readonly ContentPart[], param: string): TurnInput {
  const texts: string[] = [];
  const images: ImageReference[] = [];
  parts.forEach((part, index) => {
    if (part.type === 'input_text' || part.type === 'text' || part.type === 'output_text') {
      texts.push(part.text);
    } else {
      const url = typeof part.image_url === 'string' ? part.image_url : part.image_url.url;
      images.push({ url, filename: part.filename ?? null, param: `${param}[${index}].image_url` });
    }
  });
  return { text: texts.join('\n'), images };
}

function fromMessages(messages: readonly InputMessage[], param: string): TurnInput {
  const index = messages.findLastIndex((message) => message.role === 'user');
  if (index === -1) throw invalidBody(`${param} has no message with role "user"; the last user message is the turn.`, param);
  const { content } = messages[index]!;
  return typeof content === 'string' ? { text: content, images: [] } : fromParts(content, `${param}[${index}].content`);
}

export function readTurnInput(body: RunInputBody): TurnInput {
  const given = (['input', 'message', 'messages'] as const).filter((field) => body[field] !== undefined);
  if (given.length !== 1) {
    throw invalidBody(
      given.length === 0 ? 'Send the user turn as input, message or messages.' : `Send only one of input, message and messages (got ${given.join(', ')}).`,
      given[1] ?? 'input',
    );
  }
  let turn: TurnInput;
  if (body.message !== undefined) turn = { text: body.message, images: [] };
  else if (body.messages !== undefined) turn = fromMessages(body.messages, 'messages');
  else if (typeof body.input === 'string') turn = { text: body.input, images: [] };
  else {
    const items = body.input!;
    const messages = items.filter(isMessage);
    if (messages.length > 0 && messages.length !== items.length) {
      throw invalidBody('input mixes messages and content parts; send either a list of messages or a list of parts.', 'input');
    }
    turn = messages.length > 0 ? fromMessages(messages, 'input') : fromParts(items as ContentPart[], 'input');
  }
  if (turn.text.trim().length === 0 && turn.images.length === 0) throw invalidBody('The turn is empty; send some text or an image.', given[0]);
  return turn;
}
