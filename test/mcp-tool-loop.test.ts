import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runToolLoop, splitQualifiedName, ToolLoopError, type ModelCallRequest, type ModelTurn, type ToolResult, type ToolSource } from '../src/mcp/index.js';

const usage = (prompt: number, completion: number) => ({ promptTokens: prompt, completionTokens: completion, totalTokens: prompt + completion, cachedPromptTokens: null });

/** A model that answers each round with the next scripted turn, and keeps what it was given. */
function scriptedModel(turns: ModelTurn<string>[]) {
  const seen: ModelCallRequest<string>[] = [];
  return {
    seen,
    model: async (request: ModelCallRequest<string>) => {
      seen.push(structuredClone({ ...request, signal: undefined }) as unknown as ModelCallRequest<string>);
      const turn = turns[request.round - 1];
      assert.ok(turn !== undefined, `no turn scripted for round ${request.round}`);
      return turn;
    },
  };
}

function tools(results: Record<string, ToolResult | Error>, unavailable: string[] = []): ToolSource & { calls: { name: string; args: unknown }[] } {
  const calls: { name: string; args: unknown }[] = [];
  return {
    calls,
    list: async () => ({ tools: Object.keys(results).map((name) => ({ name, description: `the ${name} tool`, inputSchema: { type: 'object' } })), unavailable }),
    call: async (name, args) => {
      calls.push({ name, args });
      const result = results[name]!;
      if (result instanceof Error) throw result;
      return result;
    },
  };
}

const serverOf = (name: string) => splitQualifiedName(name)?.server ?? null;
const signal = new AbortController().signal;

test('the loop runs the tool calls the model asks for and gives it their results until it answers', async () => {
  const { model, seen } = scriptedModel([
    { output: 'calling', toolCalls: [{ id: 'c1', name: 'files__read', arguments: '{"path":"a.txt"}' }, { id: 'c2', name: 'files__stat', arguments: '' }], usage: usage(10, 2) },
    { output: 'the answer', toolCalls: [], usage: usage(20, 5) },
  ]);
  const source = tools({ files__read: { content: [{ type: 'text', text: 'Hello {{input}}' }] }, files__stat: { content: [{ type: 'text', text: '12 bytes' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] } });
  const result = await runToolLoop({ model, tools: source, maxRounds: 5, signal, serverOf });
  assert.equal(result.final.output, 'the answer');
  assert.deepEqual(source.calls, [{ name: 'files__read', args: { path: 'a.txt' } }, { name: 'files__stat', args: undefined }]);
  assert.deepEqual(result.usage, usage(30, 7));
  assert.deepEqual(seen[0]!.tools.map((tool) => tool.name), ['files__read', 'files__stat']);
  // The second round sees the first turn and its outputs; a tool's text stays as it was (never a template).
  const outputs = seen[1]!.history[0]!.outputs;
  assert.equal(outputs[0]!.text, 'Hello {{input}}');
  assert.equal(outputs[1]!.text, '12 bytes\n{"type":"image","data":"AAAA","mimeType":"image/png"}');
  assert.deepEqual(result.rounds.map((round) => round.toolCalls.map((call) => call.outcome)), [['ok', 'ok'], []]);
});

test('a server the caller may use that does not answer stops the loop before any model call, naming it', async () => {
  const { model, seen } = scriptedModel([]);
  await assert.rejects(runToolLoop({ model, tools: tools({ files__read: { content: [] } }, ['search']), maxRounds: 3, signal, serverOf }), (error: unknown) => {
    assert.ok(error instanceof ToolLoopError);
    assert.equal(error.stop, 'servers_unavailable');
    assert.deepEqual(error.servers, ['search']);
    return true;
  });
  assert.equal(seen.length, 0, 'the model is never called with fewer tools');
});

test('a tool call that fails stops the loop naming its server, or is told to the model when asked', async () => {
  const failing = () => tools({ files__read: new Error('MCP server "files" is unavailable (no answer within 100 ms). Retry later.') });
  const turns = (): ModelTurn<string>[] => [
    { output: '', toolCalls: [{ id: 'c1', name: 'files__read', arguments: '{}' }], usage: null },
    { output: 'sorry', toolCalls: [], usage: null },
  ];
  await assert.rejects(runToolLoop({ model: scriptedModel(turns()).model, tools: failing(), maxRounds: 3, signal, serverOf }), (error: unknown) => {
    assert.ok(error instanceof ToolLoopError);
    assert.equal(error.stop, 'tool_failed');
    assert.deepEqual(error.servers, ['files']);
    return true;
  });
  const told = scriptedModel(turns());
  const result = await runToolLoop({ model: told.model, tools: failing(), maxRounds: 3, signal, serverOf, onToolFailure: 'tell_model' });
  assert.equal(result.final.output, 'sorry');
  assert.deepEqual(told.seen[1]!.history[0]!.outputs[0], { callId: 'c1', name: 'files__read', text: 'MCP server "files" is unavailable (no answer within 100 ms). Retry later.', isError: true });
});

test("the model's own mistakes are told to it and reach no server: a tool it was not offered, arguments that are not an object", async () => {
  const { model, seen } = scriptedModel([
    { output: '', toolCalls: [{ id: 'c1', name: 'files__delete', arguments: '{}' }, { id: 'c2', name: 'files__read', arguments: '[1]' }], usage: null },
    { output: 'done', toolCalls: [], usage: null },
  ]);
  const source = tools({ files__read: { content: [] } });
  await runToolLoop({ model, tools: source, maxRounds: 3, signal, serverOf });
  assert.deepEqual(source.calls, []);
  assert.deepEqual(seen[1]!.history[0]!.outputs.map((output) => [output.text, output.isError]), [
    ['There is no tool "files__delete".', true],
    ['The arguments must be a JSON object.', true],
  ]);
});

test('a model that keeps asking for tools is stopped after maxRounds', async () => {
  const again: ModelTurn<string> = { output: '', toolCalls: [{ id: 'c', name: 'files__read', arguments: '{}' }], usage: null };
  const { model } = scriptedModel([again, again]);
  await assert.rejects(runToolLoop({ model, tools: tools({ files__read: { content: [] } }), maxRounds: 2, signal, serverOf }), (error: unknown) => {
    assert.ok(error instanceof ToolLoopError);
    assert.equal(error.stop, 'max_rounds');
    assert.equal(error.rounds.length, 2);
    return true;
  });
});
