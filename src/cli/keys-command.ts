import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ApiKeyView, Scope } from '../keys/index.js';
import { csvCell } from '../logs/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { closestIds } from '../config/index.js';
import {
  CLEAR,
  collectMetadata,
  orNull,
  parseCountLimit,
  parseDuration,
  parseExpiry,
  parseList,
  parseModels,
  parseNewCountLimit,
  parseNewUsdLimit,
  parseScopes,
  parseUsdLimit,
  type Clear,
} from './arguments.js';
import { ask, CliError, moneyOrDash, orDash, printFields, printJson, printTable, printText, printWarning } from './output.js';

/** `modelgate keys …`: a client of the admin API's key routes (docs/cli.md). */

interface LimitOptions {
  expires?: string | Clear;
  tags?: string[] | Clear;
  meta?: Record<string, string>;
  rpm?: number | Clear;
  dailyTokens?: number | Clear;
  monthlyCost?: number | Clear;
  models?: string[] | Clear;
  tools?: string[] | Clear;
  /** commander's `--allow-unpriced` / `--no-allow-unpriced`. */
  allowUnpriced?: boolean;
}

interface CreateOptions extends AdminOptions, LimitOptions {
  name?: string;
  count?: number;
  csv?: string;
  namePrefix?: string;
  scopes: Scope[];
  project?: string;
}

interface UpdateOptions extends AdminOptions, LimitOptions {
  name?: string;
  scopes?: Scope[];
}

type CreatedKey = ApiKeyView & { secret: string };

/** Keys `keys create --count` makes in one run. */
const MAX_BULK_KEYS = 1000;

const keyPath = (id: string) => `/keys/${encodeURIComponent(id)}`;

/** The limit options: on `create` a value or nothing (no limit); on `update` also `none`, to clear one. */
function withLimitOptions(command: Command, use: 'create' | 'update'): Command {
  command
    .option('--expires <when>', `when the key stops working: a duration from now (30d) or an ISO 8601 time${use === 'update' ? ` (${CLEAR} = never)` : ' (default: never)'}`, parseExpiry)
    .option('--tags <tags>', `comma-separated tags${use === 'update' ? ` replacing the key's (${CLEAR} = no tags)` : ''}`, parseModels)
    .option('--meta <name=value>', `a metadata field (repeat for more)${use === 'update' ? "; replaces the key's metadata" : ''}`, collectMetadata);
  if (use === 'create') {
    return command
      .option('--rpm <n>', 'requests per minute (default: no limit)', parseNewCountLimit)
      .option('--daily-tokens <n>', 'tokens per UTC day (default: no cap)', parseNewCountLimit)
      .option('--monthly-cost <usd>', 'USD per UTC calendar month (default: no cap)', parseNewUsdLimit)
      .option('--models <ids>', 'comma-separated model ids or aliases the key may use (default: any model)', parseList)
      .option('--tools <entries>', 'comma-separated MCP tools the key may use: server__tool or server__* (default: every tool)', parseList)
      .option('--allow-unpriced', 'with --monthly-cost, serve models without a price too, uncounted (default: refused)');
  }
  return command
    .option('--rpm <n>', `requests per minute (${CLEAR} = no limit)`, parseCountLimit)
    .option('--daily-tokens <n>', `tokens per UTC day (${CLEAR} = no cap)`, parseCountLimit)
    .option('--monthly-cost <usd>', `USD per UTC calendar month (${CLEAR} = no cap)`, parseUsdLimit)
    .option('--models <ids>', `comma-separated model ids or aliases the key may use (${CLEAR} = any model)`, parseModels)
    .option('--tools <entries>', `comma-separated MCP tools the key may use: server__tool or server__* (${CLEAR} = every tool)`, parseModels)
    .option('--allow-unpriced', 'with a monthly cost cap, serve models without a price too, uncounted')
    .option('--no-allow-unpriced', 'refuse models without a price while the key has a monthly cost cap (the default)');
}

/**
 * Warns (on stderr; the key is still made as asked) about `--models` values that are no id or
 * alias of the gateway's catalog, with the closest ones: a typo would otherwise make a key
 * that is refused for the model meant. A gateway whose catalog cannot be read is not checked.
 */
async function warnUnknownModels(client: AdminClient, models: readonly string[]): Promise<void> {
  const catalog = await client.catalog().catch(() => undefined);
  if (catalog === undefined) return;
  const known = [...catalog.available_models.map((model) => model.id), ...Object.keys(catalog.aliases)];
  for (const model of models.filter((candidate) => !known.includes(candidate))) {
    const close = closestIds(model, known, 3);
    const suggestion = close.length > 0 ? ` Did you mean ${close.map((id) => `"${id}"`).join(', ')}?` : '';
    printWarning(`--models: "${model}" is no model id or alias this gateway lists (GET /v1/models).${suggestion} The key allows it as given.`);
  }
}

/** `keys revoke` is final: on a terminal it asks first; elsewhere it needs --yes. */
async function confirmRevoke(client: AdminClient, id: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (process.stdin.isTTY !== true) {
    throw new CliError(`revoking a key is final; pass --yes to revoke ${id} (there is no terminal to ask on)`);
  }
  const key = await client.request<ApiKeyView>('GET', keyPath(id));
  const answer = await ask(`Revoke key ${key.id} "${key.name}" (project ${key.project_id})? Calls with it are refused for ever. Type yes to revoke: `);
  if (answer.trim().toLowerCase() !== 'yes') throw new CliError(`not revoked: ${id} is unchanged`);
}

/** The admin API's unpriced-models, expiry, tags and metadata fields that were given. */
function manageFieldsOf(options: LimitOptions): Record<string, unknown> {
  return {
    ...(options.allowUnpriced !== undefined ? { allow_unpriced: options.allowUnpriced } : {}),
    ...(options.expires !== undefined ? { expires_at: orNull(options.expires) } : {}),
    ...(options.tags !== undefined ? { tags: options.tags === CLEAR ? [] : options.tags } : {}),
    ...(options.meta !== undefined ? { metadata: options.meta } : {}),
  };
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
    ['monthly cost', moneyOrDash(key.limits.monthly_cost_usd)],
    ['models', key.allowed_models === null ? 'any' : key.allowed_models.join(', ')],
    ['tools', key.allowed_tools === null || key.allowed_tools === undefined ? 'any' : key.allowed_tools.join(', ')],
    ['unpriced models', key.allow_unpriced === true ? 'allowed' : 'refused under a cost cap'],
    ['expires', key.expires_at ?? 'never'],
    ...(key.previous_secret_expires_at === null ? [] : [['previous secret until', key.previous_secret_expires_at] as [string, string]]),
    ['tags', key.tags.length === 0 ? '-' : key.tags.join(', ')],
    ...Object.entries(key.metadata).map(([name, value]): [string, string] => [`meta ${name}`, value]),
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
  printText('\nStore the secret now: it is shown only once and cannot be recovered.\n');
}

function printKeyList(keys: ApiKeyView[]): void {
  if (keys.length === 0) {
    printText('No keys. Create one with: modelgate keys create --name NAME --scopes model:request\n');
    return;
  }
  printTable(
    ['id', 'name', 'project', 'status', 'scopes', 'rpm', 'daily tokens', 'monthly cost', 'models'],
    keys.map((key) => [
      key.id,
      key.name,
      key.project_id,
      key.status,
      key.scopes.join(','),
      orDash(key.limits.rpm),
      orDash(key.limits.daily_tokens),
      moneyOrDash(key.limits.monthly_cost_usd),
      key.allowed_models === null ? 'any' : key.allowed_models.join(','),
    ]),
  );
}

export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('create and manage API keys (talks to a running gateway)');

  const create = keys
    .command('create')
    .description('create a key; prints its secret once')
    .option('--name <name>', 'a name to recognise the key by (required unless --count)')
    .option('--count <n>', 'create this many keys alike (1-1000), named PREFIX-1 … PREFIX-N; their secrets are printed once as CSV', parseNewCountLimit)
    .option('--name-prefix <prefix>', 'with --count: the names\' prefix')
    .option('--csv <file>', 'create one key a line of FILE, name,end_user (end user kept in the metadata as endUser); secrets printed once as CSV')
    .requiredOption('--scopes <scopes>', 'comma-separated: model:request, utils:crypto, agents:execute, mcp:use, metrics:read', parseScopes)
    .option('--project <id>', 'project the key belongs to (default: default; created if new)');
  withAdminOptions(withLimitOptions(create, 'create')).action(async (options: CreateOptions) => {
      const client = AdminClient.fromOptions(options);
      if (options.models !== undefined && options.models !== CLEAR) await warnUnknownModels(client, options.models);
      const limits = limitsOf(options);
      const settings = {
        scopes: options.scopes,
        ...(options.project !== undefined ? { project: options.project } : {}),
        ...(limits !== undefined ? { limits } : {}),
        ...(options.models !== undefined ? { allowed_models: orNull(options.models) } : {}),
        ...(options.tools !== undefined ? { allowed_tools: orNull(options.tools) } : {}),
        ...manageFieldsOf(options),
      };
      if (options.csv !== undefined) {
        if (options.count !== undefined || options.name !== undefined || options.namePrefix !== undefined) throw new CliError('--csv names the keys itself: leave out --name, --count and --name-prefix');
        // The CSV parser loads here, not with every command (serve included).
        const { parseKeyRows } = await import('./key-rows.js');
        const rows = parseKeyRows(await readFile(options.csv, 'utf8').catch((error: NodeJS.ErrnoException) => {
          throw new CliError(`cannot read ${options.csv}: ${error.code ?? error.message}`);
        }), MAX_BULK_KEYS);
        const metadata = (settings as { metadata?: Record<string, string> }).metadata ?? {};
        // As with --count: each line printed as soon as its key exists.
        printText('id,name,end_user,secret\n');
        for (const row of rows) {
          const key = await client.request<CreatedKey>('POST', '/keys', { ...settings, name: row.name, metadata: row.endUser === null ? metadata : { ...metadata, endUser: row.endUser } });
          printText(`${csvCell(key.id)},${csvCell(key.name)},${csvCell(row.endUser)},${csvCell(key.secret)}\n`);
        }
        return;
      }
      if (options.count === undefined) {
        if (options.name === undefined) throw new CliError('pass --name, or --count N --name-prefix PREFIX, or --csv FILE for many keys');
        printCreated(await client.request<CreatedKey>('POST', '/keys', { name: options.name, ...settings }), options);
        return;
      }
      if (options.namePrefix === undefined || options.name !== undefined) throw new CliError('--count takes --name-prefix PREFIX (the keys are named PREFIX-1 … PREFIX-N), not --name');
      if (options.count > MAX_BULK_KEYS) throw new CliError(`--count may be at most ${MAX_BULK_KEYS}`);
      // One key at a time, each line printed as soon as its key exists: an error part-way leaves
      // the keys made so far listed with their secrets.
      printText('id,name,secret\n');
      for (let index = 1; index <= options.count; index += 1) {
        const key = await client.request<CreatedKey>('POST', '/keys', { name: `${options.namePrefix}-${index}`, ...settings });
        printText(`${csvCell(key.id)},${csvCell(key.name)},${csvCell(key.secret)}\n`);
      }
    });

  withAdminOptions(keys.command('list').description('list keys'))
    .option('--project <id>', 'only the keys of this project')
    .option('--tag <tag>', 'only the keys with this tag (the newest 500)')
    .action(async (options: AdminOptions & { project?: string; tag?: string }) => {
      const parameters = new URLSearchParams({
        ...(options.project !== undefined ? { project: options.project } : {}),
        ...(options.tag !== undefined ? { tag: options.tag, limit: '500' } : {}),
      }).toString();
      const query = parameters.length > 0 ? `?${parameters}` : '';
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
    ['revoke', 'stop accepting the key for ever (cannot be undone; asks first on a terminal)'],
  ] as const;
  for (const [action, description] of transitions) {
    const command = withAdminOptions(keys.command(action).description(description).argument('<id>', 'key id (key_…)'));
    if (action === 'revoke') command.option('--yes', 'revoke without asking (scripts)');
    command.action(async (id: string, options: AdminOptions & { yes?: boolean }) => {
      const client = AdminClient.fromOptions(options);
      if (action === 'revoke') await confirmRevoke(client, id, options.yes === true);
      printKey(await client.request<ApiKeyView>('POST', `${keyPath(id)}/${action}`), options);
    });
  }

  withAdminOptions(
    keys
      .command('rotate')
      .description('a new secret for the same key and settings; prints it once')
      .argument('<id>', 'key id (key_…)')
      .option('--grace <duration>', 'how long the old secret keeps working, such as 15m or 24h (default: it stops at once; at most 30d)', parseDuration),
  ).action(async (id: string, options: AdminOptions & { grace?: number }) => {
    const key = await AdminClient.fromOptions(options).request<CreatedKey>('POST', `${keyPath(id)}/rotate`, { grace_period_seconds: Math.floor((options.grace ?? 0) / 1000) });
    printCreated(key, options);
  });

  for (const [action, description] of [
    ['pause', 'pause every active key of a project at once'],
    ['resume', 'resume every paused key of a project at once'],
    ['revoke', 'revoke every key of a project at once (final; needs --yes)'],
  ] as const) {
    const command = withAdminOptions(keys.command(`${action}-project`).description(description).argument('<project>', 'project id'));
    if (action === 'revoke') command.option('--yes', 'confirm: every key of the project is refused for ever');
    command.action(async (project: string, options: AdminOptions & { yes?: boolean }) => {
      if (action === 'revoke' && options.yes !== true) throw new CliError(`revoking every key of ${project} is final; pass --yes to do it`);
      const changed = await AdminClient.fromOptions(options).request<{ object: 'list'; data: ApiKeyView[] }>('POST', `/projects/${encodeURIComponent(project)}/keys/${action}`);
      if (options.json === true) printJson(changed);
      else printText(`${changed.data.length} key${changed.data.length === 1 ? '' : 's'} of ${project} ${action === 'revoke' ? 'revoked' : `${action}d`}${changed.data.length > 0 ? `: ${changed.data.map((key) => key.id).join(', ')}` : ''}\n`);
    });
  }

  const update = keys
    .command('update')
    .description(`change a key's name, scopes, limits or models`)
    .argument('<id>', 'key id (key_…)')
    .option('--name <name>', 'new name')
    .option('--scopes <scopes>', 'replace the scopes (comma-separated)', parseScopes);
  withAdminOptions(withLimitOptions(update, 'update')).action(async (id: string, options: UpdateOptions) => {
      const limits = limitsOf(options);
      const changes = {
        ...(options.name !== undefined ? { name: options.name } : {}),
        ...(options.scopes !== undefined ? { scopes: options.scopes } : {}),
        ...(limits !== undefined ? { limits } : {}),
        ...(options.models !== undefined ? { allowed_models: orNull(options.models) } : {}),
        ...(options.tools !== undefined ? { allowed_tools: orNull(options.tools) } : {}),
        ...manageFieldsOf(options),
      };
      if (Object.keys(changes).length === 0) {
        throw new CliError('nothing to change: pass --name, --scopes, --rpm, --daily-tokens, --monthly-cost, --models, --tools, --[no-]allow-unpriced, --expires, --tags or --meta');
      }
      const client = AdminClient.fromOptions(options);
      if (options.models !== undefined && options.models !== CLEAR) await warnUnknownModels(client, options.models);
      printKey(await client.request<ApiKeyView>('PATCH', keyPath(id), changes), options);
    });
}
