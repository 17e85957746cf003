import { anthropicProvider } from './anthropic/index.js';
import type { VendorSettingsSchema } from './descriptor.js';
import { geminiProvider } from './gemini/index.js';
import { createOpenAICompatibleProvider, openaiProvider } from './openai/index.js';

/**
 * The vendors' providers, in the order start-up registers them. Adding a vendor is a folder
 * in src/providers/ exporting its descriptor, and one line here (docs/providers.md).
 */
export const VENDOR_PROVIDERS = [openaiProvider, anthropicProvider, geminiProvider] as const;

export type VendorName = (typeof VENDOR_PROVIDERS)[number]['name'];
/** The `owned_by` of the shipped catalog's models. */
export type VendorOwner = (typeof VENDOR_PROVIDERS)[number]['owner'];

/** The provider (and owner) of a `catalog.models` entry that names none. */
export const DEFAULT_PROVIDER: (typeof VENDOR_PROVIDERS)[number] = openaiProvider;

/** Builds each operator-declared provider of `providers.compatible[]`. */
export const createCompatibleProvider = createOpenAICompatibleProvider;

/** The `providers.<vendor>` members of the config schema, one per vendor. */
export function vendorSettingsSchemas(): { [Name in VendorName]: VendorSettingsSchema } {
  return Object.fromEntries(VENDOR_PROVIDERS.map((vendor) => [vendor.name, vendor.settings])) as { [Name in VendorName]: VendorSettingsSchema };
}

/** The registry name of each owner's provider, for the shipped catalog. */
export const PROVIDER_OF_OWNER = Object.fromEntries(VENDOR_PROVIDERS.map((vendor) => [vendor.owner, vendor.name])) as Record<VendorOwner, VendorName>;
