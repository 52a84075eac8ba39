// Every dependency of the console failing and coming back, through mock mode's development
// fault switches (docs/dev-switches.md): the cluster (down, restarting, slow, 429, 500),
// authn (down, slow, its signing key rotated), organization-api (down), OpenFGA (failing) and
// a plugin's runtime (hanging, answering garbage). For each: what the page shows while it
// lasts, and that the same page recovers by itself, without a reload, when it ends. Runs in
// end2end/playwright.faults.config.ts, on a stack of its own: a switch acts on the whole stack.
import { test, expect, request as playwrightRequest, type Page } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { frameReady, hydrated, messages, pluginFrame, recordMessages, signIn } from './fixtures';
import { AUTHN, GATEWAY, ORGANIZATION_API, bin, root } from './origins';

const FAULTS = `${AUTHN}/dev/faults`;
const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';
const DATABASES = '/plugin-resources/acme-corp--cloudnative-pg/databases.postgresql.cnpg.io';
const CERTS = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';
const RUNTIME = 'plugin-runtimes/acme-corp--cert-manager';
const DEMO_SPEC = { message: 'made after the outage' };
const sidebar = (page: Page) => page.getByRole('navigation', { name: 'Sidebar' });
const frame = (page: Page) => page.locator('[data-plugin-frame]');

type Fault =
  | { fault: 'none' | 'down' | 'hang' | 'garbage' }
  | { fault: 'restarting'; seconds: number }
  | { fault: 'slow'; delay_ms: number }
  | { fault: 'status'; status: number };

/** Sets a switch: `cluster`, `authn`, `organization-api`, `openfga`, `plugin-runtimes/<installation>`. */
async function setFault(which: string, fault: Fault) {
  const api = await playwrightRequest.newContext();
  const response = await api.put(`${FAULTS}/${which}`, { data: fault });
  expect(response.status(), `${which}: ${await response.text()}`).toBe(204);
  await api.dispose();
}

/** A plain GET from outside the browser: the status and the body. */
async function probe(url: string): Promise<{ status: number; body: string }> {
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

/** kubectl against the embedded cluster as its admin; `input` goes to its stdin. */
function kubectl(args: string[], input?: string): string {
  const kubeconfig = `${os.tmpdir()}/fundament-e2e-faults-kubeconfig-${process.pid}`;
  if (!fs.existsSync(kubeconfig)) {
    fs.writeFileSync(kubeconfig, execFileSync(bin, ['cluster', 'kubeconfig'], { cwd: root, encoding: 'utf8' }));
  }
  return execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', input });
}

/** Marks the document, so that a later check can tell it was never reloaded. */
async function markDocument(page: Page) {
  await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));
}

async function expectSameDocument(page: Page) {
  expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
}

/** Goes to a console page the way a user does once the console is loaded: a client-side navigation. */
async function navigate(page: Page, path: string) {
  await page.evaluate((to) => {
    const link = document.createElement('a');
    link.href = to;
    document.body.append(link);
    link.click();
    link.remove();
  }, path);
  await expect(page).toHaveURL(new RegExp(`${path.replace(/[.?]/g, '\\$&')}$`));
}

const unavailable = (page: Page) => page.locator('main [role="alert"][data-passing="true"]');

test.describe('dependencies that fail and come back', () => {
  test.describe.configure({ mode: 'serial' });
  test.afterEach(async () => {
    for (const which of ['cluster', 'authn', 'organization-api', 'openfga', RUNTIME]) {
      await setFault(which, { fault: 'none' });
    }
  });

  test('cluster down: a live list pauses, a new page says so, both come back without a reload', async ({ page, context }) => {
    test.setTimeout(90_000);
    // A plugin page stays open in a second tab throughout.
    const plugin = await context.newPage();
    await recordMessages(plugin);
    await signIn(plugin, 'alice@acme-corp.com', CERTS);
    await frameReady(plugin);
    await page.goto(DEMO);
    await hydrated(page);
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    await markDocument(page);

    await setFault('cluster', { fault: 'down' });
    await expect(page.locator('[data-live="paused"]')).toBeVisible({ timeout: 15_000 });
    await expect(page.locator('[data-live="paused"]')).toContainText('cannot be reached');
    // What was on screen stays.
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    // The gateway's readiness shows the cluster failing, and it stays ready.
    const gateway = await probe(`${GATEWAY}/readyz?verbose`);
    expect(gateway.status).toBe(200);
    expect(gateway.body).toMatch(/\[-\]cluster \S+ failed: /);

    // A page opened now says what is wrong and when it tries again.
    await navigate(page, DATABASES);
    await expect(unavailable(page)).toContainText('Not available right now');
    await expect(unavailable(page)).toContainText('cannot be reached');
    await expect(unavailable(page).locator('[data-retry-in]')).toBeVisible();

    await setFault('cluster', { fault: 'none' });
    await expect(page.getByRole('table', { name: 'Database list' })).toBeVisible({ timeout: 15_000 });
    await navigate(page, DEMO);
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    await expect(page.locator('[data-live="paused"]')).toHaveCount(0, { timeout: 15_000 });
    // Live again: a change made with kubectl shows up.
    const name = `after-outage-${Date.now()}`;
    const item = { apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name, namespace: 'default' }, spec: DEMO_SPEC };
    kubectl(['apply', '-f', '-'], JSON.stringify(item));
    await expect(page.getByRole('link', { name })).toBeVisible({ timeout: 15_000 });
    kubectl(['delete', 'demoitem', name, '-n', 'default', '--wait=false']);
    await expectSameDocument(page);
    // The plugin page was never told its authentication failed: a cluster outage is not one.
    await expect(frame(plugin)).toHaveAttribute('data-state', 'ready');
    const told = (await messages(pluginFrame(plugin, 'certificates-list.html'))).filter((m) => m.type === 'fundament:auth-failed');
    expect(told).toEqual([]);
    await plugin.close();
  });

  test('cluster restarting: the page waits and loads by itself when it is back', async ({ page }) => {
    test.setTimeout(60_000);
    await signIn(page, 'alice@acme-corp.com', '/');
    await hydrated(page);
    await markDocument(page);
    await setFault('cluster', { fault: 'restarting', seconds: 4 });
    const started = Date.now();
    await navigate(page, DEMO);
    await expect(unavailable(page)).toContainText('cannot be reached');
    // Nobody switches it back: the restart ends after 4 s and the next try succeeds.
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible({ timeout: 20_000 });
    expect(Date.now() - started).toBeGreaterThan(3_000);
    await expectSameDocument(page);
  });

  for (const status of [429, 500]) {
    test(`cluster answering ${status}: the page names it and loads once it answers again`, async ({ page }) => {
      test.setTimeout(60_000);
      await signIn(page, 'alice@acme-corp.com', '/');
      await hydrated(page);
      await markDocument(page);
      await setFault('cluster', { fault: 'status', status });
      await navigate(page, DEMO);
      await expect(unavailable(page)).toContainText(status === 429 ? 'HTTP 429' : 'HTTP 500');
      // A 429 names its wait (Retry-After: 1); the page keeps to it.
      if (status === 429) await expect(unavailable(page).locator('[data-retry-in]')).toHaveAttribute('data-retry-in', '1');
      await setFault('cluster', { fault: 'none' });
      await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible({ timeout: 15_000 });
      await expectSameDocument(page);
    });
  }

  test('cluster slow: a short delay only shows loading; past the timeout the page says so and recovers', async ({ page }) => {
    test.setTimeout(90_000);
    await signIn(page, 'alice@acme-corp.com', '/');
    await hydrated(page);
    await markDocument(page);
    await setFault('cluster', { fault: 'slow', delay_ms: 2_000 });
    await navigate(page, DEMO);
    await expect(page.locator('main').getByRole('status').filter({ hasText: 'Loading' })).toBeVisible();
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible({ timeout: 15_000 });
    await expect(unavailable(page)).toHaveCount(0);

    await setFault('cluster', { fault: 'slow', delay_ms: 15_000 });
    await navigate(page, DATABASES);
    await expect(unavailable(page)).toContainText('did not answer within 10 s', { timeout: 20_000 });
    await setFault('cluster', { fault: 'none' });
    await expect(page.getByRole('table', { name: 'Database list' })).toBeVisible({ timeout: 25_000 });
    await expectSameDocument(page);
  });

  test('authn down: browsing goes on, a plugin page waits for it, sign-in says so; all recover', async ({ page, browser }) => {
    test.setTimeout(90_000);
    await signIn(page, 'alice@acme-corp.com', '/');
    await hydrated(page);
    await markDocument(page);
    await setFault('authn', { fault: 'down' });
    expect((await probe(`${AUTHN}/readyz`)).status).toBe(503);
    // Sessions are verified with the keys the console holds: pages that need no token work.
    await navigate(page, DEMO);
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    // A plugin page needs a frame ticket and a token from authn.
    await navigate(page, CERTS);
    await expect(frame(page)).toHaveAttribute('data-state', 'not-opened');
    const notice = frame(page).getByRole('alert');
    await expect(notice).toContainText('could not get a plugin token from authn');
    await expect(notice.locator('[data-retry-in]')).toBeVisible();

    // Signing in is not possible meanwhile, and the page says why.
    const other = await browser.newPage();
    await other.goto('/sign-in');
    await hydrated(other);
    await other.getByRole('button', { name: 'Sign in as bob@acme-corp.com' }).click();
    await expect(other).toHaveURL(/error=authn-unavailable/);
    await expect(other.getByRole('alert')).toContainText('the sign-in service (authn) cannot be reached');

    await setFault('authn', { fault: 'none' });
    // The frame opens by itself on its next try.
    await expect(frame(page)).toHaveAttribute('data-state', 'ready', { timeout: 20_000 });
    await expectSameDocument(page);
    await other.getByRole('button', { name: 'Sign in as bob@acme-corp.com' }).click();
    await expect(sidebar(other)).toBeVisible();
    await other.close();
  });

  test('authn slow: the plugin page shows it is loading, then opens', async ({ page }) => {
    test.setTimeout(60_000);
    await signIn(page, 'alice@acme-corp.com', '/projects/webshop');
    await hydrated(page);
    await setFault('authn', { fault: 'slow', delay_ms: 3_000 });
    await sidebar(page).getByRole('link', { name: 'Certificates' }).first().click();
    await expect(frame(page)).toHaveAttribute('data-state', 'loading');
    await expect(page.getByText('Loading the Cert Manager page…')).toBeVisible();
    await expect(frame(page)).toHaveAttribute('data-state', 'ready', { timeout: 20_000 });
  });

  test("organization-api down: plugins stay usable from the definitions the console has, and it says so", async ({ page }) => {
    test.setTimeout(120_000);
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    await markDocument(page);
    await setFault('organization-api', { fault: 'down' });
    expect((await probe(`${ORGANIZATION_API}/readyz`)).status).toBe(503);
    // The console asks organization-api again once its copy is older than 30 s, on the next
    // change of the installations: make changes until it has asked.
    const notice = sidebar(page).locator('[data-notice="organization-api"]');
    for (let i = 0; i < 25 && !(await notice.isVisible()); i++) {
      kubectl(['annotate', 'plugininstallation', 'acme-corp--cert-manager', `faults.fundament.io/poke=${Date.now()}`, '--overwrite']);
      await page.waitForTimeout(2_000);
    }
    await expect(notice).toContainText('organization-api cannot be reached');
    // The plugins are still there and their pages still open (the pinned definitions are kept).
    await expect(sidebar(page).getByRole('link', { name: 'Certificates' }).first()).toBeVisible();
    await navigate(page, '/projects/webshop/plugin-resources/acme-corp--cert-manager/issuers.cert-manager.io');
    await expect(frame(page)).toHaveAttribute('data-state', 'ready', { timeout: 15_000 });

    await setFault('organization-api', { fault: 'none' });
    await expect(notice).toHaveCount(0, { timeout: 15_000 });
    await expectSameDocument(page);
    kubectl(['annotate', 'plugininstallation', 'acme-corp--cert-manager', 'faults.fundament.io/poke-']);
  });

  test('signing key rotated mid-session: nobody is signed out, plugin pages keep working', async ({ page, browser }) => {
    test.setTimeout(60_000);
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    await markDocument(page);
    const api = await playwrightRequest.newContext();
    const rotated = await api.post(`${FAULTS}/rotate-signing-key`);
    expect(rotated.status()).toBe(200);
    const { kid, published } = await rotated.json();
    expect(published[0]).toBe(kid);
    expect(published).toHaveLength(2);
    await api.dispose();
    // A new page mints a token signed with the new key; the gateway learns the key and serves it.
    await navigate(page, '/projects/webshop/plugin-resources/acme-corp--cert-manager/issuers.cert-manager.io');
    await frameReady(page);
    const list = page.frameLocator('[data-plugin-frame] iframe');
    await expect(list.getByText('ca-issuer').first()).toBeVisible({ timeout: 15_000 });
    await navigate(page, '/clusters');
    await expect(page.getByRole('table')).toBeVisible();
    await expectSameDocument(page);
    // A session that starts now carries the new key, and the console accepts it at once.
    const other = await browser.newPage();
    await signIn(other, 'bob@acme-corp.com', CERTS);
    await frameReady(other);
    await other.close();
  });

  test('a plugin runtime that hangs: the page says it did not load, and opens again once it answers', async ({ page }) => {
    test.setTimeout(90_000);
    await signIn(page, 'alice@acme-corp.com', '/projects/webshop');
    await hydrated(page);
    await markDocument(page);
    await setFault(RUNTIME, { fault: 'hang' });
    await sidebar(page).getByRole('link', { name: 'Certificates' }).first().click();
    await expect(frame(page)).toHaveAttribute('data-state', 'error', { timeout: 15_000 });
    await expect(frame(page).getByRole('alert')).toContainText('did not load');
    // plugin-proxy gives up on the runtime after its 10 s and says so in the frame.
    const inFrame = page.frameLocator('[data-plugin-frame] iframe').locator('body');
    await expect(inFrame).toContainText('did not answer within 10 s', { timeout: 20_000 });
    await setFault(RUNTIME, { fault: 'none' });
    await frame(page).getByRole('link', { name: 'Try again' }).click();
    await expect(frame(page)).toHaveAttribute('data-state', 'ready', { timeout: 20_000 });
    await expectSameDocument(page);
  });

  test('a plugin runtime that answers garbage: the page says it did not load, and recovers by itself', async ({ page }) => {
    test.setTimeout(90_000);
    await signIn(page, 'alice@acme-corp.com', '/projects/webshop');
    await hydrated(page);
    await markDocument(page);
    await setFault(RUNTIME, { fault: 'garbage' });
    await sidebar(page).getByRole('link', { name: 'Certificates' }).first().click();
    await expect(frame(page)).toHaveAttribute('data-state', 'error', { timeout: 15_000 });
    await setFault(RUNTIME, { fault: 'none' });
    // Opened again by itself (every 10 s while it does not load).
    await expect(frame(page)).toHaveAttribute('data-state', 'ready', { timeout: 30_000 });
    await expectSameDocument(page);
  });

  test('OpenFGA failing: access cannot be checked, pages say so and recover by themselves', async ({ page }) => {
    test.setTimeout(90_000);
    await signIn(page, 'alice@acme-corp.com', '/');
    await hydrated(page);
    await markDocument(page);
    await setFault('openfga', { fault: 'status', status: 500 });
    await navigate(page, '/clusters');
    await expect(unavailable(page)).toContainText('authorization service (OpenFGA)');
    await navigate(page, DEMO);
    await expect(unavailable(page)).toContainText('OpenFGA');
    const gateway = await probe(`${GATEWAY}/readyz?verbose`);
    expect(gateway.body).toMatch(/\[-\]openfga/);
    await setFault('openfga', { fault: 'none' });
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible({ timeout: 15_000 });
    await navigate(page, '/clusters');
    await expect(page.getByRole('table')).toBeVisible({ timeout: 15_000 });
    await expectSameDocument(page);
  });
});
