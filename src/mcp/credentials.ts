import { ConfigError, type McpServerConfig } from '../config/index.js';

/** What a server's configuration reads from the environment, resolved once when the server is built. */
export interface ServerCredentials {
  /** Headers sent on every HTTP request (configured headers, a static token). */
  headers: Record<string, string>;
  /** Environment of a stdio server's process. */
  env: Record<string, string>;
  oauth: { tokenUrl: string; clientId: string; clientSecret: string; scope: string | undefined } | undefined;
  /** Every value read, for redaction by value (a server echoing its token in an error). */
  secrets: string[];
}

/** Reads a variable a setting names; unset or empty stops start-up (or the reload) naming the setting. */
function required(env: NodeJS.ProcessEnv, variable: string, field: string): string {
  const value = env[variable];
  if (value === undefined || value === '') throw new ConfigError(`invalid setting ${field}: the environment variable ${variable} is not set`);
  return value;
}

export function resolveCredentials(server: McpServerConfig, field: string, env: NodeJS.ProcessEnv): ServerCredentials {
  const headers: Record<string, string> = {};
  for (const [name, source] of Object.entries(server.headers)) headers[name] = required(env, source.env, `${field}.headers.${name}.env`);
  const token = server.tokenEnv === undefined ? undefined : required(env, server.tokenEnv, `${field}.tokenEnv`);
  if (token !== undefined) headers.Authorization = `Bearer ${token}`;
  const processEnv: Record<string, string> = {};
  for (const [name, source] of Object.entries(server.env)) processEnv[name] = required(env, source.env, `${field}.env.${name}.env`);
  const oauth =
    server.oauth === undefined
      ? undefined
      : {
          tokenUrl: server.oauth.tokenUrl,
          clientId: required(env, server.oauth.clientIdEnv, `${field}.oauth.clientIdEnv`),
          clientSecret: required(env, server.oauth.clientSecretEnv, `${field}.oauth.clientSecretEnv`),
          scope: server.oauth.scope,
        };
  const secrets = [...Object.values(headers), ...Object.values(processEnv), ...(token === undefined ? [] : [token]), ...(oauth === undefined ? [] : [oauth.clientSecret])];
  return { headers, env: processEnv, oauth, secrets };
}
