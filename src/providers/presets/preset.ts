import { Type } from '@sinclair/typebox';
import type { MissingSetting, ProviderDescriptor, ShippedModel } from '../descriptor.js';
export { perMillion } from '../shared/shipped-price.js';
import { createOpenAICompatibleProvider } from '../openai/index.js';

/**
 * An OpenAI-compatible host the gateway knows (Groq, Together, …, or a local server): data
 * only. Its descriptor is made by `presetDescriptor`, so a new host is one entry of data.
 */
export interface HostPreset {
  /** Registry name, config key `providers.<name>`, and the prefix of its catalog ids (`<name>/<its model id>`). */
  name: string;
  /** The `owned_by` of its models that no maker is given for. */
  owner: string;
  /** The base URL with its version path, as the host's docs give it; none for a local server (the operator's address). */
  baseUrl?: string;
  /** The host's API key variable; a local server's key is optional. */
  apiKeyVariable: string;
  baseUrlVariable: string;
  /** Its shipped models, by the host's own ids (the catalog id is `<name>/<id>`); a local server ships none. */
  models: readonly PresetModel[];
}

/** A model of a preset's catalog: the host's own id, and the rest of a `catalog.models` entry. */
export type PresetModel = Omit<ShippedModel, 'id' | 'upstreamId'> & { id: string };

function presetSchema(preset: HostPreset) {
  return Type.Object(
    {
      apiKey: Type.Optional(Type.String({ minLength: 1, description: 'sent as Authorization: Bearer' })),
      baseUrl:
        preset.baseUrl === undefined ? Type.Optional(Type.String({ pattern: '^https?://' })) : Type.String({ pattern: '^https?://', default: preset.baseUrl }),
    },
    { additionalProperties: false, default: {} },
  );
}

export type PresetSchema = ReturnType<typeof presetSchema>;


/** The descriptor of a preset host: the OpenAI-compatible adapter with the host's address, key and catalog. */
export function presetDescriptor<Name extends string, Owner extends string>(preset: HostPreset & { name: Name; owner: Owner }): ProviderDescriptor<Name, Owner, PresetSchema> {
  const local = preset.baseUrl === undefined;
  const shipped: ShippedModel[] = preset.models.map((model) => ({ ...model, id: `${preset.name}/${model.id}`, upstreamId: model.id }));
  return {
    name: preset.name,
    owner: preset.owner,
    settings: presetSchema(preset),
    environment: [
      { field: 'apiKey', variables: [preset.apiKeyVariable], kind: 'string' },
      { field: 'baseUrl', variables: [preset.baseUrlVariable], kind: 'string' },
    ],
    credentialField: 'apiKey',
    secretFields: ['apiKey'],
    yieldsToCompatible: true,
    secretValues: (settings) => (settings.apiKey === undefined ? [] : [settings.apiKey]),
    missing: (settings): MissingSetting | null => {
      if (local) return settings.baseUrl === undefined ? { variable: preset.baseUrlVariable, field: 'baseUrl' } : null;
      return settings.apiKey === undefined ? { variable: preset.apiKeyVariable, field: 'apiKey' } : null;
    },
    describe: (settings) => `${settings.baseUrl ?? '(no base URL)'}${settings.apiKey === undefined ? ', no API key' : ', API key'}`,
    models: () => shipped,
    create: ({ name, settings, http }) => createOpenAICompatibleProvider({ name, apiKey: settings.apiKey, baseUrl: settings.baseUrl ?? 'http://127.0.0.1', http }),
  };
}
