import type { UpstreamObjectRef } from '../types.js';
import { UpstreamRefs } from '../upstream-refs.js';

/**
 * The objects of the vendor account a Gemini API request names (Google's API reference): the
 * context cache of `cachedContent`. (`fileData` parts are refused for every model.)
 */
export function geminiUpstreamObjects(body: Record<string, unknown>): UpstreamObjectRef[] {
  const refs = new UpstreamRefs();
  refs.add('cachedContents', body.cachedContent, 'cachedContent');
  return refs.found;
}
