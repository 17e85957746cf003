import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { ProviderInstanceView, ProviderTestView } from '../provider-instances/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { readSecret } from './password-input.js';
import { orDash, printFields, printJson, printTable, printText } from './output.js';

/** `modelgate providers …`: a client of the admin API's provider routes (docs/cli.md, docs/providers.md#providers-added-live). */

interface SettingOptions extends AdminOptions {
  set?: Record<string, unknown>;
  unset?: string[];
  secret?: string[];
}

const providerPath = (name: string) => `/providers/${encodeURIComponent(name)}`;

/** `--set field=value`: the value as JSON when it reads as JSON (numbers, booleans, lists), else as text. */
function collectSetting(value: string, previous: Record<string, unknown> = {}): Record<string, unknown> {
  const separator = value.indexOf('=');
  if (separator < 1) throw new InvalidArgumentError('expected field=value');
  const raw = value.slice(separator + 1);
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // Text, as typed.
  }
  return { ...previous, [value.slice(0, separator)]: parsed };
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function withSettingOptions(command: Command): Command {
  return withAdminOptions(command)
    .option('--set <field=value>', 'a setting of the kind (repeat for more; never a secret: use --secret)', collectSetting)
    .option('--secret <field>', 'a secret setting, typed without echo (or read from standard input when it is not a terminal)', collect);
}

/** The settings the options give: --set values, each --secret read in turn, --unset fields as null. */
async function settingsOf(options: SettingOptions): Promise<Record<string, unknown>> {
  const settings: Record<string, unknown> = { ...options.set };
  for (const field of options.secret ?? []) settings[field] = await readSecret(field);
  for (const field of options.unset ?? []) settings[field] = null;
  return settings;
}

function printProvider(provider: ProviderInstanceView): void {
  printFields([
    ['name', provider.name],
    ['kind', provider.kind],
    ['source', `${provider.source} (${provider.origin})${provider.read_only ? ', read-only' : ''}`],
    ['state', provider.state],
    ['description', orDash(provider.description)],
    ['settings', JSON.stringify(provider.settings)],
    ['credentials', provider.credentials.map((credential) => `${credential.field} ${credential.fingerprint}`).join(', ') || '-'],
  ]);
}

export function registerProvidersCommand(program: Command): void {
  const providers = program.command('providers').description('providers and their credentials (docs/providers.md#providers-added-live)');

  withAdminOptions(providers.command('list').description('every provider: those of the environment and the config file (read-only) and those added here')).action(async (options: AdminOptions) => {
    const list = await AdminClient.fromOptions(options).request<{ data: ProviderInstanceView[] }>('GET', '/providers');
    if (options.json === true) return printJson(list);
    printTable(
      ['NAME', 'KIND', 'SOURCE', 'STATE', 'CREDENTIALS'],
      list.data.map((provider) => [provider.name, provider.kind, `${provider.source} (${provider.origin})`, provider.state, provider.credentials.map((credential) => credential.fingerprint).join(' ') || '-']),
    );
  });

  withSettingOptions(providers.command('add').description('add a provider instance of a kind').argument('<name>', 'its name: a kind\'s own name gives that vendor its credential; another name is an instance of its own'))
    .requiredOption('--kind <kind>', 'the kind of provider (GET /admin/v1/providers/kinds lists them)')
    .action(async (name: string, options: SettingOptions & { kind: string }) => {
      const created = await AdminClient.fromOptions(options).request<ProviderInstanceView>('POST', '/providers', { name, kind: options.kind, settings: await settingsOf(options) });
      if (options.json === true) return printJson(created);
      printProvider(created);
    });

  withSettingOptions(providers.command('edit').description('change a provider added here (the settings given; the others are kept)').argument('<name>'))
    .option('--unset <field>', 'remove a setting (repeat for more)', collect)
    .action(async (name: string, options: SettingOptions) => {
      const changed = await AdminClient.fromOptions(options).request<ProviderInstanceView>('PATCH', providerPath(name), { settings: await settingsOf(options) });
      if (options.json === true) return printJson(changed);
      printProvider(changed);
    });

  withAdminOptions(providers.command('remove').description('remove a provider added here').argument('<name>')).action(async (name: string, options: AdminOptions) => {
    await AdminClient.fromOptions(options).request('DELETE', providerPath(name));
    if (options.json === true) return printJson({ name, removed: true });
    printText(`Removed provider ${name}.\n`);
  });

  withAdminOptions(providers.command('test').description('send one tiny request through the provider now').argument('<name>'))
    .option('--model <id>', 'the upstream model to call (default: the first chat model of the catalog it serves)')
    .action(async (name: string, options: AdminOptions & { model?: string }) => {
      const result = await AdminClient.fromOptions(options).request<ProviderTestView>('POST', `${providerPath(name)}/test`, options.model === undefined ? {} : { model: options.model });
      if (options.json === true) return printJson(result);
      printText(result.ok ? `ok: ${result.model} answered in ${result.latency_ms} ms\n` : `failed after ${result.latency_ms} ms (${result.model ?? 'no model'}): ${result.error?.code} ${result.error?.message}\n`);
      if (!result.ok) process.exitCode = 1;
    });
}
