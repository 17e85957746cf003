import { invalidBody } from '../../errors/index.js';

/*
 * Reading OpenAI chat message content the same way in every adapter that maps it to its
 * vendor's own parts, so the 400s for malformed content read alike whatever the provider.
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A content part of a user message: an object with a type, not yet checked further. */
export type ContentPart = Record<string, unknown> & { type: string };

function isContentPart(value: unknown): value is ContentPart {
  return isRecord(value) && typeof value.type === 'string';
}

/**
 * User message content (a string or an array of parts) as vendor parts: `fromText` maps a
 * plain string and each text part, `fromPart` every other part.
 */
export function mapUserContent<Part>(
  content: unknown,
  param: string,
  fromText: (text: string) => Part[],
  fromPart: (part: ContentPart, param: string) => Part[],
): Part[] {
  if (typeof content === 'string') return fromText(content);
  if (!Array.isArray(content)) throw invalidBody(`${param} must be a string or an array of content parts.`, param);
  return content.flatMap((part: unknown, index) => {
    const partParam = `${param}[${index}]`;
    if (!isContentPart(part)) throw invalidBody(`${partParam} must be a content part object with a type.`, partParam);
    if (part.type !== 'text') return fromPart(part, partParam);
    if (typeof part.text !== 'string') throw invalidBody(`${partParam}.text must be a string.`, `${partParam}.text`);
    return fromText(part.text);
  });
}

/** Content that may only hold text (system, assistant and tool messages), joined into one string. */
export function textOf(content: unknown, param: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidBody(`${param} must be a string or an array of text parts.`, param);
  return content
    .map((part, index) => {
      if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') return part.text;
      if (isRecord(part) && part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
      throw invalidBody(`${param}[${index}] must be a text part: this message role accepts only text.`, `${param}[${index}]`);
    })
    .join('');
}
