import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStorage } from '../src/storage/index.js';
import { AgentStore } from '../src/agents/store/agent-store.js';
import { ConversationStore } from '../src/agents/store/conversation-store.js';
import { RunStore } from '../src/agents/store/run-store.js';
import { GatewayError } from '../src/errors/index.js';
import { RetentionJob } from '../src/logs/index.js';
import pino from 'pino';
import { STORAGE_BACKENDS } from './helpers/storage-backends.js';
import { toSafeValue, type SafeObject } from '../src/agents/values.js';

const graph = (name: string) => toSafeValue({ version: 1, name, entry: 'input', nodes: [] }) as SafeObject;
const isCode = (code: string) => (error: unknown) => error instanceof GatewayError && error.code === code;

for (const backend of STORAGE_BACKENDS) {
  describe(`agent storage on ${backend.name}`, { skip: backend.skip }, () => {
    test('drafts are numbered, published versions immutable, history survives a restart, leases exclude', async () => {
      const shared = await backend.create();
      const open = () => openStorage({ databaseUrl: shared.env.DATABASE_URL, dataDir: shared.dataDir });
      try {
        let storage = await open();
        const agents = new AgentStore(storage.db);
        const first = await agents.saveDraft({ slug: 'tutor', projectId: undefined, name: 'v1', graph: graph('v1') });
        const second = await agents.saveDraft({ slug: 'tutor', projectId: undefined, name: 'v2', graph: graph('v2') });
        assert.deepEqual([first.draft, second.draft, second.agent.project_id], [1, 2, 'default']);
        await assert.rejects(agents.saveDraft({ slug: 'tutor', projectId: 'elsewhere', name: 'x', graph: graph('x') }), isCode('conflict'));
        await assert.rejects(agents.saveDraft({ slug: 'new-one', projectId: 'missing', name: 'x', graph: graph('x') }), isCode('invalid_body'));

        const v1 = await agents.publish(second.agent, 1);
        const v2 = await agents.publish((await agents.findBySlug('tutor'))!, 2);
        assert.deepEqual([v1.version, v1.draft_version, v2.version, v2.draft_version], [1, 1, 2, 2]);
        assert.equal(JSON.parse((await agents.getVersion(second.agent, 1)).graph).name, 'v1');
        assert.equal((await agents.findBySlug('tutor'))!.published_version, 2);

        const conversations = new ConversationStore(storage.db);
        const scope = { agentId: second.agent.id, owner: 'key:key_1', test: false };
        const conversation = await conversations.create(scope, 'run_1', 60_000);
        await assert.rejects(conversations.acquire(conversation.id, scope, 'run_2', 60_000), isCode('conflict'));
        await assert.rejects(conversations.acquire(conversation.id, { ...scope, owner: 'key:key_2' }, 'run_2', 60_000), isCode('agent_conversation_error'));
        await assert.rejects(conversations.acquire(conversation.id, { ...scope, test: true }, 'run_2', 60_000), isCode('agent_conversation_error'));
        await conversations.appendTurn(conversation, 'run_1', [
          { role: 'user', text: 'hi', assetIds: ['asset_1'] },
          { role: 'assistant', text: 'hello', assetIds: [] },
        ]);
        await conversations.release(conversation.id, 'run_1');
        const runs = new RunStore(storage.db);
        await runs.start({ id: 'run_1', agent_id: second.agent.id, agent_version: 2, draft_version: 2, test: 0, conversation_id: conversation.id, request_id: 'req_1', owner: 'key:key_1', started_at: Date.now() });
        await runs.finish('run_1', { status: 'succeeded', errorCode: null, promptTokens: 1, completionTokens: 2, totalTokens: 3, costMicroUsd: 5, trace: { steps: [] } });
        await storage.close();

        storage = await open();
        const reopened = new ConversationStore(storage.db);
        const held = await reopened.acquire(conversation.id, scope, 'run_2', 60_000);
        assert.deepEqual(await reopened.history(held.id, 50), [
          { role: 'user', text: 'hi', assetIds: ['asset_1'] },
          { role: 'assistant', text: 'hello', assetIds: [] },
        ]);
        // A lease that lapsed (its run died) no longer blocks the conversation.
        await storage.db.updateTable('agent_conversations').set({ lock_expires_at: Date.now() - 1 }).where('id', '=', conversation.id).execute();
        await reopened.acquire(conversation.id, scope, 'run_3', 60_000);
        await assert.rejects(reopened.appendTurn(held, 'run_2', [{ role: 'user', text: 'late', assetIds: [] }]), isCode('conflict'));
        const run = await new RunStore(storage.db).get('run_1');
        assert.deepEqual([run?.status, run?.agent_version, run?.cost_micro_usd], ['succeeded', 2, 5]);
        await storage.close();
      } finally {
        await shared.dispose();
      }
    });

    test('history is stored redacted, and messages past the log retention are deleted', async () => {
      const shared = await backend.create();
      const storage = await openStorage({ databaseUrl: shared.env.DATABASE_URL, dataDir: shared.dataDir });
      try {
        const { agent } = await new AgentStore(storage.db).saveDraft({ slug: 'keeper', projectId: undefined, name: 'k', graph: graph('k') });
        const conversations = new ConversationStore(storage.db);
        const scope = { agentId: agent.id, owner: 'key:key_1', test: false };
        const conversation = await conversations.create(scope, 'run_1', 60_000);
        await conversations.appendTurn(conversation, 'run_1', [
          { role: 'user', text: 'my password: hunter2, db postgres://app:Pa55word@db/prod', assetIds: [] },
          { role: 'assistant', text: 'noted', assetIds: [] },
        ]);
        const stored = await storage.db.selectFrom('agent_messages').select('content').execute();
        assert.ok(stored.every((row) => !row.content.includes('hunter2') && !row.content.includes('Pa55word')), JSON.stringify(stored));
        assert.deepEqual((await conversations.history(conversation.id, 10)).map((message) => message.text), [
          'my password: [redacted], db postgres://app:[redacted]@db/prod',
          'noted',
        ]);

        // The first turn is 40 days old, a second one new: 30 days of retention keep the second.
        await storage.db.updateTable('agent_messages').set({ created_at: Date.now() - 40 * 86_400_000 }).execute();
        await conversations.appendTurn(conversation, 'run_1', [{ role: 'user', text: 'later', assetIds: [] }]);
        const job = new RetentionJob(conversations, { retentionDays: 30, batchSize: 1, intervalMs: 60_000, firstRunDelayMs: 60_000 }, pino({ level: 'silent' }));
        assert.equal(await job.runOnce(), 2);
        assert.deepEqual((await conversations.history(conversation.id, 10)).map((message) => message.text), ['later']);
      } finally {
        await storage.close();
        await shared.dispose();
      }
    });
  });
}
