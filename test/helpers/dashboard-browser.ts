import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axe from 'axe-core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startOpenAIFake, type OpenAIFake } from '../fakes/openai.js';
import { startTestGateway, type TestGateway } from './gateway.js';

/**
 * The dashboard in Debian's Chromium (through playwright-core; no browser is downloaded):
 * pages that record every console error, failed request and request to anywhere but the
 * gateway, screenshots and sign-in.
 */

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const DESKTOP = { width: 1280, height: 860 };

/** A new page of its own browser context whose problems are pushed to `problems`. */
export async function watchedPage(browser: Browser, gatewayUrl: string, problems: string[], viewport = DESKTOP): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('console', (message) => {
    const text = message.text();
    // Expected: the 401/403 answers the tests provoke, and the scroll-lock <style> element the
    // dialogs try to add, which the CSP blocks (docs/dashboard.md).
    if (message.type() === 'error' && !/status of 40[13]/.test(text) && !/Applying inline style violates .*style-src 'self'/.test(text)) problems.push(`console: ${text}`);
  });
  page.on('requestfailed', (request) => {
    // A fetch the page itself cancels (a newer query replaced it, or the page moved on) is ERR_ABORTED: not a failure.
    const reason = request.failure()?.errorText;
    if (reason !== 'net::ERR_ABORTED') problems.push(`failed ${request.url()}: ${reason}`);
  });
  page.on('request', (request) => {
    if (!request.url().startsWith(gatewayUrl) && !request.url().startsWith('blob:') && !request.url().startsWith('data:')) problems.push(`outside request ${request.url()}`);
  });
  return page;
}

/**
 * The page's serious and critical accessibility violations by axe-core's rules (run in the
 * page), as `rule: targets` lines; [] when there are none.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated, not added as a script tag: the dashboard's CSP refuses inline scripts.
  await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const inPage = (globalThis as unknown as { axe: typeof axe }).axe;
    const result = await inPage.run({ resultTypes: ['violations'] });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, targets: violation.nodes.map((node) => JSON.stringify(node.target)) }));
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => `${violation.id}: ${violation.targets.join(' ')}`);
}

export async function shoot(page: Page, directory: string, name: string): Promise<void> {
  await page.screenshot({ path: join(directory, `${name}.png`), fullPage: true });
}

export async function signIn(page: Page, gatewayUrl: string, account: { email: string; password: string }): Promise<void> {
  await page.goto(`${gatewayUrl}/dashboard/`);
  const email = page.getByLabel('Email');
  if (!(await email.waitFor().then(() => true, () => false))) {
    const shown = await page.locator('body').innerText().catch(() => '(unreadable)');
    throw new Error(`no sign-in form at ${page.url()}; the page shows: ${JSON.stringify(shown)}`);
  }
  await email.fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** A gateway in front of the OpenAI fake, with a data dir of its own, and Chromium: what a dashboard browser test runs against. */
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

/** axe-core's script, injected into a page to check it (the dashboard's CSP does not apply to the test's own evaluation). */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The serious and critical accessibility violations axe-core finds on the page as it is now, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown }[] }[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.impact} ${violation.id}: ${violation.help} at ${violation.nodes.map((node) => JSON.stringify(node.target)).join(', ')}`);
}
