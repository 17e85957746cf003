import { describeRedis, describeStorage } from '../config/index.js';
import type { ProviderSummary } from '../providers/index.js';
import { DASHBOARD_PATH, type RunningGateway } from '../server/index.js';

/** What start-up tells the operator, as lines to print and as fields for the process log. */
export interface StartupReport {
  lines: string[];
  fields: Record<string, unknown>;
}

function providerLines(providers: readonly ProviderSummary[]): string[] {
  const configured = providers.filter((provider) => provider.configured);
  const missing = providers.filter((provider) => !provider.configured);
  const lines = configured.length > 0 ? configured.map((provider, index) => `${index === 0 ? 'providers    ' : '             '}${provider.name}${provider.description === null ? '' : ` (${provider.description})`}`) : ['providers    none configured'];
  if (missing.length > 0) {
    // One line: a gateway ships many vendors, and most operators use a few of them.
    lines.push(`             not configured, their models are not served: ${missing.map((provider) => `${provider.name} (set ${provider.missing!.variable})`).join(', ')}`);
  }
  if (configured.length === 0) {
    lines.push('             no provider has a credential: every model call is refused until one is set (see docs/configuration.md)');
  }
  return lines;
}

/**
 * The lines after "modelgate listening on …": which config file was read, which providers
 * can be called and which need a credential, storage, Redis, and where the docs (and the
 * dashboard) are.
 */
export function startupReport(gateway: RunningGateway, configFile: string | undefined): StartupReport {
  const { config, providers } = gateway.context;
  const summaries = providers.summaries();
  const docsUrl = `${gateway.url}/docs`;
  const dashboardUrl = `${gateway.url}${DASHBOARD_PATH}`;
  const lines = [
    `config file  ${configFile ?? `none (no modelgate.yaml in ${process.cwd()}): defaults and environment`}`,
    ...providerLines(summaries),
    `storage      ${describeStorage(config)}`,
    `redis        ${describeRedis(config)}`,
    `docs         ${docsUrl} (OpenAPI document: ${gateway.url}/openapi.json)`,
    `dashboard    ${dashboardUrl}`,
  ];
  return {
    lines: lines.map((line) => `  ${line}`),
    fields: {
      config_file: configFile ?? null,
      providers_configured: summaries.filter((provider) => provider.configured).map((provider) => provider.name),
      providers_not_configured: summaries.filter((provider) => !provider.configured).map((provider) => ({ name: provider.name, variable: provider.missing!.variable })),
      storage: describeStorage(config),
      redis: describeRedis(config),
      docs_url: docsUrl,
      dashboard_url: dashboardUrl,
    },
  };
}
