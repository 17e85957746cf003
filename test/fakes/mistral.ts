import { forwardTo, startFakeServer } from './fake-server.js';
import { startOpenAIFake, type OpenAIFake } from './openai.js';
import type { ConformanceFake } from '../providers/conformance.js';

/*
 * A fake of Mistral's API (docs.mistral.ai, "Chat Completion", "Embeddings"): Bearer key, the
 * chat request's own field names (`random_seed`, `tool_choice: any`), and a 422 for inputs its
 * schema does not have (`extra_forbidden`, as Mistral answers `stream_options` or `seed`). Its
 * answers are OpenAI's shape, given by the OpenAI fake behind it; a stream always ends with the
 * usage, as Mistral's does.
 */

export const MISTRAL_KEY = 'fake-mistral-key-0123456789';

/** The chat request members Mistral's schema has. */
const CHAT_FIELDS = new Set(['model', 'messages', 'temperature', 'top_p', 'max_tokens', 'stream', 'stop', 'random_seed', 'response_format', 'tools', 'tool_choice', 'presence_penalty', 'frequency_penalty', 'n', 'prediction', 'parallel_tool_calls', 'safe_prompt']);

export async function startFakeMistral(): Promise<ConformanceFake & { openai: OpenAIFake }> {
  const openai = await startOpenAIFake();
  const server = await startFakeServer();
  server.on('POST /v1/*', async (request, response) => {
    if (request.headers.authorization !== `Bearer ${MISTRAL_KEY}`) {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message: 'Unauthorized', request_id: 'fake' }));
      return;
    }
    const body: Record<string, unknown> = request.json ?? {};
    if (request.path === '/v1/chat/completions') {
      const extra = Object.keys(body).filter((field) => !CHAT_FIELDS.has(field));
      if (extra.length > 0 || body.tool_choice === 'required') {
        response.writeHead(422, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ object: 'error', message: { detail: extra.map((field) => ({ type: 'extra_forbidden', loc: ['body', field], msg: 'Extra inputs are not permitted', input: body[field] })) }, type: 'invalid_request_message_error', param: null, code: null }));
        return;
      }
    }
    const forwarded = body.stream === true ? { ...body, stream_options: { include_usage: true } } : body;
    await forwardTo(response, `${openai.server.url}${request.path}`, { headers: { 'content-type': 'application/json', authorization: 'Bearer fake' }, body: JSON.stringify(forwarded) });
  });
  return {
    server,
    openai,
    scriptChat: (script) => openai.scriptChat(script),
    chatRequests: () => openai.chatRequests().map((view) => ({ ...view, credential: MISTRAL_KEY })),
    close: async () => {
      await server.close();
      await openai.close();
    },
  };
}
