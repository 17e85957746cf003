import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OpenID provider (oidc-provider) on 127.0.0.1 for single sign-on tests, with its
 * development login (any password) and consent pages, driven by `signInAt` as a browser
 * would: follow redirects, keep the provider's cookies, submit the login and consent forms.
 */

export interface TestAccount {
  email: string;
  emailVerified?: boolean;
  groups: string[];
}

export interface OpenIdProvider {
  readonly issuer: string;
  /** Registers the gateway as a client (its redirect URI is known once it listens) and starts answering. */
  serve(client: { clientId: string; clientSecret: string; redirectUri: string }): Promise<void>;
  close(): Promise<void>;
}

/** oidc-provider warns about Node 20 and its development pages as it loads and starts; the tests know. */
async function quietly<T>(work: () => Promise<T>): Promise<T> {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).startsWith('oidc-provider ')) warn(...args);
  };
  try {
    return await work();
  } finally {
    console.warn = warn;
  }
}

export async function startOpenIdProvider(accounts: Record<string, TestAccount>): Promise<OpenIdProvider> {
  let handler: ((request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) => void) | undefined;
  const server: Server = createServer((request, response) => {
    if (handler === undefined) response.writeHead(503).end();
    else handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    async serve(client) {
      handler = await quietly(async () => {
        const { default: Provider } = await import('oidc-provider');
        const provider = new Provider(issuer, {
          clients: [{ client_id: client.clientId, client_secret: client.clientSecret, redirect_uris: [client.redirectUri], grant_types: ['authorization_code'], response_types: ['code'] }],
          claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
          scopes: ['openid', 'email', 'groups'],
          pkce: { required: () => true },
          features: { devInteractions: { enabled: true } },
          cookies: { keys: ['test cookie signing key, not a secret'] },
          async findAccount(_context, id) {
            const account = accounts[id];
            if (account === undefined) return undefined;
            return { accountId: id, claims: async () => ({ sub: id, email: account.email, email_verified: account.emailVerified ?? true, groups: account.groups }) };
          },
        });
        return provider.callback();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Cookies of one site, as a browser keeps them (name → value; expiry and paths ignored). */
export class CookieJar {
  private readonly values = new Map<string, string>();

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const separator = pair!.indexOf('=');
      const name = pair!.slice(0, separator).trim();
      const value = pair!.slice(separator + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.values.delete(name);
      else this.values.set(name, value);
    }
  }

  header(): string {
    return [...this.values].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  get(name: string): string | undefined {
    return this.values.get(name);
  }
}

/**
 * Signs `login` in at the provider from its authorization URL, as a browser does, and returns
 * the URL the provider redirects back to (the gateway's callback with code and state).
 */
export async function signInAt(authorizationUrl: string, login: string): Promise<string> {
  const jar = new CookieJar();
  let url = authorizationUrl;
  for (let step = 0; step < 12; step += 1) {
    const response = await fetch(url, { headers: { cookie: jar.header() }, redirect: 'manual' });
    jar.take(response);
    const location = response.headers.get('location');
    if (location !== null) {
      const next = new URL(location, url).href;
      if (!next.startsWith(new URL(authorizationUrl).origin)) return next;
      url = next;
      continue;
    }
    const page = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="([a-z]+)"/.exec(page)?.[1];
    if (action === undefined || prompt === undefined) throw new Error(`the provider answered ${response.status} without a form: ${page.slice(0, 300)}`);
    const form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
    const submitted = await fetch(new URL(action, url), {
      method: 'POST',
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      redirect: 'manual',
    });
    jar.take(submitted);
    url = new URL(submitted.headers.get('location') ?? url, url).href;
  }
  throw new Error('the provider never redirected back');
}
