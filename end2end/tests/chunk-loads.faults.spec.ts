// A route's wasm chunk that does not load never takes the console down. As wasm-split generates
// its loader, a failed fetch is reported to the module, which panics, and a panic aborts the
// whole module ("unreachable"): one network blip, or a newer console deployed while the tab was
// open (its files have other names), left the page dead. scripts/site-files.mjs
// `resilientChunkLoads` replaces that: a failed load is tried again, and a navigation the user
// asked for goes to the server as a full page load once it fails three times. With the failing
// dependencies (end2end/playwright.faults.config.ts): here what fails is the console's own files,
// through the page's routing; no switch is flipped, so it shares its worker's stack with them.
import { test, expect, type Page } from '@playwright/test';
import { hydrated, signIn } from './fixtures';
import { kubectl } from './kubectl';

const CHUNKS = /\/pkg\/(chunk_|split_)[^/]*\.wasm$/;

/** Records the page's uncaught errors; a module abort shows as `unreachable`, a chunk fetch
 *  whose failure nothing looked at as `Failed to fetch`. */
function uncaught(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

const markWindow = (page: Page) => page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 7));
const marked = (page: Page) => page.evaluate(() => (window as unknown as { __marker?: number }).__marker === 7);

test('a chunk that fails to load once is fetched again, and a failed prefetch leaves the page alone', async ({ page }) => {
  await signIn(page, 'alice@acme-corp.com');
  await hydrated(page);
  const errors = uncaught(page);
  await markWindow(page);
  const sidebar = page.getByRole('navigation', { name: 'Sidebar' });

  // Pointing at a link prefetches its route's chunks; here every one of them fails.
  const refused: string[] = [];
  await page.route(CHUNKS, (route) => {
    refused.push(route.request().url());
    return route.abort('internetdisconnected');
  });
  await sidebar.getByRole('link', { name: 'Plugins' }).hover();
  await expect.poll(() => refused.length).toBeGreaterThan(1);
  // Tried again, quietly: the page stays as it was, alive.
  await page.waitForTimeout(1_000);
  expect(errors, 'nothing uncaught: no module abort ("unreachable"), no unlooked-at fetch').toEqual([]);
  await expect(page).toHaveURL(/\/$/);
  expect(await marked(page)).toBe(true);

  // Each chunk fails once more, then loads: the navigation happens in the page, no reload.
  await page.unroute(CHUNKS);
  const failedOnce = new Set<string>();
  await page.route(CHUNKS, (route) => {
    const url = route.request().url();
    if (failedOnce.has(url)) return route.continue();
    failedOnce.add(url);
    return route.abort('connectionreset');
  });
  await page.mouse.move(0, 0);
  await sidebar.getByRole('link', { name: 'Clusters' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Clusters' })).toBeVisible();
  expect(failedOnce.size, 'the clusters route loaded chunks that had failed').toBeGreaterThan(0);
  expect(await marked(page), 'a client-side navigation, not a page load').toBe(true);
  expect(errors, 'nothing uncaught: no module abort ("unreachable"), no unlooked-at fetch').toEqual([]);

  // The first prefetch's chunks load too once they come.
  await page.unroute(CHUNKS);
  await sidebar.getByRole('link', { name: 'Plugins' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Plugins' })).toBeVisible();
  expect(await marked(page)).toBe(true);
  expect(errors, 'nothing uncaught: no module abort ("unreachable"), no unlooked-at fetch').toEqual([]);
});

test('a chunk that is gone (a newer console deployed) sends the navigation to the server', async ({ page }) => {
  await signIn(page, 'alice@acme-corp.com');
  await hydrated(page);
  const errors = uncaught(page);
  await markWindow(page);
  await page.route(CHUNKS, (route) => route.fulfill({ status: 404, contentType: 'text/plain', body: 'gone' }));
  await page.getByRole('navigation', { name: 'Sidebar' }).getByRole('link', { name: 'Clusters' }).click();
  // The server renders the page the user asked for.
  await expect(page).toHaveURL(/\/clusters$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Clusters' })).toBeVisible();
  await expect(page.getByRole('cell', { name: 'prod-eu' })).toBeVisible();
  expect(await marked(page), 'a page load').toBe(false);
  expect(errors, 'nothing uncaught: no module abort ("unreachable"), no unlooked-at fetch').toEqual([]);
});

test('a navigation the console starts itself (after a save) goes to the server when its chunk is gone', async ({ page }) => {
  const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';
  const name = `e2e-chunks-${Date.now()}`;
  await signIn(page, 'alice@acme-corp.com', `${DEMO}/create`);
  await hydrated(page);
  const errors = uncaught(page);
  await markWindow(page);
  try {
    await page.locator('[name="metadata.name"]').fill(name);
    await page.locator('[name="metadata.namespace"]').selectOption('default');
    await page.locator('[name="spec.message"]').fill('Saved while the console was replaced');
    // A newer console is deployed while the form is open: the detail page's chunk is gone.
    await page.route(CHUNKS, (route) => route.fulfill({ status: 404, contentType: 'text/plain', body: 'gone' }));
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    // The save went through; the server renders where the form was going.
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
    await expect(page.getByRole('region', { name: 'Spec' })).toContainText('Saved while the console was replaced');
    expect(await marked(page), 'a page load').toBe(false);
    expect(errors, 'nothing uncaught: no module abort ("unreachable"), no unlooked-at fetch').toEqual([]);
  } finally {
    kubectl(['delete', 'demoitems.demo.fundament.io', name, '-n', 'default', '--ignore-not-found']);
  }
});

test('offline, a navigation into a route not loaded yet stays in the page, says so, and opens once the network is back', async ({ page, context }) => {
  await signIn(page, 'alice@acme-corp.com');
  await hydrated(page);
  const errors = uncaught(page);
  await markWindow(page);
  await context.setOffline(true);
  await page.getByRole('navigation', { name: 'Sidebar' }).getByRole('link', { name: 'Clusters' }).click();
  const offline = page.getByRole('status').filter({ hasText: 'You are offline: the page opens once the network is back.' });
  await expect(offline).toBeVisible();
  // Still this page, alive: not the browser's offline page (a page load would have shown it).
  await page.waitForTimeout(1_500);
  expect(await marked(page), 'no page load').toBe(true);
  await context.setOffline(false);
  await expect(page.getByRole('heading', { level: 1, name: 'Clusters' })).toBeVisible();
  await expect(page.getByRole('cell', { name: 'prod-eu' })).toBeVisible();
  await expect(offline).toHaveCount(0);
  expect(await marked(page), 'a client-side navigation').toBe(true);
  expect(errors, 'nothing uncaught: no module abort ("unreachable"), no unlooked-at fetch').toEqual([]);
});
