import type { CatalogModel, ModelMode, ResolvedModel } from '../catalog/index.js';
import { ConfigError, configErrorOf, type DeploymentConfig, type FailureClass, type RoutingEntry } from '../config/index.js';
import { addKnownSecrets } from '../logs/index.js';
import { ProviderSettingsError, type ProviderVariants } from '../providers/index.js';
import type { Provider } from '../model-api/index.js';
import type { CooldownPolicy } from './cooldowns.js';

/** One way to reach a model: a provider (perhaps with its own credential or base URL) and the id sent to it. */
export interface Deployment {
  /** Cooldowns, statistics and per-minute counts are kept under it: `<model>/<name>`. */
  readonly key: string;
  /** As the log and the metrics show it. */
  readonly name: string;
  readonly providerName: string;
  readonly provider: Provider;
  readonly upstreamId: string;
  readonly weight: number;
  readonly rpm: number | undefined;
  readonly tpm: number | undefined;
}

/** A model as routing serves it: its deployments and their cooldown policy. */
export interface RouteTarget {
  readonly resolved: ResolvedModel;
  readonly deployments: readonly Deployment[];
  readonly cooldown: CooldownPolicy;
}

/** How requests for one model are served (one entry of `routing`). */
export interface RoutePlan {
  readonly primary: RouteTarget;
  readonly retries: number;
  readonly backoffMs: number;
  /** Weights scaled by recent latency and the rate limit left (`strategy: latency`); else weights alone. */
  readonly latencyAware: boolean;
  /** The longest Retry-After waited for before the retry on the same deployment. */
  readonly maxRetryWaitMs: number;
  readonly fallbacks: readonly RouteTarget[];
  readonly fallbackOn: ReadonlySet<FailureClass>;
  readonly firstByteMs: number | undefined;
  readonly totalMs: number;
}

/** What compiling the routing configuration needs from the rest of the gateway. */
export interface PlanSources {
  catalog: { find(requested: string): ResolvedModel | undefined; counterpart(id: string, provider: string): CatalogModel | undefined };
  providers: { get(name: string): Provider; names(): string[] };
  variants: ProviderVariants;
  env: NodeJS.ProcessEnv;
  /** timeouts.totalMs when an entry gives none (upstream.timeoutMs). */
  defaultTotalMs: number;
}

/** The provider capability that serves the models of each mode. */
const CAPABILITY_OF_MODE: { readonly [M in ModelMode]: 'chat' | 'embeddings' | 'images' | 'speech' | 'transcription' } = {
  chat: 'chat',
  embedding: 'embeddings',
  image_generation: 'images',
  audio_speech: 'speech',
  audio_transcription: 'transcription',
};

function invalid(field: string, problem: string): ConfigError {
  return new ConfigError(`invalid setting ${field}: ${problem}`);
}

/** The problems of a routing list, gathered so that all of them are reported at once (each once). */
class Problems {
  private readonly found = new Set<string>();

  /** What `compute` returns, or undefined after noting the ConfigError it threw. */
  collect<T>(compute: () => T): T | undefined {
    try {
      return compute();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      this.found.add(error.message);
      return undefined;
    }
  }

  throwIfAny(): void {
    if (this.found.size > 0) throw configErrorOf([...this.found]);
  }
}

function findModel(sources: PlanSources, id: string, field: string): ResolvedModel {
  const resolved = sources.catalog.find(id);
  if (resolved === undefined) throw invalid(field, `"${id}" is not a model or alias of the catalog (GET /v1/models lists them; declare others in catalog.models)`);
  return resolved;
}

/** The value of an environment variable a deployment names, noted as a secret; a ConfigError naming the field when it is not set. */
function secretFrom(sources: PlanSources, variable: string, field: string): string {
  const value = sources.env[variable];
  if (value === undefined || value === '') throw invalid(field, `the environment variable ${variable} is not set`);
  addKnownSecrets([value]);
  return value;
}

/** The provider itself, or a variant of it with the deployment's own credential, base URL or settings. */
function providerOf(sources: PlanSources, deployment: DeploymentConfig, field: string, providerField: string): Provider {
  if (!sources.providers.names().includes(deployment.provider)) {
    throw invalid(providerField, `"${deployment.provider}" is not a provider of this gateway (${sources.providers.names().join(', ')})`);
  }
  const credential = deployment.apiKeyEnv === undefined ? undefined : secretFrom(sources, deployment.apiKeyEnv, `${field}.apiKeyEnv`);
  const secrets = Object.fromEntries(
    Object.entries(deployment.secretsEnv ?? {}).map(([name, variable]) => [name, secretFrom(sources, variable, `${field}.secretsEnv.${name}`)]),
  );
  const settings = { ...deployment.settings, ...(deployment.baseUrl === undefined ? {} : { baseUrl: deployment.baseUrl }) };
  if (credential === undefined && Object.keys(secrets).length === 0 && Object.keys(settings).length === 0) {
    try {
      return sources.providers.get(deployment.provider);
    } catch {
      throw invalid(providerField, `${deployment.provider} has no credential on this gateway: configure it, or give this deployment apiKeyEnv`);
    }
  }
  try {
    return sources.variants(deployment.provider, { credential, settings, secrets })!;
  } catch (error) {
    if (error instanceof ProviderSettingsError) throw invalid(`${field}.${error.field}`, error.message);
    throw error;
  }
}

function deploymentsOf(sources: PlanSources, problems: Problems, entry: RoutingEntry | undefined, resolved: ResolvedModel, field: string): Deployment[] {
  const configured: DeploymentConfig[] =
    entry === undefined || entry.deployments.length === 0 ? [{ provider: resolved.model.provider, weight: 1 }] : entry.deployments;
  const names = new Set<string>();
  const capability = CAPABILITY_OF_MODE[resolved.model.entry.mode];
  return configured.flatMap((deployment, index) => {
    const at = `${field}.deployments[${index}]`;
    const providerField = entry === undefined ? field : `${at}.provider`;
    const count = configured.slice(0, index).filter((other) => other.provider === deployment.provider).length;
    const name = deployment.name ?? (count === 0 ? deployment.provider : `${deployment.provider}#${count + 1}`);
    const unique = problems.collect(() => {
      if (names.has(name)) throw invalid(`${at}.name`, `"${name}" names another deployment of this model too; give each its own name`);
      names.add(name);
      return true;
    });
    const provider = problems.collect(() => {
      const found = providerOf(sources, deployment, at, providerField);
      if (found[capability] === undefined) throw invalid(providerField, `${deployment.provider} does not serve ${resolved.model.entry.mode} models like ${resolved.id}`);
      return found;
    });
    if (unique === undefined || provider === undefined) return [];
    return [{
      key: `${resolved.id}/${name}`,
      name,
      providerName: deployment.provider,
      provider,
      upstreamId: deployment.upstreamId ?? upstreamIdOn(sources, resolved, deployment.provider),
      weight: deployment.weight,
      rpm: deployment.rpm,
      tpm: deployment.tpm,
    }];
  });
}

/**
 * The id a deployment on `provider` sends for the model: the model's own on its provider; on
 * another, the id of that provider's entry for the same model (a cloud's Claude), else the
 * model's own (a compatible server that serves the same id).
 */
function upstreamIdOn(sources: PlanSources, resolved: ResolvedModel, provider: string): string {
  if (provider === resolved.model.provider) return resolved.model.upstreamId;
  return sources.catalog.counterpart(resolved.id, provider)?.upstreamId ?? resolved.model.upstreamId;
}

function targetOf(sources: PlanSources, problems: Problems, entry: RoutingEntry | undefined, resolved: ResolvedModel, field: string): RouteTarget {
  return {
    resolved,
    deployments: deploymentsOf(sources, problems, entry, resolved, field),
    cooldown: entry?.cooldown ?? { failures: 3, windowMs: 60_000, durationMs: 30_000 },
  };
}

/**
 * Compiles the `routing` list into a plan per catalog id. Every problem a request would meet
 * later — an unknown model or provider, a credential variable not set, a fallback of another
 * mode — stops start-up (or is refused by a reload) with an error naming the field; all of
 * them are listed at once, not only the first.
 */
export function compilePlans(entries: readonly RoutingEntry[], sources: PlanSources): Map<string, RoutePlan> {
  const problems = new Problems();
  const resolvedEntries = entries.flatMap((entry, index) => {
    const field = `routing[${index}]`;
    const resolved = problems.collect(() => findModel(sources, entry.model, `${field}.model`));
    return resolved === undefined ? [] : [{ entry, field, resolved }];
  });
  const byId = new Map<string, (typeof resolvedEntries)[number]>();
  const routed = resolvedEntries.filter((item) =>
    problems.collect(() => {
      const earlier = byId.get(item.resolved.id);
      if (earlier !== undefined) throw invalid(`${item.field}.model`, `"${item.entry.model}" is ${item.resolved.id}, which ${earlier.field} routes already`);
      byId.set(item.resolved.id, item);
      return true;
    }),
  );
  const plans = new Map<string, RoutePlan>();
  for (const { entry, field, resolved } of routed) {
    const mode = resolved.model.entry.mode;
    const primary = targetOf(sources, problems, entry, resolved, field);
    const fallbacks = entry.fallbacks.flatMap((id, index) => {
      const at = `${field}.fallbacks[${index}]`;
      const fallback = problems.collect(() => {
        const found = findModel(sources, id, at);
        if (found.id === resolved.id) throw invalid(at, `"${id}" is the routed model itself`);
        if (found.model.entry.mode !== mode) throw invalid(at, `"${id}" is a ${found.model.entry.mode} model; a fallback of ${entry.model} must be a ${mode} model`);
        return found;
      });
      if (fallback === undefined) return [];
      // A fallback is served by its own deployments, when routed; its own fallbacks are not followed (no chains, no loops).
      const own = byId.get(fallback.id);
      return [targetOf(sources, problems, own?.entry, fallback, own?.field ?? at)];
    });
    plans.set(resolved.id, {
      primary,
      retries: entry.retries,
      backoffMs: entry.backoffMs,
      latencyAware: entry.strategy === 'latency',
      maxRetryWaitMs: entry.maxRetryWaitMs,
      fallbacks,
      fallbackOn: new Set(entry.fallbackOn),
      firstByteMs: entry.timeouts.firstByteMs,
      totalMs: entry.timeouts.totalMs ?? sources.defaultTotalMs,
    });
  }
  problems.throwIfAny();
  return plans;
}
