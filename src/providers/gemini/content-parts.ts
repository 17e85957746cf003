import { GatewayError, invalidBody } from '../../errors/index.js';
import type { GeminiPart } from './wire.js';

/*
 * OpenAI content parts → Gemini parts: text, base64 data-URI images, files (PDF and other
 * documents) and audio as inlineData. Gemini cannot fetch remote URLs, and provider file
 * references (file_id, gs:// or Files API URIs) are not supported: both are refused with a
 * 400 that says to send base64 data instead.
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `data:<mime type>[;params];base64,<data>`; null when the string is not a base64 data URI. */
function parseDataUri(value: string): { mimeType: string; data: string } | null {
  const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(value);
  if (match === null || !match[2]!.split(';').includes('base64')) return null;
  return { mimeType: match[1]!.trim().toLowerCase(), data: match[3]! };
}

const URL_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** User message content (a string or parts) as Gemini parts. */
export function userParts(content: unknown, param: string): GeminiPart[] {
  if (typeof content === 'string') return textParts(content);
  if (!Array.isArray(content)) throw invalidBody(`${param} must be a string or an array of content parts.`, param);
  return content.flatMap((part, index) => contentPart(part, `${param}[${index}]`));
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

/** Gemini rejects empty text parts, so empty text becomes no part at all. */
export function textParts(text: string): GeminiPart[] {
  return text.length > 0 ? [{ text }] : [];
}

function contentPart(part: unknown, param: string): GeminiPart[] {
  if (!isRecord(part) || typeof part.type !== 'string') throw invalidBody(`${param} must be a content part object with a type.`, param);
  switch (part.type) {
    case 'text':
      if (typeof part.text !== 'string') throw invalidBody(`${param}.text must be a string.`, `${param}.text`);
      return textParts(part.text);
    case 'image_url':
      return [imagePart(part.image_url, `${param}.image_url`)];
    case 'file':
    case 'input_file':
      // Chat Completions nests the file under `file`; the Responses-style input_file is flat.
      return [filePart(isRecord(part.file) ? part.file : part, `${param}.file`)];
    case 'input_audio':
      return [audioPart(part.input_audio, `${param}.input_audio`)];
    default:
      throw new GatewayError(
        'unsupported_input_modality',
        `${param} has type "${part.type}", which this model does not accept. Send text, image_url, file or input_audio parts.`,
        { param },
      );
  }
}

function imagePart(imageUrl: unknown, param: string): GeminiPart {
  const url = isRecord(imageUrl) ? imageUrl.url : imageUrl;
  if (typeof url !== 'string') throw invalidBody(`${param}.url must be a string: a base64 data URI.`, `${param}.url`);
  const data = parseDataUri(url);
  if (data !== null) {
    if (!data.mimeType.startsWith('image/')) throw invalidImage(`has type "${data.mimeType}"; send an image (data:image/png;base64,…).`, `${param}.url`);
    return { inlineData: { mimeType: data.mimeType, data: data.data } };
  }
  if (/^https?:/i.test(url)) {
    throw invalidImage(
      'is a remote URL; this model\'s provider cannot fetch images from URLs. Send the image as a base64 data URI (data:image/png;base64,…).',
      `${param}.url`,
    );
  }
  throw invalidImage('is not a base64 data URI. Send data:<image type>;base64,<data>.', `${param}.url`);
}

function invalidImage(problem: string, param: string): GatewayError {
  return new GatewayError('invalid_image_url', `${param} ${problem}`, { param });
}

function filePart(file: Record<string, unknown>, param: string): GeminiPart {
  const fileData = file.file_data;
  if (typeof fileData !== 'string') {
    const reference = file.file_id ?? file.file_url;
    const reason =
      reference !== undefined
        ? 'file references (file_id, file_url) are not supported for this model'
        : 'file_data is missing';
    throw invalidBody(`${param}: ${reason}; send the file content as base64 file_data or a data URI (data:application/pdf;base64,…).`, `${param}.file_data`);
  }
  const dataUri = parseDataUri(fileData);
  if (dataUri === null && URL_SCHEME.test(fileData)) {
    throw invalidBody(
      `${param}.file_data is a URL or file-URI reference; remote files are not fetched. Send the file content as base64 or a data URI (data:application/pdf;base64,…).`,
      `${param}.file_data`,
    );
  }
  const mimeType = dataUri?.mimeType || mimeTypeOf(file);
  if (mimeType === undefined) {
    throw invalidBody(`${param}: the file type is unknown; send a data URI (data:application/pdf;base64,…) or set file.mime_type.`, `${param}.file_data`);
  }
  return { inlineData: { mimeType, data: dataUri?.data ?? fileData } };
}

function mimeTypeOf(file: Record<string, unknown>): string | undefined {
  const declared = file.mime_type ?? file.mimeType;
  if (typeof declared === 'string' && declared.includes('/')) return declared.toLowerCase();
  if (typeof file.filename === 'string' && file.filename.toLowerCase().endsWith('.pdf')) return 'application/pdf';
  return undefined;
}

function audioPart(audio: unknown, param: string): GeminiPart {
  if (!isRecord(audio) || typeof audio.data !== 'string' || typeof audio.format !== 'string') {
    throw invalidBody(`${param} must be an object with base64 data and a format (wav, mp3, …).`, param);
  }
  return { inlineData: { mimeType: `audio/${audio.format.toLowerCase()}`, data: audio.data } };
}
