/**
 * The cases every coding agent runs, over a model of each vendor: a plain prompt whose answer
 * must reach the agent's output, and a shell-tool turn (the model asks for the agent's shell
 * tool, the agent runs the command and sends its output back, the model's final answer names
 * that output). Every model call must be answered, and its request-log record must carry
 * usage and a cost.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientBench, VENDOR_MODELS, type AgentCase, type AgentResult, type VendorName } from './client-bench.js';
import { CLIENTS_UNSUPPORTED, installedClient, PINNED_CLIENTS, type ClientName, type InstalledClient } from './installs.js';

/** Agent runs at once within one test file (each is mostly waiting; the machine has two cores). */
const RUNS_AT_ONCE = 2;
/** A run takes seconds; the first in a file may wait for the CLI's install from npm. */
const CASE_TIMEOUT_MS = 240_000;
const INSTALL_TIMEOUT_MS = 600_000;

const CASES: AgentCase[] = ['plain', 'shell'];

export interface SuiteOptions {
  /** The cases again on the agent's own default model; `priced`: whether that model has a price (a future id served by prefix has none). */
  defaultModel?: { priced: boolean };
  /** Codex: a run that asks for the Responses WebSocket mode first. */
  websockets?: boolean;
}

/** What a failed run shows: each exchange with its status, and the gateway's answer where it refused. */
function transcript(result: AgentResult): string {
  const exchanges = result.exchanges.map((exchange) => `  ${exchange.method} ${exchange.path} → ${exchange.status}${exchange.status >= 400 ? ` ${exchange.answer.slice(0, 400)}` : ''}`);
  return [`exit ${String(result.exitCode)}`, ...exchanges, `stdout: ${result.stdout.slice(-800)}`, `stderr: ${result.stderr.slice(-1200)}`].join('\n');
}

export function assertAgentRun(result: AgentResult, agentCase: AgentCase, options: { priced: boolean }): void {
  const modelCalls = result.records;
  assert.ok(modelCalls.length > 0, `the agent made no model call\n${transcript(result)}`);
  // A WebSocket upgrade is answered 426 by design: the agent goes on over HTTP.
  const refused = result.exchanges.filter((exchange) => exchange.status >= 400 && !exchange.upgrade);
  assert.deepEqual(refused.map((exchange) => `${exchange.method} ${exchange.path} → ${exchange.status}`), [], `the gateway refused requests of the agent\n${transcript(result)}`);
  assert.equal(result.exitCode, 0, transcript(result));
  assert.ok(result.stdout.includes(result.expected), `the answer "${result.expected}" is not in the agent's output\n${transcript(result)}`);
  if (agentCase === 'shell') assert.ok(modelCalls.length >= 2, `a tool turn takes two model calls at least\n${transcript(result)}`);
  for (const record of modelCalls) {
    assert.equal(record.status, 200, `${record.request_id} ${record.endpoint}: ${record.error_code}`);
    assert.ok(record.usage?.prompt_tokens > 0 && record.usage?.completion_tokens > 0, `${record.request_id} ${record.endpoint} usage: ${JSON.stringify(record.usage)}`);
    if (options.priced) assert.ok(typeof record.cost_usd === 'number' && record.cost_usd > 0, `${record.request_id} ${record.requested_model}: cost ${String(record.cost_usd)}`);
  }
}

/**
 * The test file of one client on one vendor's model: its standard cases, and as `options`
 * say the same cases on the client's own default model, or a run over the WebSocket mode. A file per client and
 * vendor keeps each file short (the runner times a whole file) and lets the runner spread
 * them over the cores.
 */
export function clientSuite(name: ClientName, vendor: VendorName, options: SuiteOptions = {}): void {
  const { defaultModel } = options;
  const pinned = PINNED_CLIENTS[name];
  describe(`${name} ${pinned.version} through the gateway on ${vendor}`, { concurrency: RUNS_AT_ONCE, skip: CLIENTS_UNSUPPORTED }, () => {
    let bench: ClientBench;
    let client: InstalledClient;
    before(
      async () => {
        client = installedClient(name);
        bench = await ClientBench.start();
      },
      { timeout: INSTALL_TIMEOUT_MS },
    );
    after(async () => {
      await bench?.close();
    });

    for (const agentCase of CASES) {
      test(`${agentCase === 'plain' ? 'a plain prompt' : 'a shell tool turn'} on ${VENDOR_MODELS[vendor]}`, { timeout: CASE_TIMEOUT_MS }, async () => {
        assertAgentRun(await bench.run(client, vendor, agentCase), agentCase, { priced: true });
      });
    }
    if (options.websockets === true) {
      test(`with the Responses WebSocket mode asked for: the upgrade is refused with 426 and the run goes on over HTTP`, { timeout: CASE_TIMEOUT_MS }, async () => {
        const result = await bench.run(client, vendor, 'plain', { websockets: true });
        assert.deepEqual(result.exchanges.filter((exchange) => exchange.upgrade).map((exchange) => `${exchange.path} → ${exchange.status}`), ['/v1/responses → 426'], transcript(result));
        assertAgentRun(result, 'plain', { priced: true });
      });
    }
    if (defaultModel === undefined) return;
    for (const agentCase of CASES) {
      test(`${agentCase === 'plain' ? 'a plain prompt' : 'a shell tool turn'} on its own default model`, { timeout: CASE_TIMEOUT_MS }, async () => {
        assertAgentRun(await bench.run(client, vendor, agentCase, { model: null }), agentCase, { priced: defaultModel.priced });
      });
    }
  });
}
