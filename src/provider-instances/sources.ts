import { Value } from '@sinclair/typebox/value';
import { vendorsWithSettings, type ProvidersConfig } from '../providers/index.js';
import { fingerprintOf } from './store.js';
import type { ProviderInstanceView } from './types.js';

/**
 * The providers the environment and the config file set, as the admin API lists them: read-only,
 * naming where they come from. They win over an instance added through the admin API
 * (docs/providers.md#precedence). A vendor neither sets is not one of them: its built-in
 * defaults hold no credential, and an administrator may give it one.
 */
export function configuredEntries(config: ProvidersConfig['providers'], env: NodeJS.ProcessEnv): Map<string, ProviderInstanceView> {
  const entries = new Map<string, ProviderInstanceView>();
  const view = (name: string, kind: string, settings: Record<string, unknown>, secretFields: readonly string[], source: 'env' | 'config', origin: string): ProviderInstanceView => ({
    name,
    kind,
    source,
    origin,
    read_only: true,
    settings: Object.fromEntries(Object.entries(settings).filter(([field, value]) => !secretFields.includes(field) && value !== undefined)),
    credentials: secretFields.flatMap((field) => (typeof settings[field] === 'string' ? [{ field, fingerprint: fingerprintOf(settings[field]) }] : [])),
    state: 'callable',
    description: null,
    created_at: null,
    updated_at: null,
  });
  for (const { descriptor, settings } of vendorsWithSettings(config)) {
    const variables = descriptor.environment.flatMap((setting) => setting.variables.filter((variable) => env[variable] !== undefined && env[variable] !== ''));
    if (variables.length > 0) {
      entries.set(descriptor.name, view(descriptor.name, descriptor.name, settings, descriptor.secretFields, 'env', `environment: ${variables.join(', ')}`));
    } else if (!Value.Equal(settings, Value.Default(descriptor.settings, {}))) {
      entries.set(descriptor.name, view(descriptor.name, descriptor.name, settings, descriptor.secretFields, 'config', `config file: providers.${descriptor.name}`));
    }
  }
  for (const [index, provider] of config.compatible.entries()) {
    entries.set(provider.name, view(provider.name, 'compatible', { apiKey: provider.apiKey, baseUrl: provider.baseUrl }, ['apiKey'], 'config', `config file: providers.compatible[${index}]`));
  }
  return entries;
}
