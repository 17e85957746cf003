import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { ModelOverride } from '../model-api/index.js';
import type { UpstreamHttpOptions } from './shared/upstream-http.js';
import type { Provider } from '../model-api/index.js';

/** The config-file settings of a provider that takes an API key and a base URL (`providers.<name>`). */
export function keyAndBaseUrlSchema(defaultBaseUrl: string) {
  return Type.Object(
    {
      apiKey: Type.Optional(Type.String({ minLength: 1, description: 'the API key, sent as the vendor\'s credential header' })),
      baseUrl: Type.String({ pattern: '^https?://', default: defaultBaseUrl }),
    },
    { additionalProperties: false, default: {} },
  );
}

export type KeyAndBaseUrlSchema = ReturnType<typeof keyAndBaseUrlSchema>;
export type KeyAndBaseUrlSettings = Static<KeyAndBaseUrlSchema>;

/** The kinds of value an environment variable holds (how config/load.ts converts it). */
export type SettingKind = 'string' | 'integer' | 'boolean' | 'list';

/** The environment twin of one setting of `providers.<name>`. */
export interface SettingVariable {
  /** The field of `providers.<name>` it sets. */
  readonly field: string;
  /** Variables read in order; the first one set wins. */
  readonly variables: readonly string[];
  readonly kind: SettingKind;
}

/** The twins of `apiKey` and `baseUrl`, for providers whose settings are just those two. */
export function keyAndBaseUrlVariables(apiKey: string, baseUrl: string): readonly SettingVariable[] {
  return [
    { field: 'apiKey', variables: [apiKey], kind: 'string' },
    { field: 'baseUrl', variables: [baseUrl], kind: 'string' },
  ];
}

/** What a provider that cannot be called lacks: the environment variable(s) to set, and the field of `providers.<name>` they fill. */
export interface MissingSetting {
  variable: string;
  field: string;
}

/**
 * A model the vendor's provider serves, shipped in the catalog: the fields of a
 * `catalog.models` entry, plus `sameAs`.
 */
export type ShippedModel = Omit<ModelOverride, 'provider' | 'disabled'> & {
  /**
   * The catalog id of the same model at another provider (a cloud's Claude is
   * `claude-sonnet-4-5`): its properties are this entry's defaults, and a routing deployment on
   * this provider for that id sends this entry's upstream id.
   */
  sameAs?: string;
  /**
   * Where the operator declared it (an Azure deployment: `deployments[0]`), for a start-up error
   * when its `sameAs` is not a catalog model. A vendor's built-in entry has none: when the model it
   * is the same as is not in the catalog's data, it is left out with it.
   */
  declaredAt?: string;
};

/** What a provider is built from: its registry name, its settings (or a routing deployment's) and the shared HTTP options. */
export interface ProviderBuildOptions<Settings> {
  name: string;
  settings: Settings;
  http: UpstreamHttpOptions;
}

/**
 * Everything the gateway knows of one vendor's provider, exported by its adapter folder and
 * listed once in `src/providers/vendors.ts`: the config file, the environment, the redaction of
 * credentials, start-up, `/readyz`, `modelgate status` and the shipped catalog read it from here
 * and name no vendor themselves (docs/decisions/0023-provider-settings-schemas.md).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list holds descriptors of different settings; each is checked where it is written
export interface ProviderDescriptor<Name extends string = string, Owner extends string = string, Schema extends TObject = TObject<any>> {
  /** Registry name, and the key of its settings under `providers` in the config file. */
  readonly name: Name;
  /** The `owned_by` of its own models in the shipped catalog (the company, which may differ from the name). */
  readonly owner: Owner;
  /** The schema of `providers.<name>`: its credentials of their own kind, endpoint, region, version… with defaults. */
  readonly settings: Schema;
  /** The environment twins of its settings. */
  readonly environment: readonly SettingVariable[];
  /** The setting a routing deployment's `apiKeyEnv` gives (its API key, or what the vendor takes in its place). */
  readonly credentialField: keyof Static<Schema> & string;
  /** Settings that are secrets: a deployment gives them through `secretsEnv`, never in the config file's routing. */
  readonly secretFields: readonly (keyof Static<Schema> & string)[];
  /**
   * A preset of an OpenAI-compatible host: a `providers.compatible[]` entry of the same name
   * replaces it (configurations written before the preset existed keep working).
   */
  readonly yieldsToCompatible?: boolean;
  /** Every secret value the settings hold or lead to (a key file's private key), redacted by value from every log and error. */
  secretValues(settings: Static<Schema>): string[];
  /** What to set before it can be called, or null when its settings suffice. */
  missing(settings: Static<Schema>): MissingSetting | null;
  /** Its settings in words for start-up and `modelgate status` (region, endpoint, credential kind), never a secret. */
  describe(settings: Static<Schema>): string;
  /** Its models in the shipped catalog (a cloud's, from its settings: its deployments). */
  models?(settings: Static<Schema>): readonly ShippedModel[];
  /** Builds the provider; routing deployments call it again with their own settings. */
  create(options: ProviderBuildOptions<Static<Schema>>): Provider;
}

/** The descriptor members every key-and-base-URL provider shares, from its two variables. */
export function keyAndBaseUrlDescriptor(defaultBaseUrl: string, apiKeyVariable: string, baseUrlVariable: string) {
  return {
    settings: keyAndBaseUrlSchema(defaultBaseUrl),
    environment: keyAndBaseUrlVariables(apiKeyVariable, baseUrlVariable),
    credentialField: 'apiKey' as const,
    secretFields: ['apiKey' as const],
    secretValues: (settings: KeyAndBaseUrlSettings) => (settings.apiKey === undefined ? [] : [settings.apiKey]),
    missing: (settings: KeyAndBaseUrlSettings): MissingSetting | null => (settings.apiKey === undefined ? { variable: apiKeyVariable, field: 'apiKey' } : null),
    describe: (settings: KeyAndBaseUrlSettings) => `${settings.baseUrl}${settings.apiKey === undefined ? ', no API key' : ', API key'}`,
  };
}
