import type { PublicModelEntry } from '../catalog/index.js';
import type { RoutingEntry } from '../config/index.js';

/** Where a catalog setting comes from: the shipped catalog, the config file, or the admin API (stored in the database). */
export type LiveSource = 'shipped' | 'config' | 'stored';

/** When and why an administrator set a stored setting. */
export interface StoredFacts {
  note: string | null;
  updated_by: string | null;
  updated_at: string | null;
}

/** `GET /admin/v1/models/settings`: one model of the catalog with where it comes from (docs/admin-api.md#models-and-prices). */
export interface ModelSettingView extends StoredFacts {
  id: string;
  provider: string | null;
  upstream_id: string | null;
  mode: string | null;
  /** False for a model disabled in the config file or through the admin API (it is refused, not listed). */
  enabled: boolean;
  /** Whether `GET /v1/models` lists it now: enabled, and its provider can be called. */
  listed: boolean;
  source: LiveSource;
  /** Where it comes from, in words: `shipped catalog`, `config file: catalog.models[2]`, `admin API`. */
  origin: string;
  /** A model of the config file is changed there, not through the admin API. */
  read_only: boolean;
  /** The admin API's setting of it (a catalog.models entry without its id), when there is one. */
  override: Record<string, unknown> | null;
  /** The entry `GET /v1/models` shows for it; null when it is disabled. */
  entry: PublicModelEntry | null;
}

/** `GET /admin/v1/models/aliases`: an alias and the model it names. */
export interface AliasView extends StoredFacts {
  alias: string;
  target: string;
  /** service: a stable name listed as a model of its own (`modelgate/fast`); legacy: a short name in the `aliases` map. */
  kind: 'service' | 'legacy';
  source: LiveSource;
  origin: string;
  read_only: boolean;
}

/** `GET /admin/v1/routing`: one routing entry with where it comes from (docs/admin-api.md#routing). */
export interface RoutingView extends StoredFacts {
  model: string;
  entry: RoutingEntry;
  source: 'config' | 'stored';
  origin: string;
  read_only: boolean;
  /** A stored entry for a model the config file routes too is not in force: the file's is. */
  in_force: boolean;
}
