import { resolve } from 'node:path';
import type { Command } from 'commander';
import { findAdminToken } from '../config/index.js';
import { CliError } from './output.js';

export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8080';
const DEFAULT_DATA_DIR = './.modelgate';
const REQUEST_TIMEOUT_MS = 30_000;

/** The options every admin-API command takes. */
export interface AdminOptions {
  url?: string;
  dataDir?: string;
  json?: boolean;
}

/** Adds --url, --data-dir and --json to a command that talks to the admin API. */
export function withAdminOptions(command: Command): Command {
  return command
    .option('--url <url>', `gateway URL (default: MODELGATE_URL or ${DEFAULT_GATEWAY_URL})`)
    .option('--data-dir <dir>', `data dir holding the admin-token file (default: MODELGATE_DATA_DIR or ${DEFAULT_DATA_DIR})`)
    .option('--json', 'print the JSON of the admin API (stable, for scripts)');
}

/** The catalog as `GET /v1/models` lists it (only what the CLI reads). */
export interface CatalogListing {
  available_models: { id: string }[];
  aliases: Record<string, string>;
}

/**
 * Admin API routes that the gateway's messages name, and the command that does the same: the
 * CLI's user is pointed to a command, not to a route.
 */
const COMMAND_OF_ROUTE: readonly (readonly [string, string])[] = [
  ['GET /admin/v1/keys', 'modelgate keys list'],
  ['GET /admin/v1/agents', 'modelgate agents list'],
  ['GET /admin/v1/logs', 'modelgate logs list'],
  ['GET /admin/v1/usage', 'modelgate usage'],
  ['GET /admin/v1/status', 'modelgate status'],
];

function withCommands(message: string): string {
  return COMMAND_OF_ROUTE.reduce((text, [route, command]) => text.replace(new RegExp(`${route}(?![\\w/])`, 'g'), command), message);
}

interface ErrorBody {
  error?: { message?: string; code?: string; request_id?: string };
}

/** An HTTP client of the admin API (/admin/v1/), authorised by the admin token. */
export class AdminClient {
  private constructor(
    readonly baseUrl: string,
    private readonly adminToken: string,
  ) {}

  /** URL: --url, MODELGATE_URL, default. Token: MODELGATE_ADMIN_TOKEN, else the data dir's admin-token file. */
  static fromOptions(options: AdminOptions, env: NodeJS.ProcessEnv = process.env): AdminClient {
    const url = options.url ?? (env.MODELGATE_URL || DEFAULT_GATEWAY_URL);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new CliError(`the gateway URL "${url}" is not a URL; pass --url http://HOST:PORT`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new CliError(`the gateway URL "${url}" must start with http:// or https://`);
    }
    if (parsed.username !== '' || parsed.password !== '') {
      // Named without them: a password does not belong on a terminal or in a CI log.
      throw new CliError(
        `the gateway URL ${parsed.protocol}//${parsed.host}${parsed.pathname} must not hold a user name or password; the CLI sends the admin token instead`,
      );
    }
    const dataDir = resolve(options.dataDir ?? (env.MODELGATE_DATA_DIR || DEFAULT_DATA_DIR));
    const token = findAdminToken(env, dataDir);
    if (token === undefined || token.length === 0) {
      throw new CliError(
        `no admin token: set MODELGATE_ADMIN_TOKEN, or pass --data-dir with the gateway's data dir (there is no admin-token file in ${dataDir})`,
      );
    }
    return new AdminClient(url.replace(/\/+$/, ''), token);
  }

  /** Sends one request; a non-2xx answer becomes a CliError carrying the gateway's message. */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = `${this.baseUrl}/admin/v1${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.adminToken}`,
          accept: 'application/json',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw this.unreachable(error);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null;
    } catch {
      throw new CliError(`the gateway at ${this.baseUrl} answered HTTP ${response.status} with a body that is not JSON; is --url pointing at modelgate?`);
    }
    if (!response.ok) throw this.failure(response.status, parsed as ErrorBody | null);
    return parsed as T;
  }

  /** The public catalog of the gateway (no token needed). */
  async catalog(): Promise<CatalogListing> {
    const response = await fetch(`${this.baseUrl}/v1/models`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if (!response.ok) throw new CliError(`the gateway at ${this.baseUrl} answered HTTP ${response.status} for its catalog`);
    return (await response.json()) as CatalogListing;
  }

  /** A GET whose body is passed on as it comes (exports); a non-2xx answer is a CliError as above. */
  async stream(path: string): Promise<ReadableStream<Uint8Array>> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/admin/v1${path}`, { headers: { authorization: `Bearer ${this.adminToken}` } });
    } catch (error) {
      throw this.unreachable(error);
    }
    if (!response.ok) {
      const body = (await response.json().catch(() => null)) as ErrorBody | null;
      throw this.failure(response.status, body);
    }
    if (response.body === null) throw new CliError(`the gateway at ${this.baseUrl} answered without a body`);
    return response.body;
  }

  private failure(status: number, body: ErrorBody | null): CliError {
    const error = body?.error;
    if (error?.message === undefined) return new CliError(`the gateway at ${this.baseUrl} answered HTTP ${status}`);
    const detail = [error.code, `HTTP ${status}`, error.request_id].filter((part) => part !== undefined).join(', ');
    return new CliError(`${withCommands(error.message)} (${detail})`);
  }

  private unreachable(error: unknown): CliError {
    if (error instanceof DOMException && error.name === 'TimeoutError') {
      return new CliError(`the gateway at ${this.baseUrl} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    return new CliError(
      `cannot reach the gateway at ${this.baseUrl} (${reason}). Is it running? Point the CLI at it with --url or MODELGATE_URL.`,
    );
  }
}
