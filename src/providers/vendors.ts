import type { Static, TObject } from '@sinclair/typebox';
import { anthropicProvider } from './anthropic/index.js';
import { azureProvider } from './azure/index.js';
import { bedrockProvider } from './bedrock/index.js';
import type { ProviderDescriptor, ShippedModel } from './descriptor.js';
import { geminiProvider } from './gemini/index.js';
import { createOpenAICompatibleProvider, openaiProvider } from './openai/index.js';
import { mistralProvider } from './mistral/index.js';
import { PRESET_PROVIDERS } from './presets/index.js';
import { vertexProvider } from './vertex/index.js';

/**
 * The vendors' providers, in the order start-up registers them. Adding a vendor is a folder
 * in src/providers/ exporting its descriptor, and one line here (docs/providers.md).
 */
export const VENDOR_PROVIDERS = [openaiProvider, anthropicProvider, geminiProvider, bedrockProvider, vertexProvider, azureProvider, mistralProvider, ...PRESET_PROVIDERS] as const;

export type VendorDescriptor = (typeof VENDOR_PROVIDERS)[number];
export type VendorName = VendorDescriptor['name'];
/** The `owned_by` of the shipped catalog's models. */
export type VendorOwner = VendorDescriptor['owner'];

/** The provider (and owner) of a `catalog.models` entry that names none. */
export const DEFAULT_PROVIDER: VendorDescriptor = openaiProvider;

/** Builds each operator-declared provider of `providers.compatible[]`. */
export const createCompatibleProvider = createOpenAICompatibleProvider;

/** The `providers.<vendor>` members of the config schema, one per vendor. */
export function vendorSettingsSchemas(): { [D in VendorDescriptor as D['name']]: D['settings'] } {
  return Object.fromEntries(VENDOR_PROVIDERS.map((vendor) => [vendor.name, vendor.settings])) as { [D in VendorDescriptor as D['name']]: D['settings'] };
}

/** The settings of every vendor, as the config holds them under `providers`. */
export type VendorSettingsMap = { [D in VendorDescriptor as D['name']]: Static<D['settings']> };

/**
 * A descriptor with its settings, typed loosely once here: each descriptor's functions take
 * its own settings, which the config schema validated against its own schema.
 */
export interface DescribedVendor {
  descriptor: ProviderDescriptor<string, string, TObject>;
  settings: Static<TObject>;
}

/** The descriptor of a kind of provider (a vendor's name), typed loosely as DescribedVendor's; undefined for a name no vendor has. */
export function vendorDescriptor(kind: string): ProviderDescriptor<string, string, TObject> | undefined {
  return VENDOR_PROVIDERS.find((vendor) => vendor.name === kind) as unknown as ProviderDescriptor<string, string, TObject> | undefined;
}

/** Every vendor with the settings the config gives it; a preset that a compatible provider of its name replaces is left out. */
export function vendorsWithSettings(providers: VendorSettingsMap & { compatible?: readonly { name: string }[] }): DescribedVendor[] {
  const replaced = new Set((providers.compatible ?? []).map((provider) => provider.name));
  return VENDOR_PROVIDERS.filter((vendor) => !(vendor.yieldsToCompatible === true && replaced.has(vendor.name))).map((vendor) => ({
    descriptor: vendor as unknown as ProviderDescriptor<string, string, TObject>,
    settings: providers[vendor.name] as Static<TObject>,
  }));
}

/** The models each vendor ships in the catalog, with its name and owner. */
export function shippedModels(providers: VendorSettingsMap & { compatible?: readonly { name: string }[] }): { provider: string; owner: string; models: readonly ShippedModel[] }[] {
  return vendorsWithSettings(providers).map(({ descriptor, settings }) => ({
    provider: descriptor.name,
    owner: descriptor.owner,
    models: descriptor.models?.(settings) ?? [],
  }));
}

/**
 * The registry name of each owner's provider, for the shipped catalog: the first listed
 * vendor of that owner (a cloud that also sells its maker's models comes after the maker's own API).
 */
export const PROVIDER_OF_OWNER = Object.fromEntries(
  [...VENDOR_PROVIDERS].reverse().map((vendor) => [vendor.owner, vendor.name]),
) as Record<VendorOwner, VendorName>;
