import type { JsonObject } from '../../model-api/index.js';
import type { HistoryMessage, RunMedia, TurnImage } from './types.js';

/** Prior media materialised into one model request, at most (docs/agents.md, "Media"). */
export const PRIOR_MEDIA_BUDGET_BYTES = 8 * 1024 * 1024;

export interface ModelAbilities {
  /** The model has `image` among its input modalities. */
  acceptsImages: boolean;
  /** Its provider can be handed an https image URL. */
  acceptsImageUrls: boolean;
}

type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

const LABELS = {
  modality: '[image omitted: this model does not accept images]',
  remote: '[image omitted: this model cannot be given image URLs]',
  budget: '[image omitted: it would exceed the 8 MiB allowed for earlier images in one request]',
  missing: '[image omitted: the stored image is no longer available]',
} as const;

function dataUri(mimeType: string, data: Buffer): string {
  return `data:${mimeType};base64,${data.toString('base64')}`;
}

function content(text: string, parts: ContentPart[]): string | ContentPart[] {
  if (parts.length === 0) return text;
  return [...(text.length > 0 ? [{ type: 'text' as const, text }] : []), ...parts];
}

/** Current-turn images as parts; the route has refused them for models without image input. */
export function turnImageParts(images: readonly TurnImage[], abilities: ModelAbilities): ContentPart[] {
  return images.map((image): ContentPart => {
    if (image.kind === 'inline') return { type: 'image_url', image_url: { url: dataUri(image.mimeType, image.data) } };
    return abilities.acceptsImageUrls ? { type: 'image_url', image_url: { url: image.url } } : { type: 'text', text: LABELS.remote };
  });
}

/**
 * Earlier turns as chat messages. Their media are loaded again from storage, newest first,
 * until 8 MiB per request is used; the rest is replaced by a label saying why.
 */
export async function historyMessages(history: readonly HistoryMessage[], abilities: ModelAbilities, media: RunMedia): Promise<JsonObject[]> {
  let remaining = PRIOR_MEDIA_BUDGET_BYTES;
  const partsByMessage: ContentPart[][] = history.map(() => []);
  for (let index = history.length - 1; index >= 0; index -= 1) {
    const message = history[index]!;
    const parts: ContentPart[] = [];
    for (const assetId of message.assetIds) {
      if (message.role !== 'user') continue; // chat APIs take images in user messages only
      if (!abilities.acceptsImages) {
        parts.push({ type: 'text', text: LABELS.modality });
        continue;
      }
      const stored = await media.load(assetId, remaining);
      if (stored === null) parts.push({ type: 'text', text: LABELS.missing });
      else if (stored.kind === 'url') parts.push(abilities.acceptsImageUrls ? { type: 'image_url', image_url: { url: stored.url } } : { type: 'text', text: LABELS.remote });
      else if (stored.kind === 'over_budget' || stored.data.length > remaining) parts.push({ type: 'text', text: LABELS.budget });
      else {
        remaining -= stored.data.length;
        parts.push({ type: 'image_url', image_url: { url: dataUri(stored.mimeType, stored.data) } });
      }
    }
    partsByMessage[index] = parts;
  }
  return history.map((message, index) => ({ role: message.role, content: content(message.text, partsByMessage[index]!) }));
}

export function userMessage(text: string, parts: ContentPart[]): JsonObject {
  return { role: 'user', content: content(text, parts) };
}
