import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { AliasView, ModelSettingView, RoutingView } from '../live-settings/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { orDash, printFields, printJson, printTable, printText } from './output.js';

/**
 * `modelgate models …` and `modelgate routing …`: clients of the admin API's live catalog and
 * routing routes (docs/cli.md, docs/catalog.md#models-managed-live, docs/routing.md#routing-managed-live).
 */

interface SetOptions extends AdminOptions {
  set?: Record<string, unknown>;
  note?: string;
  file?: string;
}

const modelPath = (id: string) => `/models/settings/${encodeURIComponent(id)}`;

/** `--set field=value`: the value as JSON when it reads as JSON (numbers, booleans, lists, objects), else as text; `a.b=1` sets a nested field. */
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
  const path = value.slice(0, separator).split('.');
  const next: Record<string, unknown> = structuredClone(previous);
  let place = next;
  for (const part of path.slice(0, -1)) {
    if (typeof place[part] !== 'object' || place[part] === null) place[part] = {};
    place = place[part] as Record<string, unknown>;
  }
  place[path.at(-1)!] = parsed;
  return next;
}

function price(model: ModelSettingView): string {
  const pricing = (model.entry as { pricing?: { input_per_million: number | null; output_per_million: number | null; status: string } | null } | null)?.pricing;
  if (pricing === undefined || pricing === null) return '-';
  return `${pricing.input_per_million ?? '-'} / ${pricing.output_per_million ?? '-'}${pricing.status === 'documented' ? '' : ` (${pricing.status})`}`;
}

function printModel(model: ModelSettingView): void {
  printFields([
    ['id', model.id],
    ['provider', orDash(model.provider)],
    ['upstream id', orDash(model.upstream_id)],
    ['mode', orDash(model.mode)],
    ['state', model.enabled ? (model.listed ? 'listed' : 'enabled (provider not configured)') : 'disabled'],
    ['price in/out per 1M', price(model)],
    ['source', `${model.source} (${model.origin})${model.read_only ? ', read-only' : ''}`],
    ['note', orDash(model.note)],
  ]);
}

export function registerModelsCommand(program: Command): void {
  const models = program.command('models').description('the live catalog: models, prices and aliases (docs/catalog.md#models-managed-live)');

  withAdminOptions(models.command('list').description('every model with its state, price and source'))
    .option('--all', 'disabled models too')
    .action(async (options: AdminOptions & { all?: boolean }) => {
      const list = await AdminClient.fromOptions(options).request<{ data: ModelSettingView[] }>('GET', '/models/settings');
      if (options.json === true) return printJson(list);
      printTable(
        ['ID', 'PROVIDER', 'MODE', 'STATE', 'PRICE IN/OUT', 'SOURCE'],
        list.data.filter((model) => options.all === true || model.enabled).map((model) => [model.id, orDash(model.provider), orDash(model.mode), model.enabled ? (model.listed ? 'listed' : 'unlisted') : 'disabled', price(model), model.origin]),
      );
    });

  const setCommand = (name: string, description: string, fixed: Record<string, unknown>) =>
    withAdminOptions(models.command(name).description(description).argument('<id>', 'the model id'))
      .option('--set <field=value>', 'a field of a catalog.models entry: provider, upstreamId, mode, input_modalities, context_window, pricing.input_per_million, … (repeat for more)', collectSetting)
      .option('--note <text>', 'why, kept with the setting')
      .action(async (id: string, options: SetOptions) => {
        const client = AdminClient.fromOptions(options);
        // The fields given go over the admin API's setting of the model, when there is one.
        const current = (await client.request<{ data: ModelSettingView[] }>('GET', '/models/settings')).data.find((model) => model.id === id);
        const body = { ...(current?.override ?? {}), ...options.set, ...fixed, ...(options.note === undefined ? {} : { note: options.note }) };
        const set = await client.request<ModelSettingView>('PUT', modelPath(id), body);
        if (options.json === true) return printJson(set);
        printModel(set);
      });
  setCommand('set', 'add a model, or change one (its price, limits, upstream id); the fields given go over those set before', {});
  setCommand('enable', 'enable a model disabled here', { disabled: false });
  setCommand('disable', 'disable a model: refused, and not listed, on every instance', { disabled: true });

  withAdminOptions(models.command('reset').description('remove the setting made here: a shipped model is as shipped again, an added one is gone').argument('<id>')).action(async (id: string, options: AdminOptions) => {
    await AdminClient.fromOptions(options).request('DELETE', modelPath(id));
    if (options.json === true) return printJson({ id, reset: true });
    printText(`Reset ${id}.\n`);
  });

  withAdminOptions(models.command('aliases').description('service and legacy aliases with their source')).action(async (options: AdminOptions) => {
    const list = await AdminClient.fromOptions(options).request<{ data: AliasView[] }>('GET', '/models/aliases');
    if (options.json === true) return printJson(list);
    printTable(['ALIAS', 'MODEL', 'KIND', 'SOURCE'], list.data.map((alias) => [alias.alias, alias.target, alias.kind, alias.origin]));
  });

  withAdminOptions(models.command('alias').description('point an alias at a model').argument('<alias>').argument('<model>'))
    .option('--service', 'a service alias, listed as a model of its own (a chat model)')
    .option('--note <text>', 'why, kept with the setting')
    .action(async (alias: string, target: string, options: AdminOptions & { service?: boolean; note?: string }) => {
      const set = await AdminClient.fromOptions(options).request<AliasView>('PUT', `/models/aliases/${encodeURIComponent(alias)}`, {
        target,
        kind: options.service === true ? 'service' : 'legacy',
        ...(options.note === undefined ? {} : { note: options.note }),
      });
      if (options.json === true) return printJson(set);
      printText(`${set.alias} → ${set.target} (${set.kind})\n`);
    });

  withAdminOptions(models.command('unalias').description('remove an alias set here').argument('<alias>')).action(async (alias: string, options: AdminOptions) => {
    await AdminClient.fromOptions(options).request('DELETE', `/models/aliases/${encodeURIComponent(alias)}`);
    if (options.json === true) return printJson({ alias, removed: true });
    printText(`Removed alias ${alias}.\n`);
  });

  const routing = program.command('routing').description('routing entries managed live (docs/routing.md#routing-managed-live)');

  withAdminOptions(routing.command('list').description('the config file\'s routing entries (read-only) and those set here')).action(async (options: AdminOptions) => {
    const list = await AdminClient.fromOptions(options).request<{ data: RoutingView[] }>('GET', '/routing');
    if (options.json === true) return printJson(list);
    printTable(['MODEL', 'SOURCE', 'IN FORCE', 'ENTRY'], list.data.map((view) => [view.model, view.origin, view.in_force ? 'yes' : 'no', JSON.stringify(view.entry)]));
  });

  withAdminOptions(routing.command('set').description('set how a model is routed, checked as at start-up').argument('<model>'))
    .option('--set <field=value>', 'a field of the routing entry: deployments=[…], retries=2, fallbacks=[…], cooldown.durationMs=5000, … (repeat for more)', collectSetting)
    .option('--note <text>', 'why, kept with the setting')
    .action(async (model: string, options: SetOptions) => {
      const set = await AdminClient.fromOptions(options).request<RoutingView>('PUT', `/routing/${encodeURIComponent(model)}`, { ...options.set, ...(options.note === undefined ? {} : { note: options.note }) });
      if (options.json === true) return printJson(set);
      printText(`${set.model} routed: ${JSON.stringify(set.entry)}\n`);
    });

  withAdminOptions(routing.command('remove').description('remove a routing entry set here').argument('<model>')).action(async (model: string, options: AdminOptions) => {
    await AdminClient.fromOptions(options).request('DELETE', `/routing/${encodeURIComponent(model)}`);
    if (options.json === true) return printJson({ model, removed: true });
    printText(`Removed the routing of ${model}.\n`);
  });
}
