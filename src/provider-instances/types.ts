/** Where a provider's settings come from: the environment, the config file, or the admin API (stored in the database). */
export type ProviderSource = 'env' | 'config' | 'stored';

/** `GET /admin/v1/providers`: one provider instance, never a secret (docs/admin-api.md#providers). */
export interface ProviderInstanceView {
  name: string;
  /** The kind of provider: a descriptor's name, or `compatible` for a providers.compatible[] entry. */
  kind: string;
  source: ProviderSource;
  /** Where it comes from, in words: `environment: <its variables>`, `config file: providers.<name>`, `admin API`. */
  origin: string;
  /** Entries of the environment and the config file are changed there, not through the admin API. */
  read_only: boolean;
  /** Its settings without the secret fields. */
  settings: Record<string, unknown>;
  /** The secret fields that are set, each with its fingerprint (the secret itself is never shown again). */
  credentials: { field: string; fingerprint: string }[];
  /**
   * `callable`; `unconfigured` (a credential is missing); `shadowed` (a stored instance whose name
   * the environment or the config file also sets: theirs is in force).
   */
  state: 'callable' | 'unconfigured' | 'shadowed';
  /** Its settings in words (endpoint, region, credential kind), as start-up and status describe it. */
  description: string | null;
  created_at: string | null;
  updated_at: string | null;
}

/** `GET /admin/v1/providers/kinds`: a kind of provider and the schema of its settings, from which forms are generated. */
export interface ProviderKindView {
  kind: string;
  /** The JSON Schema of its settings (`providers.<kind>` in the config file), with descriptions and defaults. */
  settings_schema: Record<string, unknown>;
  /** Its settings that are secrets: written, never read back. */
  secret_fields: string[];
  /** The environment variables of its settings. */
  environment: { field: string; variables: string[] }[];
}

/** `POST /admin/v1/providers`: a new instance of a kind, its settings as `providers.<kind>` takes them (secrets included). */
export interface NewProviderInstanceInput {
  name: string;
  kind: string;
  settings: Record<string, unknown>;
}

/** `PATCH /admin/v1/providers/{name}`: the settings to change; a field set to null is removed, a secret left out is kept. */
export interface ProviderInstancePatch {
  settings: Record<string, unknown>;
}

/** `POST /admin/v1/providers/{name}/test`: the outcome of one tiny request through the provider. */
export interface ProviderTestView {
  ok: boolean;
  /** The upstream model the request went to. */
  model: string | null;
  latency_ms: number;
  /** What went wrong, as a caller would see it (never a secret). */
  error: { code: string; message: string } | null;
}
