import { unsupportedField } from '../errors/index.js';
import type { CallExtensions } from '../model-api/index.js';

/** What a model can take of a call's extensions: its catalog capabilities. */
export interface ModelAbilities {
  reasoning: boolean;
  webSearch: boolean;
}

/** What a call without extensions keeps: nothing, and drops nothing (shared: most calls have none). */
const NOTHING_TO_FIT: { extensions: undefined; dropped: string[] } = Object.freeze({ extensions: undefined, dropped: Object.freeze([]) as unknown as string[] });

/** The most models a refusal names; the rest are in GET /v1/models. */
const NAMED_MODELS = 6;

/**
 * The extensions a translated call keeps for its model. Reasoning asked of a model that does not
 * think is dropped and named (the answer the caller relies on is the same, without thinking);
 * web search asked of a model whose vendor has no search tool is refused naming models that have
 * one (the answer would lack what the caller asked it to look up).
 */
export function fitExtensions(
  extensions: CallExtensions | undefined,
  abilities: ModelAbilities,
  searchModels: () => readonly string[],
): { extensions: CallExtensions | undefined; dropped: string[] } {
  if (extensions === undefined) return NOTHING_TO_FIT;
  const { webSearch, reasoning } = extensions;
  if (webSearch !== undefined && !abilities.webSearch) {
    const models = searchModels();
    const named = models.length === 0 ? '' : ` Models with one: ${models.slice(0, NAMED_MODELS).join(', ')}${models.length > NAMED_MODELS ? ', … (docs/catalog.md)' : ''}.`;
    throw unsupportedField(`${webSearch.param}: web search needs a model whose vendor runs a search tool for it, and this one has none. Remove the tool, or pick such a model.${named}`, webSearch.param);
  }
  if (reasoning === undefined || abilities.reasoning) return { extensions, dropped: [] };
  const { reasoning: _reasoning, ...rest } = extensions;
  return { extensions: rest, dropped: [reasoning.param] };
}
