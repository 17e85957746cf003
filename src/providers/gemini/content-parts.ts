import { GatewayError, invalidBody } from '../../errors/index.js';
import { base64Data } from '../shared/caller-values.js';
import { parseBase64DataUri } from '../shared/data-uri.js';
import { isRecord, mapUserContent, type ContentPart } from '../shared/message-content.js';
import type { GeminiPart } from './wire.js';

/*
 * OpenAI content parts → Gemini parts: text, base64 data-URI images, files (PDF and other
 * documents) and audio as inlineData. Gemini cannot fetch remote URLs, and provider file
 * references (file_id, gs:// or Files API URIs) are not supported: both are refused with a
 * 400 that says to send base64 data instead.
 */

const URL_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** User message content (a string or parts) as Gemini parts. */
export function userParts(content: unknown, param: string): GeminiPart[] {
  return mapUserContent(content, param, textParts, contentPart);
}

/** Gemini rejects empty text parts, so empty text becomes no part at all. */
export function textParts(text: string): GeminiPart[] {
  return text.length > 0 ? [{ text }] : [];
}

function contentPart(part: ContentPart, param: string): GeminiPart[] {
  switch (part.type) {
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
  const data = parseBase64DataUri(url);
  if (data !== null) {
    if (!data.mimeType.startsWith('image/')) throw invalidImage(`has type "${data.mimeType}"; send an image (data:image/png;base64,…).`, `${param}.url`);
    return { inlineData: { mimeType: data.mimeType, data: base64Data(data.base64, `${param}.url`, { image: true, urlSafe: true }) } };
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
  const dataUri = parseBase64DataUri(fileData);
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
  return { inlineData: { mimeType, data: base64Data(dataUri?.base64 ?? fileData, `${param}.file_data`, { image: false, urlSafe: true }) } };
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
  return { inlineData: { mimeType: `audio/${audio.format.toLowerCase()}`, data: base64Data(audio.data, `${param}.data`, { image: false, urlSafe: true }) } };
}
