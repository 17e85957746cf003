import { invalidBody } from '../../errors/index.js';
import type { ImageResult, JsonObject } from '../../model-api/index.js';
import type { PredictRequest, PredictResponse } from './wire.js';

/*
 * OpenAI image generation ↔ Imagen's predict method: `n` is the sample count, `size` becomes
 * the closest aspect ratio Imagen offers, and images come back as base64 (Imagen returns no
 * URLs, so `response_format: url` is refused rather than silently ignored).
 */

const ASPECT_RATIOS = [
  { name: '1:1', value: 1 },
  { name: '3:4', value: 3 / 4 },
  { name: '4:3', value: 4 / 3 },
  { name: '9:16', value: 9 / 16 },
  { name: '16:9', value: 16 / 9 },
];

function aspectRatioOf(size: unknown): string | undefined {
  if (size === undefined || size === null || size === 'auto') return undefined;
  const match = typeof size === 'string' ? /^(\d+)x(\d+)$/.exec(size) : null;
  if (match === null || Number(match[1]) === 0 || Number(match[2]) === 0) {
    throw invalidBody('size must be "auto" or of the form <width>x<height>, such as 1024x1024.', 'size');
  }
  const ratio = Math.log(Number(match[1]) / Number(match[2]));
  const closest = ASPECT_RATIOS.reduce((best, candidate) =>
    Math.abs(Math.log(candidate.value) - ratio) < Math.abs(Math.log(best.value) - ratio) ? candidate : best,
  );
  return closest.name;
}

export function toPredictRequest(body: JsonObject): PredictRequest {
  if (typeof body.prompt !== 'string' || body.prompt.length === 0) throw invalidBody('prompt must be a non-empty string.', 'prompt');
  const n = body.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw invalidBody('n must be a positive integer.', 'n');
  if (body.response_format !== undefined && body.response_format !== null && body.response_format !== 'b64_json') {
    throw invalidBody('This image model returns base64 images only: omit response_format or set it to b64_json.', 'response_format');
  }
  const aspectRatio = aspectRatioOf(body.size);
  return { instances: [{ prompt: body.prompt }], parameters: { sampleCount: n, ...(aspectRatio !== undefined ? { aspectRatio } : {}) } };
}

export function toImageResult(response: PredictResponse): ImageResult {
  const predictions = response.predictions ?? [];
  const images = predictions.filter((prediction) => prediction.bytesBase64Encoded !== undefined);
  if (images.length === 0) {
    // Imagen drops images its safety filters block; with none left the prompt itself was refused.
    const reason = predictions.find((prediction) => prediction.raiFilteredReason !== undefined)?.raiFilteredReason;
    throw invalidBody(`The image model generated no image: its safety filters blocked the prompt${reason !== undefined ? ` (${reason})` : ''}. Rephrase the prompt.`, 'prompt');
  }
  return {
    response: { created: Math.floor(Date.now() / 1000), data: images.map((image) => ({ b64_json: image.bytesBase64Encoded })) },
    imageCount: images.length,
    usage: null,
  };
}
