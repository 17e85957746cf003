import { Type, type Static } from '@sinclair/typebox';
import type { UpstreamHttpOptions } from './shared/upstream-http.js';
import type { Provider } from '../model-api/index.js';

/** The config-file settings of a vendor's provider (`providers.<name>`): its key and its base URL. */
export function vendorSettingsSchema(defaultBaseUrl: string) {
  return Type.Object(
    {
      apiKey: Type.Optional(Type.String({ minLength: 1 })),
      baseUrl: Type.String({ pattern: '^https?://', default: defaultBaseUrl }),
    },
    { additionalProperties: false, default: {} },
  );
}

export type VendorSettingsSchema = ReturnType<typeof vendorSettingsSchema>;
export type VendorSettings = Static<VendorSettingsSchema>;

/** What a provider is built from: its registry name, its settings (or a routing deployment's) and the shared HTTP options. */
export interface ProviderBuildOptions {
  name: string;
  apiKey: string | undefined;
  baseUrl: string;
  http: UpstreamHttpOptions;
}

/**
 * Everything the gateway knows of one vendor's provider, exported by its adapter folder and
 * listed once in `src/providers/vendors.ts`: the config file, the environment, the redaction of
 * credentials, start-up and the shipped catalog read it from here and name no vendor themselves.
 */
export interface ProviderDescriptor<Name extends string = string, Owner extends string = string> {
  /** Registry name, and the key of its settings under `providers` in the config file. */
  readonly name: Name;
  /** The `owned_by` of its models in the shipped catalog (the company, which may differ from the name). */
  readonly owner: Owner;
  /** The schema of `providers.<name>`, with the default base URL. */
  readonly settings: VendorSettingsSchema;
  /** The environment twins of `providers.<name>.apiKey` and `.baseUrl`. */
  readonly environment: { readonly apiKey: string; readonly baseUrl: string };
  /** Builds the provider; routing deployments call it again with their own key or base URL. */
  create(options: ProviderBuildOptions): Provider;
}
