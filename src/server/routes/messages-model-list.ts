import { Type, type Static } from '@sinclair/typebox';
import { invalidBody } from '../../errors/index.js';
import type { PublicModelEntry } from '../../catalog/index.js';

/**
 * `GET /v1/models` as the Messages API's clients read it (Claude Code, the Anthropic SDKs'
 * `models.list()`), answered when the request carries `anthropic-version`: the chat models,
 * each `{type, id, display_name, created_at}`, the most recently released first (as that API
 * lists them), in pages of `limit` (default 20, at most 1000)
 * after `after_id` or before `before_id`, with `has_more`, `first_id` and `last_id`.
 */

export const MessagesModelListQuery = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: 'With anthropic-version: entries per page, 1 to 1000 (default 20)' })),
  after_id: Type.Optional(Type.String({ minLength: 1, description: 'With anthropic-version: the page starts after this model id' })),
  before_id: Type.Optional(Type.String({ minLength: 1, description: 'With anthropic-version: the page ends before this model id' })),
});

export type MessagesModelListParameters = Static<typeof MessagesModelListQuery>;

export const MessagesModelSchema = Type.Object({
  type: Type.Literal('model'),
  id: Type.String(),
  display_name: Type.String(),
  created_at: Type.String({ description: 'RFC 3339: the release of the model, or when the gateway listed it' }),
});

export const MessagesModelListSchema = Type.Object({
  data: Type.Array(MessagesModelSchema),
  has_more: Type.Boolean(),
  first_id: Type.Union([Type.String(), Type.Null()]),
  last_id: Type.Union([Type.String(), Type.Null()]),
});

type MessagesModel = Static<typeof MessagesModelSchema>;

const DEFAULT_PAGE = 20;

export function messagesModelOf(entry: PublicModelEntry): MessagesModel {
  return { type: 'model', id: entry.id, display_name: entry.id, created_at: new Date(entry.created * 1000).toISOString().replace('.000Z', 'Z') };
}

/** One page of the chat models, newest first (the catalog's order between models of one date). */
export function messagesModelPage(entries: readonly PublicModelEntry[], query: MessagesModelListParameters): Static<typeof MessagesModelListSchema> {
  const models = entries
    .filter((entry) => entry.mode === 'chat')
    .sort((a, b) => b.created - a.created)
    .map(messagesModelOf);
  const limit = query.limit === undefined ? DEFAULT_PAGE : Number(query.limit);
  if (limit < 1 || limit > 1000) throw invalidBody('limit must be from 1 to 1000.', 'limit');
  const position = (id: string, param: string) => {
    const index = models.findIndex((model) => model.id === id);
    if (index < 0) throw invalidBody(`${param} "${id.slice(0, 200)}" is not a chat model of this gateway: pass the first_id or last_id of a page.`, param);
    return index;
  };
  let page: MessagesModel[];
  let more: boolean;
  if (query.before_id !== undefined) {
    const end = position(query.before_id, 'before_id');
    const start = Math.max(0, end - limit);
    page = models.slice(start, end);
    more = start > 0;
  } else {
    const start = query.after_id === undefined ? 0 : position(query.after_id, 'after_id') + 1;
    page = models.slice(start, start + limit);
    more = start + page.length < models.length;
  }
  return { data: page, has_more: more, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
}
