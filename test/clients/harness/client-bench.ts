/**
 * One gateway with the three vendors' fakes behind it, as an operator runs it, and the
 * coding agents run against it: each run gets a key of its own, a temporary HOME and working
 * directory, and what it sent (through the recording proxy) and what the request log kept of
 * it come back for the test to assert.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_TURNS, FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from '../../fakes/anthropic.js';
import { AGENT_GEMINI_TURNS, FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from '../../fakes/gemini.js';
import { AGENT_CHAT_TURNS, startOpenAIFake, type OpenAIFake } from '../../fakes/openai.js';
import { AGENT_RESPONSES_TURNS } from '../../fakes/openai-responses.js';
import { loggedRecord, startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { agentInvocation } from './coding-agents.js';
import { installedClient, type ClientName, type InstalledClient } from './installs.js';
import { startRecordingProxy, type Exchange, type RecordingProxy } from './recording-proxy.js';

export type VendorName = 'openai' | 'anthropic' | 'gemini';

/** The model of each vendor the agents are run on. */
export const VENDOR_MODELS: Record<VendorName, string> = {
  openai: 'gpt-5-mini',
  anthropic: 'claude-sonnet-4-5-20250929',
  gemini: 'gemini-2.5-flash',
};

export type AgentCase = 'plain' | 'shell';

export interface RunOptions {
  /** The model to name (null: the agent's own default); the vendor's model of VENDOR_MODELS when absent. */
  model?: string | null;
  /** Codex: ask for the Responses WebSocket mode first. */
  websockets?: boolean;
}

export interface AgentResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** What the agent sent to the gateway, in order, and what it got back. */
  exchanges: Exchange[];
  /** The request log's record of each model call the agent made (by the answer's x-request-id). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- admin API records are read loosely; the tests assert what they read
  records: any[];
  /** What the run's prompt asked for and the text the fake answers with once it is done. */
  expected: string;
}

/** Paths the agents call that are model calls (their records carry usage and cost). */
const MODEL_CALL = /^\/(v1\/(messages|chat\/completions|responses)|v1beta\/models\/[^?]+:(generateContent|streamGenerateContent))(\?|$)/;

/** Longest an agent run may take: far more than a run needs (a few seconds), short of the test timeout. */
const RUN_TIMEOUT_MS = 150_000;

export class ClientBench {
  private constructor(
    readonly gateway: TestGateway,
    private readonly proxy: RecordingProxy,
    private readonly fakes: { openai: OpenAIFake; anthropic: FakeAnthropic; gemini: FakeGemini },
    private readonly root: string,
  ) {}

  static async start(): Promise<ClientBench> {
    const openai = await startOpenAIFake();
    const anthropic = await startFakeAnthropic();
    const gemini = await startFakeGemini();
    openai.scriptChat(AGENT_CHAT_TURNS);
    openai.scriptResponses(AGENT_RESPONSES_TURNS);
    anthropic.reply(AGENT_TURNS);
    gemini.reply('chat', AGENT_GEMINI_TURNS);
    const gateway = await startTestGateway({
      env: {
        OPENAI_BASE_URL: `${openai.server.url}/v1`,
        OPENAI_API_KEY: 'sk-test-fake-openai-0123456789',
        ANTHROPIC_BASE_URL: anthropic.url,
        ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY,
        GEMINI_BASE_URL: gemini.url,
        GEMINI_API_KEY: FAKE_GEMINI_KEY,
      },
    });
    const proxy = await startRecordingProxy(gateway.url);
    return new ClientBench(gateway, proxy, { openai, anthropic, gemini }, mkdtempSync(join(tmpdir(), 'modelgate-clients-')));
  }

  /** Runs `client` with a prompt of `agentCase` on the vendor's model (or as `options` say), to its end. */
  async run(client: InstalledClient, vendor: VendorName, agentCase: AgentCase, options: RunOptions = {}): Promise<AgentResult> {
    const model = options.model === undefined ? VENDOR_MODELS[vendor] : options.model;
    const key = await this.gateway.createKey({ scopes: ['model:request'] });
    const id = Math.random().toString(36).slice(2, 10);
    const marker = agentCase === 'plain' ? `mg-plain-${id}` : `mg-shell-${id}`;
    const prompt =
      agentCase === 'plain'
        ? `Answer with one word. (${marker})`
        : `Use your shell tool to run this command, then tell me what it printed: echo ${marker} | tr a-z A-Z`;
    const expected = agentCase === 'plain' ? `PLAIN ${id}` : `SHELL SAID ${marker.toUpperCase()}`;
    const home = join(this.root, `${client.name}-${vendor}-${agentCase}-${id}`);
    const workDir = join(home, 'work');
    mkdirSync(workDir, { recursive: true });
    const invocation = agentInvocation(client.name, { gatewayUrl: this.proxy.url, key, model, prompt, home, workDir, websockets: options.websockets === true }, { claudeModel: vendor === 'anthropic' });
    const { exitCode, stdout, stderr } = await runProcess(client.command, [...client.prefix, ...invocation.args], { cwd: workDir, env: invocation.env });
    const exchanges = this.proxy.exchanges.filter((exchange) => sentWith(exchange, key));
    const records = [];
    for (const exchange of exchanges.filter((candidate) => MODEL_CALL.test(candidate.path))) {
      const requestId = exchange.responseHeaders['x-request-id'];
      if (typeof requestId === 'string') records.push(await loggedRecord(this.gateway, requestId));
    }
    const result = { exitCode, stdout, stderr, exchanges, records, expected };
    // Numbered by what ran, so a capture keeps its name from run to run: 1 plain, 2 shell; +2 on the agent's default model; +4 over the WebSocket mode.
    const captureNumber = (agentCase === 'plain' ? 1 : 2) + (model === null ? 2 : 0) + (options.websockets === true ? 4 : 0);
    saveCapture(`${client.name}-${vendor}-${captureNumber}.json`, client, model ?? 'its default model', result, key);
    return result;
  }

  async close(): Promise<void> {
    await this.proxy.close();
    await this.gateway.close();
    await this.fakes.openai.server.close();
    await this.fakes.anthropic.close();
    await this.fakes.gemini.close();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Whether the agent's credential is on the request (as a bearer, x-api-key or x-goog-api-key). */
function sentWith(exchange: Exchange, key: string): boolean {
  const { authorization, 'x-api-key': apiKey, 'x-goog-api-key': googApiKey } = exchange.headers;
  return authorization === `Bearer ${key}` || apiKey === key || googApiKey === key;
}

function runProcess(command: string, args: string[], options: { cwd: string; env: Record<string, string> }): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Its own process group, so the agent and anything it started end together.
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      stderr += `\n[harness] killed after ${RUN_TIMEOUT_MS} ms`;
      killGroup(child.pid);
    }, RUN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      killGroup(child.pid);
      resolve({ exitCode: code, stdout, stderr });
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group has already ended.
  }
}

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key']);

/**
 * With MODELGATE_CLIENT_CAPTURES set to a folder, each run's exchanges are written there as
 * `name` (`<client>-<vendor>-<n>.json`, credentials replaced), and each failed model call gets a line
 * in its INDEX.md: what the agents really send, for the format work to test against.
 */
function saveCapture(name: string, client: InstalledClient, model: string, result: AgentResult, key: string): void {
  const folder = process.env.MODELGATE_CLIENT_CAPTURES;
  if (folder === undefined || folder === '') return;
  mkdirSync(folder, { recursive: true });
  const exchanges = result.exchanges.map((exchange) => ({
    method: exchange.method,
    path: exchange.path,
    headers: Object.fromEntries(Object.entries(exchange.headers).map(([header, value]) => [header, SECRET_HEADERS.has(header) ? '<redacted>' : value])),
    body: parseOrText(exchange.body.replaceAll(key, '<redacted>')),
    status: exchange.status,
    answer: exchange.status >= 400 ? parseOrText(exchange.answer) : undefined,
  }));
  writeFileSync(join(folder, name), `${JSON.stringify({ client: `${client.name} ${client.version}`, model, exit_code: result.exitCode, exchanges }, null, 2)}\n`);
  const index = join(folder, 'INDEX.md');
  if (!existsSync(index)) writeFileSync(index, '# Captured coding-agent requests (newest first)\n');
  for (const [position, exchange] of result.exchanges.entries()) {
    if (exchange.status < 400) continue;
    const error = oneLine(exchange.answer);
    appendFileSync(index, `- ${name} exchange ${position}: ${exchange.method} ${exchange.path} (${client.name} ${client.version}, ${model}) → ${exchange.status} ${error}\n`);
  }
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function oneLine(answer: string): string {
  const parsed = parseOrText(answer) as { error?: { message?: string; code?: string } } | string;
  if (typeof parsed === 'object' && parsed?.error?.message !== undefined) return `${parsed.error.code ?? ''} ${parsed.error.message}`.trim().slice(0, 300);
  return String(answer).replace(/\s+/g, ' ').slice(0, 300);
}

export { installedClient, type ClientName };
