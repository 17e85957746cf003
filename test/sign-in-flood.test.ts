import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAIFake } from './fakes/openai.js';
import { DEFAULT_THROTTLE_LIMITS } from '../src/accounts/index.js';
import { startTestGateway } from './helpers/gateway.js';

/**
 * A sign-in flood beside model traffic: password hashes share libuv's thread pool with the
 * DNS look-ups of provider calls, so the provider is reached by host name here. Events are
 * counted (answers, and how many sign-ins were still unanswered when each chat was); nothing
 * is timed.
 */

const SIGN_INS = 400;
const CHATS = 20;

test('400 concurrent sign-ins beside chat traffic to a provider reached by host name: every chat is served while the flood is still being answered, no 5xx', async () => {
  const fake = await startOpenAIFake();
  // Every sign-in of the flood gets its password checked (no per-address refusal after 20): the
  // flood is then hundreds of hashes long, so chats answered before it ends did not queue behind it,
  // however busy the machine.
  const gateway = await startTestGateway({
    env: { OPENAI_BASE_URL: `${fake.server.url.replace('127.0.0.1', 'localhost')}/v1` },
    accounts: { throttle: { ...DEFAULT_THROTTLE_LIMITS, perAddress: SIGN_INS * 2 } },
  });
  try {
    const key = await gateway.createKey();
    const chat = async () => {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
      await response.arrayBuffer();
      return response.status;
    };
    assert.equal(await chat(), 200, 'the provider answers by its host name');
    await gateway.gateway.context.accounts.createUser('owner@example.com', 'correct horse battery staple', 'admin');

    let unanswered = SIGN_INS;
    const signIns = Array.from({ length: SIGN_INS }, async (_, index) => {
      const response = await fetch(`${gateway.url}/admin/v1/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: index % 2 === 0 ? 'owner@example.com' : `flood${index}@example.com`, password: `wrong password ${index}` }),
      });
      await response.arrayBuffer();
      unanswered -= 1;
      return response.status;
    });
    const chats: { status: number; signInsUnanswered: number }[] = [];
    for (let wave = 0; wave < CHATS / 5; wave += 1) {
      const statuses = await Promise.all(Array.from({ length: 5 }, chat));
      chats.push(...statuses.map((status) => ({ status, signInsUnanswered: unanswered })));
    }
    const signInStatuses = await Promise.all(signIns);

    assert.deepEqual(new Set(chats.map((answer) => answer.status)), new Set([200]), 'every chat is served');
    assert.ok(chats.every((answer) => answer.signInsUnanswered > 0), `chats waited for the flood: ${JSON.stringify(chats.map((answer) => answer.signInsUnanswered))}`);
    assert.ok(signInStatuses.every((status) => status === 401 || status === 429), `sign-in answers: ${[...new Set(signInStatuses)].join(', ')}`);
    assert.ok(signInStatuses.includes(401), 'some passwords were checked');
  } finally {
    await gateway.close();
    await fake.server.close();
  }
});
