// What the fault suites share (end2end/playwright.faults.config.ts): mock mode's development
// fault switches (docs/dev-switches.md), probes of the worker's own stack, and
// checks that a page recovered by itself, in the same document.
import { expect, request as playwrightRequest, type Page } from '@playwright/test';
import { hydrated, signIn } from './fixtures';
import { AUTHN } from './origins';

/** The switchboard of the worker's stack (authn serves it in mock mode). */
export const FAULTS = `${AUTHN}/dev/faults`;
export const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';
export const DATABASES = '/plugin-resources/acme-corp--cloudnative-pg/databases.postgresql.cnpg.io';
export const CERTS = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';
export const RUNTIME = 'plugin-runtimes/acme-corp--cert-manager';
export const DEMO_SPEC = { message: 'made after the outage' };
export const sidebar = (page: Page) => page.getByRole('navigation', { name: 'Sidebar' });
export const frame = (page: Page) => page.locator('[data-plugin-frame]');

export type Fault =
  | { fault: 'none' | 'down' | 'hang' | 'garbage' }
  | { fault: 'restarting'; seconds: number }
  | { fault: 'slow'; delay_ms: number }
  | { fault: 'status'; status: number };

/** Sets a switch: `cluster`, `authn`, `organization-api`, `openfga`, `plugin-runtimes/<installation>`. */
export async function setFault(which: string, fault: Fault) {
  const api = await playwrightRequest.newContext();
  const response = await api.put(`${FAULTS}/${which}`, { data: fault });
  expect(response.status(), `${which}: ${await response.text()}`).toBe(204);
  await api.dispose();
}

/** A plain GET from outside the browser: the status and the body. */
export async function probe(url: string): Promise<{ status: number; body: string }> {
  const api = await playwrightRequest.newContext();
  try {
    const response = await api.get(url, { timeout: 5_000 });
    return { status: response.status(), body: await response.text() };
  } catch {
    return { status: 0, body: '' };
  } finally {
    await api.dispose();
  }
}

/** Marks the document, so that a later check can tell it was never reloaded. */
export async function markDocument(page: Page) {
  await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));
}

/** alice on the console's home, hydrated, the document marked: where most fault tests start. */
export async function aliceOnHome(page: Page) {
  await signIn(page, 'alice@acme-corp.com', '/');
  await hydrated(page);
  await markDocument(page);
}

export async function expectSameDocument(page: Page) {
  expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
}

/** Goes to a console page the way a user does once the console is loaded: a client-side navigation. */
export async function navigate(page: Page, path: string) {
  await page.evaluate((to) => {
    const link = document.createElement('a');
    link.href = to;
    document.body.append(link);
    link.click();
    link.remove();
  }, path);
  await expect(page).toHaveURL(new RegExp(`${path.replace(/[.?]/g, '\\$&')}$`));
}

export const unavailable = (page: Page) => page.locator('main [role="alert"][data-passing="true"]');

/** Every switch the fault specs use back to `none`: after each test, whatever it left on. */
export async function clearFaults() {
  for (const which of ['cluster', 'authn', 'organization-api', 'openfga', RUNTIME]) {
    await setFault(which, { fault: 'none' });
  }
}
