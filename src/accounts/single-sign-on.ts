import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type * as OpenIdClient from 'openid-client';
import { GatewayError } from '../errors/index.js';
import type { Database } from '../storage/index.js';
import type { Accounts, SignedIn } from './accounts.js';
import { roleGrantOf, type RoleMapping } from './role-mapping.js';

/**
 * Dashboard sign-in through an OpenID provider (docs/security.md#single-sign-on): the
 * authorization code flow with PKCE (S256), a state bound to the browser by a cookie and a
 * nonce bound to the ID token, both kept in the database so any instance can finish what
 * another began. The provider's groups claim gives the role; the account is made, or its
 * role and teams updated, at each sign-in; the session is the same as a password sign-in's.
 */

export interface SingleSignOnSettings {
  issuer: string;
  clientId: string;
  /** Undefined for a public client. */
  clientSecret: string | undefined;
  providerName: string;
  scopes: readonly string[];
  roleClaim: string;
  roles: RoleMapping;
}

export interface SingleSignOnOptions {
  /** The HTTP client for discovery, the token endpoint and userinfo (tests count or fake nothing; the provider is real). */
  fetch?: typeof fetch;
  now?: () => number;
}

/** A sign-in begun: where to send the browser, and the state its login cookie holds. */
export interface SignInStart {
  authorizationUrl: string;
  state: string;
}

/** How long the provider may keep the browser before the sign-in must start again. */
export const SIGN_IN_WINDOW_MS = 10 * 60_000;

const FAILED = 'The single sign-on did not complete. Start it again from the sign-in page.';

function stateHash(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}

/** A dashboard path to return to (never another origin). */
export function safeReturnPath(value: string | undefined): string {
  return value !== undefined && /^\/(?![/\\])[\x21-\x7e]{0,500}$/.test(value) ? value : '/';
}

/** The client library (loaded with the first sign-in, not with every gateway) and the provider's metadata. */
interface Discovered {
  oidc: typeof OpenIdClient;
  configuration: OpenIdClient.Configuration;
}

export class SingleSignOn {
  private configuration: Promise<Discovered> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly accounts: Accounts,
    readonly settings: SingleSignOnSettings,
    private readonly options: SingleSignOnOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  /** The provider's metadata, discovered once; a failed discovery is tried again at the next sign-in. */
  private discovered(): Promise<Discovered> {
    if (this.configuration === undefined) {
      const issuer = new URL(this.settings.issuer);
      const loopbackHttp = issuer.protocol === 'http:';
      const { clientSecret } = this.settings;
      this.configuration = import('openid-client')
        .then(async (oidc) => ({
          oidc,
          configuration: await oidc.discovery(issuer, this.settings.clientId, clientSecret, clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(clientSecret), {
            ...(loopbackHttp ? { execute: [oidc.allowInsecureRequests] } : {}),
            ...(this.options.fetch !== undefined ? { [oidc.customFetch]: this.options.fetch } : {}),
          }),
        }))
        .catch((error: unknown) => {
          this.configuration = undefined;
          throw new GatewayError('provider_error', `The OpenID provider ${this.settings.issuer} could not be reached or answered no valid discovery document: ${String(error)}`);
        });
    }
    return this.configuration;
  }

  /** Starts a sign-in: the provider's authorization URL, with a new state, nonce and PKCE challenge stored here. */
  async begin(redirectUri: string, returnTo: string | undefined): Promise<SignInStart> {
    const { oidc, configuration } = await this.discovered();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const now = this.now();
    await this.db.deleteFrom('dashboard_oidc_logins').where('created_at', '<', now - SIGN_IN_WINDOW_MS).execute();
    await this.db
      .insertInto('dashboard_oidc_logins')
      .values({ state_hash: stateHash(state), code_verifier: codeVerifier, nonce, return_to: safeReturnPath(returnTo), created_at: now })
      .execute();
    const scopes = new Set(['openid', ...this.settings.scopes]);
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: [...scopes].join(' '),
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { authorizationUrl: url.href, state };
  }

  /**
   * Finishes a sign-in from the provider's redirect: the state must be the one this browser's
   * login cookie holds and one begun here (used once, within the window); the code is exchanged
   * with the PKCE verifier, the ID token's nonce checked, the groups mapped to a role.
   */
  async complete(callbackUrl: URL, browserState: string | undefined, address: string): Promise<{ signedIn: SignedIn; returnTo: string }> {
    const state = callbackUrl.searchParams.get('state');
    if (state === null || browserState === undefined || state !== browserState) throw new GatewayError('invalid_credentials', FAILED);
    const login = await this.db.deleteFrom('dashboard_oidc_logins').where('state_hash', '=', stateHash(state)).returningAll().executeTakeFirst();
    if (login === undefined || this.now() - Number(login.created_at) > SIGN_IN_WINDOW_MS) throw new GatewayError('invalid_credentials', FAILED);
    const providerError = callbackUrl.searchParams.get('error');
    if (providerError !== null) {
      throw new GatewayError('invalid_credentials', `${this.settings.providerName} refused the sign-in (${providerError.slice(0, 100)}). ${FAILED}`);
    }
    const { oidc, configuration } = await this.discovered();
    let claims: Record<string, unknown>;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: login.code_verifier,
        expectedState: state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
      claims = { ...tokens.claims() };
      if (claims[this.settings.roleClaim] === undefined || claims.email === undefined) {
        claims = { ...(await oidc.fetchUserInfo(configuration, tokens.access_token, String(claims.sub))), ...claims };
      }
    } catch (error) {
      throw new GatewayError('invalid_credentials', `${this.settings.providerName} did not confirm the sign-in (${error instanceof Error ? error.message : String(error)}). ${FAILED}`);
    }
    const email = claims.email;
    if (typeof email !== 'string') throw new GatewayError('invalid_credentials', `${this.settings.providerName} gave no email for this account; the gateway needs the email scope.`);
    const grant = roleGrantOf(claims[this.settings.roleClaim], this.settings.roles);
    if (grant === undefined) {
      throw new GatewayError('insufficient_role', `Your ${this.settings.providerName} account is in no group that has a role here. Ask an administrator to add you to one.`);
    }
    const identity = { subject: `${this.settings.issuer} ${String(claims.sub)}`, email, emailVerified: claims.email_verified === true };
    return { signedIn: await this.accounts.signInBySso(identity, grant, address), returnTo: login.return_to };
  }
}
