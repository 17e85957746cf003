import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startOpenAIFake, type OpenAIFake } from '../fakes/openai.js';
import { startTestGateway, type TestGateway } from './gateway.js';

/** Debian's Chromium, driven through playwright-core (no browser is downloaded). */
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Records what should never happen on a dashboard page into `problems`: console errors (but
 * those `expected` accepts), failed requests, and requests to anywhere but the gateway (a CSP
 * violation or a missing file shows here).
 */
export function watchPage(page: Page, gatewayUrl: string, problems: string[], expected: (consoleError: string) => boolean): void {
  page.on('console', (message) => {
    if (message.type() === 'error' && !expected(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('requestfailed', (request) => {
    // A fetch the page itself cancels (a newer query replaced it, or the page moved on) is ERR_ABORTED: not a failure.
    const reason = request.failure()?.errorText;
    if (reason !== 'net::ERR_ABORTED') problems.push(`failed ${request.url()}: ${reason}`);
  });
  page.on('request', (request) => {
    if (!request.url().startsWith(gatewayUrl) && !request.url().startsWith('blob:') && !request.url().startsWith('data:')) problems.push(`outside request ${request.url()}`);
  });
}

/** A gateway in front of the OpenAI fake, with its own data dir, and Chromium: what a dashboard browser test runs against. */
export interface DashboardRig {
  fake: OpenAIFake;
  gateway: TestGateway;
  browser: Browser;
  close(): Promise<void>;
}

export async function startDashboardRig(): Promise<DashboardRig> {
  const fake = await startOpenAIFake();
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-dashboard-'));
  const gateway = await startTestGateway({ dataDir, env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-test-credential-0123456789' } });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  return {
    fake,
    gateway,
    browser,
    async close() {
      await browser.close();
      await gateway.close();
      await fake.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in on the dashboard's sign-in page and waits for the signed-in page. */
export async function signIn(page: Page, gatewayUrl: string, account: { email: string; password: string }): Promise<void> {
  await page.goto(`${gatewayUrl}/dashboard/`);
  await page.getByLabel('Email').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}
