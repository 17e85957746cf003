import { GatewayError, invalidBody } from '../errors/index.js';
import type { MediaSummary } from '../logs/index.js';

/**
 * The input policy of every model call: vendor-neutral rules for the content of chat
 * messages (docs/errors.md lists what it refuses) — which image and file references the gateway
 * accepts, and which the model's input modalities allow — checked before anything is reserved
 * or any provider is called, and a summary of the media for the request log (counts, types,
 * bytes; never data). Chat, VETTING and agents' model calls all pass through it (see
 * model-calls.ts). Cheap on large bodies: no regex over base64 data, no copies.
 */

export interface ContentRules {
  /** Whether the model's provider can fetch remote http(s) image URLs itself. */
  acceptsRemoteImageUrls: boolean;
  /** The model's `input_modalities` (text, image, file, pdf, audio). */
  inputModalities: readonly string[];
}

export interface DataUri {
  mimeType: string;
  /** Decoded size, computed from the base64 length. */
  bytes: number;
}

type Part = Record<string, unknown>;

/** `data:<mime>[;params];base64,<data>` → its type and decoded size; null when `value` is not a data URI. */
export function parseDataUri(value: string): DataUri | 'not-base64' | null {
  if (!value.startsWith('data:')) return null;
  const comma = value.indexOf(',');
  if (comma < 0) return 'not-base64';
  const meta = value.slice(5, comma);
  if (!meta.endsWith(';base64')) return 'not-base64';
  const semicolon = meta.indexOf(';');
  const mimeType = meta.slice(0, semicolon).trim().toLowerCase();
  const length = value.length - comma - 1;
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  return { mimeType, bytes: Math.max(0, Math.floor((length * 3) / 4) - padding) };
}

/**
 * Checks one image reference (an `image_url.url`). Data URIs must be base64 images; remote
 * URLs must be http(s), carry no credentials, and go only to providers that can fetch them.
 * Returns the data URI's details, or null for an accepted remote URL.
 */
export function checkImageUrl(url: string, param: string, acceptsRemoteImageUrls: boolean): DataUri | null {
  const data = parseDataUri(url);
  if (data === 'not-base64' || (data !== null && !data.mimeType.startsWith('image/'))) {
    throw new GatewayError('invalid_image_url', `${param} must be a base64 image data URI (data:image/png;base64,…) or an https URL.`, { param });
  }
  if (data !== null) return data;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new GatewayError('invalid_image_url', `${param} is not a valid URL; send an https URL or a base64 data URI.`, { param });
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new GatewayError('invalid_image_url', `${param} must use https (or http), or be a base64 data URI.`, { param });
  }
  if (parsed.username !== '' || parsed.password !== '') {
    // The URL is not echoed: it carries a credential.
    throw new GatewayError('invalid_image_url', `${param} must not contain a username or password; remove them from the URL.`, { param });
  }
  if (!acceptsRemoteImageUrls) {
    throw new GatewayError(
      'invalid_image_url',
      `${param}: this model's provider cannot fetch remote image URLs. Send the image as a base64 data URI (data:image/png;base64,…).`,
      { param },
    );
  }
  return null;
}

const URL_SCHEME_PREFIX = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Checks one file part's payload (`file` object, or the part itself for `input_file`). */
function checkFile(file: Part, param: string): DataUri {
  if (file.file_id !== undefined) {
    throw invalidBody(`${param}.file_id: provider file references are not supported; send the file itself as base64 in file_data.`, `${param}.file_id`);
  }
  if (file.file_url !== undefined) {
    throw invalidBody(`${param}.file_url: remote file fetching is not supported; send the file as base64 in file_data.`, `${param}.file_url`);
  }
  const fileData = file.file_data;
  if (typeof fileData !== 'string' || fileData.length === 0) {
    throw invalidBody(`${param}.file_data is required: the file as a base64 data URI (data:application/pdf;base64,…).`, `${param}.file_data`);
  }
  const data = parseDataUri(fileData);
  if (data === 'not-base64') throw invalidBody(`${param}.file_data must be base64 (data:<type>;base64,…).`, `${param}.file_data`);
  if (data !== null) return data;
  if (URL_SCHEME_PREFIX.test(fileData.slice(0, 64))) {
    throw invalidBody(`${param}.file_data: remote files and file URIs are not supported; send the file as base64.`, `${param}.file_data`);
  }
  // Bare base64: the type must come from mime_type.
  if (typeof file.mime_type !== 'string' || file.mime_type.length === 0) {
    throw invalidBody(`${param}.mime_type is required when file_data is not a data URI.`, `${param}.mime_type`);
  }
  return { mimeType: file.mime_type.toLowerCase(), bytes: Math.floor((fileData.length * 3) / 4) };
}

function requireModality(rules: ContentRules, modalities: readonly string[], what: string, param: string): void {
  if (modalities.some((modality) => rules.inputModalities.includes(modality))) return;
  throw new GatewayError(
    'unsupported_input_modality',
    `${param}: the selected model does not accept ${what} (its input_modalities are ${rules.inputModalities.join(', ')}). Pick a model that lists ${modalities[0]} in GET /v1/models.`,
    { param },
  );
}

class MediaTally {
  images = 0;
  files = 0;
  bytes = 0;
  private readonly mimeTypes = new Set<string>();

  add(kind: 'image' | 'file', data: DataUri | null, fallbackType?: string): void {
    if (kind === 'image') this.images += 1;
    else this.files += 1;
    const mimeType = data?.mimeType ?? fallbackType;
    if (mimeType !== undefined) this.mimeTypes.add(mimeType);
    this.bytes += data?.bytes ?? 0;
  }

  summary(): MediaSummary | null {
    if (this.images === 0 && this.files === 0) return null;
    return { images: this.images, files: this.files, mimeTypes: [...this.mimeTypes], bytes: this.bytes };
  }
}

function checkPart(part: unknown, param: string, rules: ContentRules, tally: MediaTally): void {
  if (typeof part !== 'object' || part === null || Array.isArray(part)) throw invalidBody(`${param} must be an object with a "type".`, param);
  const { type } = part as Part;
  if (typeof type !== 'string') throw invalidBody(`${param}.type is required (text, image_url, file or input_file).`, `${param}.type`);
  switch (type) {
    case 'text':
      if (typeof (part as Part).text !== 'string') throw invalidBody(`${param}.text must be a string.`, `${param}.text`);
      return;
    case 'image_url': {
      const image = (part as Part).image_url;
      const url = typeof image === 'object' && image !== null ? (image as Part).url : undefined;
      if (typeof url !== 'string' || url.length === 0) throw invalidBody(`${param}.image_url.url is required.`, `${param}.image_url.url`);
      requireModality(rules, ['image'], 'images', param);
      tally.add('image', checkImageUrl(url, `${param}.image_url.url`, rules.acceptsRemoteImageUrls));
      return;
    }
    case 'file':
    case 'input_file': {
      const nested = (part as Part).file;
      const file = type === 'file' ? nested : (nested ?? part);
      if (typeof file !== 'object' || file === null) throw invalidBody(`${param}.file is required.`, `${param}.file`);
      const filePath = type === 'file' || nested !== undefined ? `${param}.file` : param;
      const data = checkFile(file as Part, filePath);
      requireModality(rules, data.mimeType === 'application/pdf' ? ['pdf', 'file'] : ['file'], `${data.mimeType} files`, param);
      tally.add('file', data);
      return;
    }
    case 'input_audio': {
      requireModality(rules, ['audio'], 'audio', param);
      const audio = (part as Part).input_audio as Part | undefined;
      const data = typeof audio?.data === 'string' ? audio.data : '';
      tally.add('file', { mimeType: `audio/${String(audio?.format ?? 'unknown')}`, bytes: Math.floor((data.length * 3) / 4) });
      return;
    }
    default:
      // Other part types (refusal, …) pass through to the provider unchanged.
      return;
  }
}

/**
 * Checks every message's content (a string, an array of parts, or null/absent for assistant
 * tool calls) and returns the media summary. Throws the 400 naming the field at fault.
 */
export function inspectMessages(messages: readonly unknown[], rules: ContentRules): MediaSummary | null {
  const tally = new MediaTally();
  messages.forEach((message, index) => {
    const content = (message as Part).content;
    if (content === undefined || content === null || typeof content === 'string') return;
    const param = `messages[${index}].content`;
    if (!Array.isArray(content)) throw invalidBody(`${param} must be a string or an array of content parts.`, param);
    content.forEach((part, partIndex) => checkPart(part, `${param}[${partIndex}]`, rules, tally));
  });
  return tally.summary();
}
