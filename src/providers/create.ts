import type { Static, TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { ProviderDescriptor } from './descriptor.js';
import { createUpstreamDispatcher, type UpstreamHttpOptions } from './shared/upstream-http.js';
import type { MissingCredential } from './registry.js';
import type { Provider } from '../model-api/index.js';
import { createCompatibleProvider, vendorsWithSettings, type DescribedVendor, type VendorSettingsMap } from './vendors.js';
import type { CompatibleProviderConfig } from './compatible-settings.js';
import type { UpstreamTracing } from '../telemetry/index.js';

/**
 * The configuration's slice providers are built from: its `providers` section (each vendor's
 * settings, by its own schema, and the compatible servers) and the upstream HTTP settings.
 */
export interface ProvidersConfig {
  readonly providers: VendorSettingsMap & { readonly compatible: readonly CompatibleProviderConfig[] };
  readonly upstream: { readonly timeoutMs: number; readonly streamIdleTimeoutMs: number; readonly connectionsPerOrigin: number };
}

/** What a deployment of routing may change of a provider: its credential and its own settings. */
export interface ProviderOverrides {
  /** The provider's credential (a deployment's `apiKeyEnv`): its API key, or what the vendor takes in its place. */
  credential?: string | undefined;
  /** Settings of `providers.<name>` the deployment changes (its region, base URL, …), never a secret. */
  settings?: Readonly<Record<string, unknown>> | undefined;
  /** Secret settings, read from the environment variables the deployment names. */
  secrets?: Readonly<Record<string, string>> | undefined;
}

/** A deployment's overrides that the provider's settings do not take; the message names the field (relative to the deployment). */
export class ProviderSettingsError extends Error {
  override name = 'ProviderSettingsError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Builds another instance of a configured provider with its own settings (a routing
 * deployment), on the same pooled dispatcher; undefined when no provider has that name.
 * Throws a ProviderSettingsError for settings the provider does not take.
 */
export type ProviderVariants = (name: string, overrides: ProviderOverrides) => Provider | undefined;

/**
 * Builds a provider of a vendor's kind under a name of its own, on the same pooled dispatcher,
 * from settings already checked against the kind's schema (an instance an administrator added).
 */
export type ProviderInstanceBuilder = (descriptor: ProviderDescriptor<string, string, TObject>, name: string, settings: Static<TObject>) => Provider;

/** How a compatible provider's settings look: its key and base URL only. */
const COMPATIBLE = { credentialField: 'apiKey', secretFields: ['apiKey'], fields: ['apiKey', 'baseUrl'] } as const;

interface Builder {
  build(overrides: ProviderOverrides): Provider;
}

/** The settings a deployment's overrides make of the configured ones; throws for a field the provider does not take. */
function overridden(
  configured: Readonly<Record<string, unknown>>,
  overrides: ProviderOverrides,
  shape: { credentialField: string; secretFields: readonly string[]; fields: readonly string[] },
): Record<string, unknown> {
  const settings: Record<string, unknown> = { ...configured };
  for (const [field, value] of Object.entries(overrides.settings ?? {})) {
    if (shape.secretFields.includes(field)) throw new ProviderSettingsError(`settings.${field}`, `${field} is a secret: give it with secretsEnv (the variable that holds it), never in the config file`);
    if (!shape.fields.includes(field)) throw new ProviderSettingsError(`settings.${field}`, `is not a setting of this provider (its settings: ${shape.fields.join(', ')})`);
    settings[field] = value;
  }
  for (const [field, value] of Object.entries(overrides.secrets ?? {})) {
    if (!shape.secretFields.includes(field)) throw new ProviderSettingsError(`secretsEnv.${field}`, `is not a secret setting of this provider (its secrets: ${shape.secretFields.join(', ')})`);
    settings[field] = value;
  }
  if (overrides.credential !== undefined) settings[shape.credentialField] = overrides.credential;
  return settings;
}

function vendorBuilder({ descriptor, settings }: DescribedVendor, http: UpstreamHttpOptions): Builder {
  const shape = { credentialField: descriptor.credentialField, secretFields: descriptor.secretFields, fields: Object.keys(descriptor.settings.properties) };
  return {
    build(overrides) {
      const merged = overridden(settings, overrides, shape);
      const problem = Value.Errors(descriptor.settings, merged).First();
      if (problem !== undefined) throw new ProviderSettingsError(`settings${problem.path.replaceAll('/', '.')}`, problem.message.charAt(0).toLowerCase() + problem.message.slice(1));
      return descriptor.create({ name: descriptor.name, settings: merged, http });
    },
  };
}

/**
 * Builds every provider the config declares, and the means to build variants of them. All of
 * them share ONE pooled keep-alive dispatcher, so connections to each upstream origin are
 * reused across requests. `tracing`, set when traces are exported, makes each call a span.
 */
export function createProviders(
  config: ProvidersConfig,
  options: { tracing?: UpstreamTracing } = {},
): { providers: Provider[]; variants: ProviderVariants; instance: ProviderInstanceBuilder } {
  const http: UpstreamHttpOptions = {
    dispatcher: createUpstreamDispatcher(config.upstream),
    timeoutMs: config.upstream.timeoutMs,
    streamIdleTimeoutMs: config.upstream.streamIdleTimeoutMs,
    ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
  };
  const builders = new Map<string, Builder>([
    ...vendorsWithSettings(config.providers).map((vendor) => [vendor.descriptor.name, vendorBuilder(vendor, http)] as const),
    ...config.providers.compatible.map(
      (provider) =>
        [
          provider.name,
          {
            build: (overrides: ProviderOverrides) => {
              const settings = overridden({ apiKey: provider.apiKey, baseUrl: provider.baseUrl }, overrides, COMPATIBLE) as { apiKey?: string; baseUrl: string };
              return createCompatibleProvider({ name: provider.name, apiKey: settings.apiKey, baseUrl: settings.baseUrl, http });
            },
          },
        ] as const,
    ),
  ]);
  return {
    providers: [...builders.values()].map((builder) => builder.build({})),
    variants: (name, overrides) => builders.get(name)?.build(overrides),
    instance: (descriptor, name, settings) => descriptor.create({ name, settings, http }),
  };
}

/**
 * The vendors' providers that cannot be called, with what to set. They stay registered so
 * a request for one of their models is answered with `provider_not_configured` naming the
 * variable, not with a vendor's refusal. A compatible provider's key is optional (a local
 * server needs none), so it is never missing.
 */
export function missingCredentials(config: Pick<ProvidersConfig, 'providers'>): Map<string, MissingCredential> {
  const missing = new Map<string, MissingCredential>();
  for (const { descriptor, settings } of vendorsWithSettings(config.providers)) {
    const lacking = descriptor.missing(settings);
    if (lacking !== null) missing.set(descriptor.name, { variable: lacking.variable, setting: `providers.${descriptor.name}.${lacking.field}` });
  }
  return missing;
}

/** Each vendor's settings in words (region, endpoint, credential kind), never a secret, for start-up and status. */
export function providerDescriptions(config: Pick<ProvidersConfig, 'providers'>): Map<string, string> {
  return new Map(vendorsWithSettings(config.providers).map(({ descriptor, settings }) => [descriptor.name, descriptor.describe(settings)]));
}

/** Every secret value the vendors' settings hold or lead to, and the compatible providers' keys: redacted by value. */
export function providerSecrets(config: Pick<ProvidersConfig, 'providers'>): string[] {
  return [
    ...vendorsWithSettings(config.providers).flatMap(({ descriptor, settings }) => descriptor.secretValues(settings)),
    ...config.providers.compatible.flatMap((provider) => (provider.apiKey === undefined ? [] : [provider.apiKey])),
  ];
}
