import { createHash } from 'node:crypto';
import { checkImageUrl } from '../../calls/index.js';
import { GatewayError, withArticle } from '../../errors/index.js';
import type { ImageReference } from '../run-input.js';
import { declaredImageType, detectImageType, typesMatch, type ImageType } from './image-types.js';

/** The media limits of docs/agents.md, "Media". The 12 MiB JSON body limit is the route's. */
export const MAX_IMAGE_BYTES = 8 * 1024 * 1024;
export const MAX_TURN_MEDIA_BYTES = 10 * 1024 * 1024;
const MAX_URL_LENGTH = 4096;

/** A checked image of the turn, not yet stored. */
export type CheckedImage =
  | { kind: 'inline'; mimeType: ImageType; data: Buffer; sha256: string; filename: string | null }
  | { kind: 'url'; url: string; filename: string | null };

function invalidImage(message: string, param: string): GatewayError {
  return new GatewayError('invalid_image_url', message, { param });
}

function tooLarge(message: string): GatewayError {
  return new GatewayError('request_too_large', message);
}

const DATA_URI = /^data:([^;,]*)((?:;[^;,]*)*),/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

async function checkDataUri(reference: ImageReference): Promise<CheckedImage> {
  const { url, param } = reference;
  const header = DATA_URI.exec(url.slice(0, 256));
  if (header === null || !header[2]!.toLowerCase().split(';').includes('base64')) {
    throw invalidImage(`${param} must be a base64 data URI (data:image/png;base64,…) or an https URL.`, param);
  }
  const declared = declaredImageType(header[1]!);
  if (declared === null) {
    throw invalidImage(`${param} is declared as "${header[1]!.slice(0, 60)}"; agents accept PNG, JPEG, WebP, GIF, HEIC and HEIF images.`, param);
  }
  const payload = url.slice(header[0].length);
  // Checked on the encoded length first, so an oversized image is refused before it is decoded.
  if (Math.floor((payload.length * 3) / 4) - 2 > MAX_IMAGE_BYTES) {
    throw tooLarge(`The image ${param} is larger than the limit of 8 MiB per image. Send a smaller image.`);
  }
  if (!BASE64.test(payload)) throw invalidImage(`${param} is not valid base64.`, param);
  const data = Buffer.from(payload, 'base64');
  if (data.length > MAX_IMAGE_BYTES) throw tooLarge(`The image ${param} is larger than the limit of 8 MiB per image. Send a smaller image.`);
  const detected = await detectImageType(data);
  if (detected === null || !typesMatch(declared, detected)) {
    throw invalidImage(
      `${param} is declared as ${declared} but its content is ${detected === null ? 'not an accepted image' : `${withArticle(detected)} file`}. Declare the image's real type.`,
      param,
    );
  }
  return { kind: 'inline', mimeType: declared, data, sha256: createHash('sha256').update(data).digest('hex'), filename: reference.filename };
}

/** A URL the model-call input policy accepted; agents keep only https URLs of bounded length. */
function checkUrl(reference: ImageReference): CheckedImage {
  const { url, param } = reference;
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' || url.length > MAX_URL_LENGTH) {
    throw invalidImage(`${param} must be an https URL of at most ${MAX_URL_LENGTH} characters, or a base64 data URI.`, param);
  }
  return { kind: 'url', url: parsed.href, filename: reference.filename };
}

/** A caller's file name, kept as metadata only (never used in a path). */
export function cleanFilename(filename: string | null): string | null {
  if (filename === null) return null;
  const cleaned = [...filename].filter((character) => character.charCodeAt(0) >= 0x20 && character !== '\u007f').join('').slice(0, 255);
  return cleaned.length > 0 ? cleaned : null;
}

/**
 * Decodes and checks every image of a turn before anything is stored. First the input policy
 * every model call holds image references to (src/calls: a base64 image data URI, or an
 * http(s) URL without credentials), then the agents' own rules for what they store: data URIs
 * of an accepted type whose signature matches the declared one, at most 8 MiB each and
 * 10 MiB together; URLs https only (kept, never fetched).
 */
export async function checkTurnImages(references: readonly ImageReference[]): Promise<CheckedImage[]> {
  const checked: CheckedImage[] = [];
  let total = 0;
  for (const reference of references) {
    checkImageUrl(reference.url, reference.param, true);
    const image = /^data:/i.test(reference.url) ? await checkDataUri(reference) : checkUrl(reference);
    if (image.kind === 'inline') {
      total += image.data.length;
      if (total > MAX_TURN_MEDIA_BYTES) throw tooLarge('The images of this turn are larger than the limit of 10 MiB together. Send fewer or smaller images.');
    }
    checked.push({ ...image, filename: cleanFilename(image.filename) });
  }
  return checked;
}

