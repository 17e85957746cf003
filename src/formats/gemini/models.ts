import { invalidBody } from '../../errors/index.js';
import type { JsonObject } from '../../model-api/index.js';

/** What the model list shows of a catalog entry (the catalog's public entry has these members). */
export interface ListedModel {
  id: string;
  mode: string;
  description: string;
  context_window: number | null;
  max_output_tokens: number | null;
}

/** The methods a model of each mode serves on the Gemini API's paths; a model of another mode (images, speech, …) serves none there. */
const METHODS: Record<string, string[]> = {
  chat: ['generateContent', 'streamGenerateContent', 'countTokens'],
  embedding: ['embedContent', 'batchEmbedContents'],
};

const DEFAULT_PAGE = 50;
const LARGEST_PAGE = 1000;

/** A catalog entry as the Gemini API's Model: `models/{id}`, its token limits and the methods its paths serve for it (none for a mode they do not serve). */
export function geminiModelOf(entry: ListedModel, requested = entry.id): JsonObject {
  return {
    name: `models/${requested}`,
    baseModelId: entry.id,
    version: entry.id,
    displayName: entry.id,
    description: entry.description,
    inputTokenLimit: entry.context_window ?? 0,
    outputTokenLimit: entry.max_output_tokens ?? 0,
    supportedGenerationMethods: METHODS[entry.mode] ?? [],
  };
}

/** The page token of the entries from `offset` on: opaque to the caller. */
function tokenOf(offset: number): string {
  return Buffer.from(`offset:${offset}`).toString('base64url');
}

function offsetOf(token: string): number {
  const match = /^offset:(\d{1,9})$/.exec(Buffer.from(token, 'base64url').toString());
  if (match === null) throw invalidBody('pageToken is not one this gateway gave: pass the nextPageToken of the previous page.', 'pageToken');
  return Number(match[1]);
}

/**
 * One page of `GET /v1beta/models`: `{models, nextPageToken}`, every catalog model of every
 * provider in the catalog's order, `pageSize` at a time (50 by default, at most 1000).
 */
export function geminiModelPage(models: readonly ListedModel[], query: { pageSize?: string; pageToken?: string }): JsonObject {
  const size = query.pageSize === undefined || query.pageSize === '' ? DEFAULT_PAGE : Number(query.pageSize);
  if (!Number.isInteger(size) || size < 0) throw invalidBody('pageSize must be a whole number.', 'pageSize');
  const limit = Math.min(size === 0 ? DEFAULT_PAGE : size, LARGEST_PAGE);
  const start = query.pageToken === undefined || query.pageToken === '' ? 0 : offsetOf(query.pageToken);
  const page = models.slice(start, start + limit).map((entry) => geminiModelOf(entry));
  const next = start + limit < models.length ? { nextPageToken: tokenOf(start + limit) } : {};
  return { models: page, ...next };
}
