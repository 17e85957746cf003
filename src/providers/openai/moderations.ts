import { isRecord } from '../shared/message-content.js';
import type { ModerationCall, ModerationProvider, ModerationResult } from '../../model-api/index.js';
import type { OpenAICompatibleClient } from './client.js';
import { parseJsonObject } from './wire.js';

/**
 * `POST /moderations` (OpenAI's API reference): `{"model", "input"}` answered by
 * `{"id", "model", "results": [{"flagged", "categories", "category_scores", …}]}`, one result
 * per input. Read leniently (extra members, categories it adds later), but a result without
 * `flagged` or with a score that is not a number is no verdict: a provider_error.
 */
/** The reference's current model, which reads text and images. */
const DEFAULT_MODEL = 'omni-moderation-latest';

export class OpenAIModerations implements ModerationProvider {
  constructor(private readonly client: OpenAICompatibleClient) {}

  async moderate(call: ModerationCall): Promise<ModerationResult> {
    const upstreamModel = call.upstreamModel ?? DEFAULT_MODEL;
    const { value } = await this.client.postAndRead('/moderations', { model: upstreamModel, input: call.input }, { ...call, upstreamModel }, readModeration, 'a moderation object with a "results" list');
    return value;
  }
}

function readModeration(text: string): ModerationResult | undefined {
  const response = parseJsonObject(text);
  const result = Array.isArray(response?.results) ? response.results[0] : undefined;
  if (!isRecord(result) || typeof result.flagged !== 'boolean') return undefined;
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  if (isRecord(result.categories)) {
    for (const [category, flag] of Object.entries(result.categories)) if (typeof flag === 'boolean') categories[category] = flag;
  }
  if (isRecord(result.category_scores)) {
    for (const [category, score] of Object.entries(result.category_scores)) {
      if (typeof score !== 'number' || !Number.isFinite(score)) return undefined;
      scores[category] = score;
    }
  }
  return { flagged: result.flagged, categories, scores };
}
