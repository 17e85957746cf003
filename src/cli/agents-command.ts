import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { AgentView, GraphIssue } from '../admin-api/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { parseWholeNumber } from './arguments.js';
import { CliError, orDash, printFields, printJson, printTable, printText, printWarning } from './output.js';

/** `modelgate agents …`: the authoring order of docs/agents.md (validate, save, test, publish) and list. */

interface RunView {
  run_id: string;
  conversation_id: string;
  request_id: string;
  agent: { slug: string; version: number | null; draft_version: number | null };
  output: { text: string; attachments: { url: string; mime_type: string | null }[] };
  usage: { total_tokens: number };
  cost: { total_usd: number | null };
}

async function readGraph(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * The key an agent test runs as: --key-file, else MODELGATE_KEY, else --key (which puts the
 * secret in shell history and in `ps`, so it is kept for old scripts with a warning).
 */
async function testKey(options: { key?: string; keyFile?: string }, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (options.keyFile !== undefined) {
    const text = await readFile(options.keyFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new CliError(`cannot read the key file ${options.keyFile}: ${error.code ?? error.message}`);
    });
    const key = text.trim();
    if (key.length === 0) throw new CliError(`the key file ${options.keyFile} is empty`);
    return key;
  }
  if (env.MODELGATE_KEY) return env.MODELGATE_KEY;
  if (options.key !== undefined) {
    printWarning('--key puts the secret in shell history and in ps; set MODELGATE_KEY or pass --key-file instead');
    return options.key;
  }
  throw new CliError('no key to run the test as: set MODELGATE_KEY, or pass --key-file PATH (a file holding sk-mg-…)');
}

const agentPath = (slug: string) => `/agents/${encodeURIComponent(slug)}`;

function printAgents(agents: AgentView[]): void {
  if (agents.length === 0) {
    printText('No agents. Save one with: modelgate agents save FILE --slug SLUG\n');
    return;
  }
  printTable(
    ['slug', 'project', 'name', 'latest draft', 'published', 'updated'],
    agents.map((agent) => [agent.slug, agent.project_id, agent.name, String(agent.latest_draft), orDash(agent.published_version), agent.updated_at]),
  );
}

export function registerAgentsCommand(program: Command): void {
  const agents = program.command('agents').description('author and publish agents: validate, save, test, publish (talks to a running gateway)');

  withAdminOptions(agents.command('validate').description('check an agent graph file (JSON); lists every problem').argument('<file>', 'graph file (JSON)')).action(
    async (file: string, options: AdminOptions) => {
      const client = AdminClient.fromOptions(options);
      const result = await client.request<{ valid: boolean; issues: GraphIssue[] }>('POST', '/agents/validate', { graph: await readGraph(file) });
      if (options.json === true) printJson(result);
      else if (result.valid) printText(`${file}: valid\n`);
      else printTable(['node', 'field', 'problem'], result.issues.map((issue) => [issue.node ?? '(graph)', issue.field, issue.message]));
      if (!result.valid) throw new CliError(`${file} has ${result.issues.length} problem(s)`);
    },
  );

  withAdminOptions(
    agents
      .command('save')
      .description('save a graph file as the next draft of an agent (creates the agent on first save)')
      .argument('<file>', 'graph file (JSON)')
      .requiredOption('--slug <slug>', 'the agent (its run URL is /v1/agents/SLUG/runs)')
      .option('--project <id>', 'project of a new agent (default: default)'),
  ).action(async (file: string, options: AdminOptions & { slug: string; project?: string }) => {
    const client = AdminClient.fromOptions(options);
    const saved = await client.request<AgentView & { draft_version: number }>('PUT', agentPath(options.slug), {
      graph: await readGraph(file),
      ...(options.project !== undefined ? { project: options.project } : {}),
    });
    if (options.json === true) printJson(saved);
    else printText(`saved ${saved.slug} draft ${saved.draft_version} (project ${saved.project_id}). Test it with: MODELGATE_KEY=sk-mg-… modelgate agents test ${saved.slug} --input TEXT\n`);
  });

  withAdminOptions(
    agents
      .command('test')
      .description('run the newest draft once, metered and logged against a key, marked as a test')
      .argument('<slug>', 'the agent')
      .option('--key-file <path>', 'file holding the API key (sk-mg-…) the test runs as (default: MODELGATE_KEY)')
      .option('--key <secret>', 'the API key itself (discouraged: it stays in shell history and shows in ps)')
      .requiredOption('--input <text>', 'the user turn')
      .option('--conversation <id>', 'continue a test conversation')
      .option('--draft <n>', 'run this draft instead of the newest', parseWholeNumber),
  ).action(async (slug: string, options: AdminOptions & { key?: string; keyFile?: string; input: string; conversation?: string; draft?: number }) => {
    const key = await testKey(options);
    const client = AdminClient.fromOptions(options);
    const run = await client.request<RunView>('POST', `${agentPath(slug)}/test`, {
      key,
      input: options.input,
      ...(options.conversation !== undefined ? { conversation_id: options.conversation } : {}),
      ...(options.draft !== undefined ? { draft_version: options.draft } : {}),
    });
    if (options.json === true) {
      printJson(run);
      return;
    }
    printText(`${run.output.text}\n\n`);
    printFields([
      ['agent', run.agent.slug],
      ['draft', orDash(run.agent.draft_version)],
      ['run', run.run_id],
      ['conversation', run.conversation_id],
      ['request', run.request_id],
      ['tokens', String(run.usage.total_tokens)],
      ['cost USD', orDash(run.cost.total_usd)],
      ...run.output.attachments.map((attachment): [string, string] => ['attachment', attachment.url]),
    ]);
  });

  withAdminOptions(
    agents
      .command('publish')
      .description('publish the newest draft as a new immutable version served at the slug')
      .argument('<slug>', 'the agent')
      .option('--draft <n>', 'publish this draft instead of the newest', parseWholeNumber),
  ).action(async (slug: string, options: AdminOptions & { draft?: number }) => {
    const client = AdminClient.fromOptions(options);
    const published = await client.request<AgentView & { version: number; draft_version: number }>('POST', `${agentPath(slug)}/publish`, {
      ...(options.draft !== undefined ? { draft_version: options.draft } : {}),
    });
    if (options.json === true) printJson(published);
    else printText(`published ${published.slug} version ${published.version} (draft ${published.draft_version}); it is served at /v1/agents/${published.slug}/runs\n`);
  });

  withAdminOptions(agents.command('list').description('list agents')).action(async (options: AdminOptions) => {
    const client = AdminClient.fromOptions(options);
    const list = await client.request<{ object: 'list'; data: AgentView[] }>('GET', '/agents');
    if (options.json === true) printJson(list);
    else printAgents(list.data);
  });
}
