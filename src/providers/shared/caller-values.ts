import { GatewayError, invalidBody } from '../../errors/index.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../json/index.js';
import { isRecord } from './message-content.js';

/*
 * What a caller's values must be before an adapter builds a vendor's request from them, checked
 * as the gateway checks what it passes through: a native call's body is refused past
 * MAX_JSON_DEPTH levels, and a vendor refuses data that is not base64 — a translation must not
 * send on what neither would take.
 */

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64_URL_SAFE = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * Whether media data is base64 a vendor decodes: its alphabet (with `urlSafe`, the URL-safe one
 * too, which Google's JSON takes for bytes), padding only at the end, and a length that decodes.
 */
export function isBase64(data: string, urlSafe = false): boolean {
  if (data.length % 4 === 1 || (data.includes('=') && data.length % 4 !== 0)) return false;
  return (urlSafe ? BASE64_URL_SAFE : BASE64).test(data);
}

/** Media data, or the 400 naming where it stands when it is not base64 (`invalid_image_url` for an image). */
export function base64Data(data: string, param: string, options: { image: boolean; urlSafe?: boolean }): string {
  if (!isBase64(data, options.urlSafe)) {
    const message = `${param} does not hold base64 data: send the bytes base64-encoded (A–Z, a–z, 0–9, +, /, = padding).`;
    throw options.image ? new GatewayError('invalid_image_url', message, { param }) : invalidBody(message, param);
  }
  return data;
}

/**
 * A tool call's `arguments` (JSON text) as the object a vendor's tool-use input is: {} for none;
 * text that is not JSON, not an object, or nested deeper than the gateway takes in a body is the
 * caller's 400 naming the field.
 */
export function toolArgumentsObject(value: unknown, param: string): Record<string, unknown> {
  if (value === undefined || value === '') return {};
  if (typeof value !== 'string') throw invalidBody(`${param} must be a JSON string.`, param);
  if (nestsDeeperThan(Buffer.from(value), MAX_JSON_DEPTH)) {
    throw invalidBody(`${param} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, the most the gateway accepts. Send flatter arguments.`, param);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalidBody(`${param} is not valid JSON.`, param);
  }
  if (!isRecord(parsed)) throw invalidBody(`${param} must be a JSON object.`, param);
  return parsed;
}
