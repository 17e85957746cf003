/** The part of oidc-provider (which ships no types) the tests use: a real OpenID provider run in-process. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ClientMetadata {
    client_id: string;
    client_secret?: string;
    redirect_uris: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
  }

  export interface Configuration {
    clients: ClientMetadata[];
    findAccount(context: unknown, id: string): Promise<{ accountId: string; claims(): Promise<Record<string, unknown>> } | undefined>;
    claims?: Record<string, string[]>;
    scopes?: string[];
    pkce?: { required(): boolean };
    features?: Record<string, { enabled: boolean }>;
    cookies?: { keys: string[] };
    jwks?: { keys: unknown[] };
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
