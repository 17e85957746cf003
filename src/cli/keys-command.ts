import type { Command } from 'commander';
import type { ApiKeyView, Scope } from '../keys/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { CLEAR, orNull, parseCountLimit, parseModels, parseScopes, parseUsdLimit, type Clear } from './arguments.js';
import { CliError, orDash, printFields, printJson, printTable } from './output.js';

/** `modelgate keys …`: a client of the admin API's key routes (decisions §5). */

interface LimitOptions {
  rpm?: number | Clear;
  dailyTokens?: number | Clear;
  monthlyCost?: number | Clear;
  models?: string[] | Clear;
}

interface CreateOptions extends AdminOptions, LimitOptions {
  name: string;
  scopes: Scope[];
  project?: string;
}

interface UpdateOptions extends AdminOptions, LimitOptions {
  name?: string;
  scopes?: Scope[];
}

type CreatedKey = ApiKeyView & { secret: string };

function withLimitOptions(command: Command): Command {
  return command
    .option('--rpm <n>', `requests per minute (${CLEAR} = no limit)`, parseCountLimit)
    .option('--daily-tokens <n>', `tokens per UTC day (${CLEAR} = no cap)`, parseCountLimit)
    .option('--monthly-cost <usd>', `USD per UTC calendar month (${CLEAR} = no cap)`, parseUsdLimit)
    .option('--models <ids>', `comma-separated model ids or aliases the key may use (${CLEAR} = any model)`, parseModels);
}

/** The admin API's `limits` object with only the limits that were given. */
function limitsOf(options: LimitOptions): Record<string, number | null> | undefined {
  const limits = {
    ...(options.rpm !== undefined ? { rpm: orNull(options.rpm) } : {}),
    ...(options.dailyTokens !== undefined ? { daily_tokens: orNull(options.dailyTokens) } : {}),
    ...(options.monthlyCost !== undefined ? { monthly_cost_usd: orNull(options.monthlyCost) } : {}),
  };
  return Object.keys(limits).length > 0 ? limits : undefined;
}

function keyFields(key: ApiKeyView): [string, string][] {
  return [
    ['id', key.id],
    ['name', key.name],
    ['project', key.project_id],
    ['status', key.status],
    ['scopes', key.scopes.join(', ')],
    ['fingerprint', key.fingerprint],
    ['rpm', orDash(key.limits.rpm)],
    ['daily tokens', orDash(key.limits.daily_tokens)],
    ['monthly cost USD', orDash(key.limits.monthly_cost_usd)],
    ['models', key.allowed_models === null ? 'any' : key.allowed_models.join(', ')],
    ['created', key.created_at],
    ['updated', key.updated_at],
  ];
}

function printKey(key: ApiKeyView, options: AdminOptions): void {
  if (options.json === true) printJson(key);
  else printFields(keyFields(key));
}

function printCreated(key: CreatedKey, options: AdminOptions): void {
  if (options.json === true) {
    printJson(key);
    return;
  }
  printFields([['secret', key.secret], ...keyFields(key)]);
  process.stdout.write('\nStore the secret now: it is shown only once and cannot be recovered.\n');
}

function printKeyList(keys: ApiKeyView[]): void {
  if (keys.length === 0) {
    process.stdout.write('No keys. Create one with: modelgate keys create --name NAME --scopes model:request\n');
    return;
  }
  printTable(
    ['id', 'name', 'project', 'status', 'scopes', 'rpm', 'daily tokens', 'monthly usd', 'models'],
    keys.map((key) => [
      key.id,
      key.name,
      key.project_id,
      key.status,
      key.scopes.join(','),
      orDash(key.limits.rpm),
      orDash(key.limits.daily_tokens),
      orDash(key.limits.monthly_cost_usd),
      key.allowed_models === null ? 'any' : key.allowed_models.join(','),
    ]),
  );
}

const keyPath = (id: string) => `/keys/${encodeURIComponent(id)}`;

export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('create and manage API keys (talks to a running gateway)');

  const create = keys
    .command('create')
    .description('create a key; prints its secret once')
    .requiredOption('--name <name>', 'a name to recognise the key by')
    .requiredOption('--scopes <scopes>', 'comma-separated: model:request, utils:crypto, agents:execute', parseScopes)
    .option('--project <id>', 'project the key belongs to (default: default; created if new)');
  withAdminOptions(withLimitOptions(create)).action(async (options: CreateOptions) => {
      const client = AdminClient.fromOptions(options);
      const limits = limitsOf(options);
      const key = await client.request<CreatedKey>('POST', '/keys', {
        name: options.name,
        scopes: options.scopes,
        ...(options.project !== undefined ? { project: options.project } : {}),
        ...(limits !== undefined ? { limits } : {}),
        ...(options.models !== undefined ? { allowed_models: orNull(options.models) } : {}),
      });
      printCreated(key, options);
    });

  withAdminOptions(keys.command('list').description('list keys'))
    .option('--project <id>', 'only the keys of this project')
    .action(async (options: AdminOptions & { project?: string }) => {
      const query = options.project !== undefined ? `?project=${encodeURIComponent(options.project)}` : '';
      const list = await AdminClient.fromOptions(options).request<{ object: 'list'; data: ApiKeyView[] }>('GET', `/keys${query}`);
      if (options.json === true) printJson(list);
      else printKeyList(list.data);
    });

  withAdminOptions(keys.command('show').description('show one key').argument('<id>', 'key id (key_…)')).action(
    async (id: string, options: AdminOptions) => {
      printKey(await AdminClient.fromOptions(options).request<ApiKeyView>('GET', keyPath(id)), options);
    },
  );

  const transitions = [
    ['pause', 'stop accepting the key until it is resumed'],
    ['resume', 'accept a paused key again (same secret)'],
    ['revoke', 'stop accepting the key for ever (cannot be undone)'],
  ] as const;
  for (const [action, description] of transitions) {
    withAdminOptions(keys.command(action).description(description).argument('<id>', 'key id (key_…)')).action(
      async (id: string, options: AdminOptions) => {
        printKey(await AdminClient.fromOptions(options).request<ApiKeyView>('POST', `${keyPath(id)}/${action}`), options);
      },
    );
  }

  const update = keys
    .command('update')
    .description(`change a key's name, scopes, limits or models`)
    .argument('<id>', 'key id (key_…)')
    .option('--name <name>', 'new name')
    .option('--scopes <scopes>', 'replace the scopes (comma-separated)', parseScopes);
  withAdminOptions(withLimitOptions(update)).action(async (id: string, options: UpdateOptions) => {
      const limits = limitsOf(options);
      const changes = {
        ...(options.name !== undefined ? { name: options.name } : {}),
        ...(options.scopes !== undefined ? { scopes: options.scopes } : {}),
        ...(limits !== undefined ? { limits } : {}),
        ...(options.models !== undefined ? { allowed_models: orNull(options.models) } : {}),
      };
      if (Object.keys(changes).length === 0) {
        throw new CliError('nothing to change: pass --name, --scopes, --rpm, --daily-tokens, --monthly-cost or --models');
      }
      printKey(await AdminClient.fromOptions(options).request<ApiKeyView>('PATCH', keyPath(id), changes), options);
    });
}
