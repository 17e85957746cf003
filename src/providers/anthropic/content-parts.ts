import { GatewayError, invalidBody } from '../../errors/index.js';
import { base64Data } from '../shared/caller-values.js';
import { parseBase64DataUri } from '../shared/data-uri.js';
import { isRecord, mapUserContent, type ContentPart } from '../shared/message-content.js';
import type { AnthropicRequestBlock, AnthropicTextBlock } from './wire.js';

/*
 * OpenAI content parts → Anthropic content blocks: text, images (base64 data URIs or remote
 * URLs, which Anthropic fetches itself) and files (PDF as a base64 document, plain text as a
 * text document). Anything else is refused with a 400 that says what to send instead.
 */

const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** `image/jpg` is not a registered type but a common label for JPEG, which Anthropic refuses by name. */
const MEDIA_TYPE_ALIASES = new Map([['image/jpg', 'image/jpeg']]);

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The type an image's bytes are, by their signature: JPEG, PNG, GIF or WebP; null for
 * anything else. Anthropic checks the bytes against the declared type and refuses a mismatch
 * (a JPEG labelled image/png is common), so a recognised signature decides the type sent.
 */
function imageTypeOfBytes(base64: string): string | null {
  const head = Buffer.from(base64.slice(0, 16), 'base64');
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.subarray(0, 8).equals(PNG_SIGNATURE)) return 'image/png';
  const ascii = head.toString('latin1');
  if (ascii.startsWith('GIF87a') || ascii.startsWith('GIF89a')) return 'image/gif';
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return 'image/webp';
  return null;
}

/** User message content (a string or parts) as Anthropic blocks. */
export function userBlocks(content: unknown, param: string): AnthropicRequestBlock[] {
  return mapUserContent(content, param, textBlocks, partBlocks);
}

/** Anthropic rejects empty text blocks, so empty text becomes no block at all. */
export function textBlocks(text: string): AnthropicTextBlock[] {
  return text.length > 0 ? [{ type: 'text', text }] : [];
}

function partBlocks(part: ContentPart, param: string): AnthropicRequestBlock[] {
  switch (part.type) {
    case 'image_url':
      return [imageBlock(part.image_url, `${param}.image_url`)];
    case 'file':
    case 'input_file':
      return [documentBlock(part.file, `${param}.file`)];
    default:
      throw new GatewayError('unsupported_input_modality', `${param} has type "${part.type}", which this model does not accept. Send text, image_url or file parts.`, {
        param,
      });
  }
}

function imageBlock(imageUrl: unknown, param: string): AnthropicRequestBlock {
  const url = isRecord(imageUrl) ? imageUrl.url : imageUrl;
  if (typeof url !== 'string') throw invalidBody(`${param}.url must be a string: an https URL or a base64 data URI.`, `${param}.url`);
  if (url.startsWith('data:')) {
    const data = parseBase64DataUri(url);
    if (data === null) throw invalidImage('is a data URI without base64 data. Send data:<type>;base64,<data>.', `${param}.url`);
    const declared = MEDIA_TYPE_ALIASES.get(data.mimeType) ?? data.mimeType;
    if (!IMAGE_MEDIA_TYPES.has(declared)) {
      throw invalidImage(`has type "${data.mimeType}"; this model accepts image/jpeg, image/png, image/gif or image/webp.`, `${param}.url`);
    }
    const base64 = base64Data(data.base64, `${param}.url`, { image: true });
    const mediaType = imageTypeOfBytes(base64) ?? declared;
    return { type: 'image', source: { type: 'base64', media_type: mediaType, data: base64 } };
  }
  return { type: 'image', source: { type: 'url', url: remoteImageUrl(url, `${param}.url`) } };
}

function remoteImageUrl(value: string, param: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidImage('is neither an http(s) URL nor a base64 data URI.', param);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalidImage(`uses ${url.protocol}; send an http(s) URL or a base64 data URI.`, param);
  if (url.username !== '' || url.password !== '') throw invalidImage('contains a username or password; remove the credentials from the URL.', param);
  return value;
}

function invalidImage(problem: string, param: string): GatewayError {
  return new GatewayError('invalid_image_url', `${param} ${problem}`, { param });
}

function documentBlock(file: unknown, param: string): AnthropicRequestBlock {
  if (!isRecord(file)) throw invalidBody(`${param} must be an object with file_data (base64 or a data URI).`, param);
  if (typeof file.file_data !== 'string') {
    const reason = file.file_id !== undefined ? 'File references (file_id) are not supported' : 'file_data is missing';
    throw invalidBody(`${param}: ${reason}; send the file content as base64 file_data or a data URI.`, `${param}.file_data`);
  }
  const dataUri = parseBase64DataUri(file.file_data);
  if (dataUri === null && /^[a-z][a-z0-9+.-]*:\/\//i.test(file.file_data)) {
    throw invalidBody(`${param}.file_data is a URL; remote files are not fetched. Send the file content as base64 or a data URI.`, `${param}.file_data`);
  }
  const mediaType = dataUri?.mimeType ?? mediaTypeOf(file);
  const base64 = base64Data(dataUri?.base64 ?? file.file_data, `${param}.file_data`, { image: false });
  if (mediaType === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: base64 } };
  if (mediaType === 'text/plain') {
    return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(base64, 'base64').toString('utf8') } };
  }
  throw new GatewayError(
    'unsupported_input_modality',
    `${param} has type "${mediaType ?? 'unknown'}"; this model accepts PDF (application/pdf) and plain-text files. Give the type in a data URI or file.mime_type.`,
    { param },
  );
}

/** The declared type of raw base64 file data: `mime_type`, else the filename's extension. */
function mediaTypeOf(file: Record<string, unknown>): string | undefined {
  if (typeof file.mime_type === 'string') return file.mime_type.toLowerCase();
  if (typeof file.filename !== 'string') return undefined;
  if (/\.pdf$/i.test(file.filename)) return 'application/pdf';
  if (/\.txt$/i.test(file.filename)) return 'text/plain';
  return undefined;
}
