/*
 * Where the Gemini API serves each method. The base URL is the host only (docs/configuration.md);
 * the version path is the adapter's, like Google's own SDKs.
 */

const API_VERSION = 'v1beta';

/** `models/{id}`, unless the operator configured a full resource name such as `tunedModels/…`. */
export function modelResourceName(upstreamModel: string): string {
  return upstreamModel.includes('/') ? upstreamModel : `models/${upstreamModel}`;
}

export type GeminiMethod = 'generateContent' | 'streamGenerateContent' | 'countTokens' | 'batchEmbedContents' | 'predict';

export function methodUrl(baseUrl: string, upstreamModel: string, method: GeminiMethod): string {
  const resource = modelResourceName(upstreamModel).split('/').map(encodeURIComponent).join('/');
  // alt=sse selects server-sent events; without it the stream is one long JSON array.
  const query = method === 'streamGenerateContent' ? '?alt=sse' : '';
  return `${baseUrl.replace(/\/+$/, '')}/${API_VERSION}/${resource}:${method}${query}`;
}
