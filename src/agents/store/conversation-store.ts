import type { Kysely, Selectable } from 'kysely';
import { GatewayError } from '../../errors/index.js';
import { redactText } from '../../logs/index.js';
import type { AgentConversationsTable, Database } from '../../storage/index.js';
import { isMadeId, newId } from './ids.js';

export type ConversationRow = Selectable<AgentConversationsTable>;

/** A stored turn: text, and media by asset id (never bytes). */
export interface StoredMessage {
  role: 'user' | 'assistant';
  text: string;
  assetIds: string[];
}

export interface ConversationScope {
  agentId: string;
  owner: string;
  test: boolean;
}

/** The same answer for an unknown id and for another key's or agent's id (docs/errors.md). */
function conversationError(): GatewayError {
  return new GatewayError(
    'agent_conversation_error',
    'This conversation_id is unknown for this agent and key. Send the conversation_id a previous run of this agent with this key returned, or omit it to start a new conversation.',
    { param: 'conversation_id' },
  );
}

/**
 * Conversations and their history. A run holds its conversation through a lease (a guarded
 * update, so it works across processes and instances): a second run on the same conversation
 * gets a 409 instead of interleaving turns.
 */
export class ConversationStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Creates a conversation already held by `runId`. */
  async create(scope: ConversationScope, runId: string, leaseMs: number): Promise<ConversationRow> {
    const now = Date.now();
    const row: ConversationRow = {
      id: newId('conv'),
      agent_id: scope.agentId,
      owner: scope.owner,
      test: scope.test ? 1 : 0,
      message_count: 0,
      lock_run_id: runId,
      lock_expires_at: now + leaseMs,
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('agent_conversations').values(row).execute();
    return row;
  }

  /** Takes the lease of an existing conversation bound to the same agent, owner and kind (test or not). */
  async acquire(id: string, scope: ConversationScope, runId: string, leaseMs: number): Promise<ConversationRow> {
    const row = await this.getBound(id, scope);
    const now = Date.now();
    const result = await this.db
      .updateTable('agent_conversations')
      .set({ lock_run_id: runId, lock_expires_at: now + leaseMs })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('lock_run_id', 'is', null), eb('lock_expires_at', '<', now)]))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      throw new GatewayError('conflict', 'Another run of this conversation is in progress; wait for its response, then send the next turn.', {
        param: 'conversation_id',
      });
    }
    return { ...row, lock_run_id: runId, lock_expires_at: now + leaseMs };
  }

  async release(id: string, runId: string): Promise<void> {
    await this.db
      .updateTable('agent_conversations')
      .set({ lock_run_id: null, lock_expires_at: null })
      .where('id', '=', id)
      .where('lock_run_id', '=', runId)
      .execute();
  }

  /** The newest `limit` conversations of an agent with one owner, of one kind (test or published runs). */
  async list(scope: ConversationScope, limit: number): Promise<ConversationRow[]> {
    return this.db
      .selectFrom('agent_conversations')
      .selectAll()
      .where('agent_id', '=', scope.agentId)
      .where('owner', '=', scope.owner)
      .where('test', '=', scope.test ? 1 : 0)
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** A conversation bound to `scope`; any other (or an unknown id) is the API's one answer. */
  async getBound(id: string, scope: ConversationScope): Promise<ConversationRow> {
    const row = isMadeId(id, 'conv') ? await this.db.selectFrom('agent_conversations').selectAll().where('id', '=', id).executeTakeFirst() : undefined;
    if (row === undefined || row.agent_id !== scope.agentId || row.owner !== scope.owner || row.test !== (scope.test ? 1 : 0)) throw conversationError();
    return row;
  }

  /** The last `limit` messages, oldest first. */
  async history(id: string, limit: number): Promise<StoredMessage[]> {
    const rows = await this.db
      .selectFrom('agent_messages')
      .select(['role', 'content'])
      .where('conversation_id', '=', id)
      .orderBy('seq', 'desc')
      .limit(limit)
      .execute();
    return rows.reverse().map((row) => {
      const content = JSON.parse(row.content) as { text: string; asset_ids: string[] };
      return { role: row.role, text: content.text, assetIds: content.asset_ids };
    });
  }

  /** Appends a finished turn (user then assistant) while the run holds the lease. */
  async appendTurn(conversation: ConversationRow, runId: string, messages: readonly StoredMessage[]): Promise<void> {
    const now = Date.now();
    await this.db.transaction().execute(async (trx) => {
      const current = await trx.selectFrom('agent_conversations').select(['message_count', 'lock_run_id']).where('id', '=', conversation.id).executeTakeFirstOrThrow();
      if (current.lock_run_id !== runId) {
        throw new GatewayError('conflict', 'The conversation was taken over by another run (this run outlived its lease); send the turn again.');
      }
      await trx
        .insertInto('agent_messages')
        .values(
          messages.map((message, index) => ({
            conversation_id: conversation.id,
            seq: current.message_count + index + 1,
            run_id: runId,
            role: message.role,
            // Stored like the request log's payloads: redacted (a later turn sees the placeholder).
            content: JSON.stringify({ text: redactText(message.text), asset_ids: message.assetIds }),
            created_at: now,
          })),
        )
        .execute();
      await trx
        .updateTable('agent_conversations')
        .set({ message_count: current.message_count + messages.length, updated_at: now })
        .where('id', '=', conversation.id)
        .execute();
    });
  }

  /**
   * Deletes up to `batchSize` messages older than `cutoff` (the request log's retention);
   * returns how many. The conversation stays, so a later turn continues it with what is left.
   */
  async deleteOlderThan(cutoff: number, batchSize: number): Promise<number> {
    const result = await this.db
      .deleteFrom('agent_messages')
      .where((eb) =>
        eb(
          eb.refTuple('conversation_id', 'seq'),
          'in',
          eb.selectFrom('agent_messages').select(['conversation_id', 'seq']).where('created_at', '<', cutoff).limit(batchSize).$asTuple('conversation_id', 'seq'),
        ),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
