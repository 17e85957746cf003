import type { Kysely } from 'kysely';
import type { JsonObject } from '../model-api/index.js';
import type { Database } from '../storage/index.js';

/** A response kept for retrieval and for continuing its conversation. */
export interface StoredResponse {
  id: string;
  /** The key that made it (its id, or `anonymous` while keys are not required): the only one that can see it. */
  owner: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** The model as the caller asked for it. */
  model: string;
  /** Made by the provider's own Responses endpoint, which holds it too under the same id. */
  native: boolean;
  /** The response object as the caller was sent it. */
  response: JsonObject;
  /** The conversation's input items up to this response, earlier turns first. */
  inputItems: JsonObject[];
}

/**
 * Stored responses of the Responses API (decisions/0012). A response belongs to the key that
 * made it: for any other key, and for one deleted or past the retention period, there is no
 * such response (the same answer for all three, so an id reveals nothing).
 */
export class ResponseStore {
  constructor(private readonly db: Kysely<Database>) {}

  async save(stored: StoredResponse): Promise<void> {
    await this.db
      .insertInto('stored_responses')
      .values({
        id: stored.id,
        owner: stored.owner,
        created_at: stored.createdAt,
        model: stored.model,
        native: stored.native ? 1 : 0,
        response: JSON.stringify(stored.response),
        input_items: JSON.stringify(stored.inputItems),
      })
      .execute();
  }

  /** The response `id` of `owner`, or null when there is none it may see. */
  async find(id: string, owner: string): Promise<StoredResponse | null> {
    const row = await this.db.selectFrom('stored_responses').selectAll().where('id', '=', id).where('owner', '=', owner).executeTakeFirst();
    if (row === undefined) return null;
    return {
      id: row.id,
      owner: row.owner,
      createdAt: Number(row.created_at),
      model: row.model,
      native: row.native === 1,
      response: JSON.parse(row.response) as JsonObject,
      inputItems: JSON.parse(row.input_items) as JsonObject[],
    };
  }

  /** Deletes the response `id` of `owner`; false when it has no such response. */
  async delete(id: string, owner: string): Promise<boolean> {
    const result = await this.db.deleteFrom('stored_responses').where('id', '=', id).where('owner', '=', owner).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Deletes up to `batchSize` responses made before `cutoff` (the request log's retention); returns how many. */
  async deleteOlderThan(cutoff: number, batchSize: number): Promise<number> {
    const result = await this.db
      .deleteFrom('stored_responses')
      .where('id', 'in', (eb) => eb.selectFrom('stored_responses').select('id').where('created_at', '<', cutoff).limit(batchSize))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
