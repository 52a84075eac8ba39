// A network that loses the console's connection without a word: a request gets no answer,
// ever, and the browser fails none by itself for many minutes. The page's server calls give up
// after 45 s (played on the page's own clock), say so in words, and a read is tried again by
// itself once the network answers; nothing shows "Loading" for ever. (A watch's silence:
// watches.spec.ts.)
import { test, expect, type Page } from '@playwright/test';
import { hydrated, signIn } from './fixtures';
import { kubectl } from './kubectl';

const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';

/** A client-side navigation, as a click on an in-app link. */
async function navigate(page: Page, to: string) {
  await page.evaluate((href) => {
    const link = document.createElement('a');
    link.href = href;
    document.body.append(link);
    link.click();
    link.remove();
  }, to);
}

test('a server call without an answer is given up after 45 s and said so; a read is tried again by itself', async ({ page }) => {
  await page.clock.install();
  await signIn(page, 'alice@acme-corp.com', '/');
  await hydrated(page);

  // From here the network swallows the list's server calls: no answer, no error.
  const objects = (url: URL) => url.pathname.endsWith('/objects');
  let swallowed = 0;
  await page.route(objects, () => {
    swallowed += 1;
  });
  await navigate(page, DEMO);
  const loading = page.locator('main').getByRole('status').filter({ hasText: 'Loading' });
  await expect(loading).toBeVisible();
  await expect.poll(() => swallowed).toBe(1);
  // A first load says "Loading…": no "Updating…" beside it.
  await expect(page.locator('[data-updating]')).toBeHidden();
  const alert = page.locator('main [role="alert"]');

  // Still waiting at 44 s, told at 45 s.
  await page.clock.runFor(44_000);
  await expect(loading).toBeVisible();
  await expect(alert).toHaveCount(0);
  await page.clock.runFor(2_000);
  await expect(alert).toContainText('The console did not answer within 45 s: check your network connection.');
  await expect(alert).not.toContainText('no answer in time');

  // The network answers again: the page asks again by itself and shows the list.
  await page.unroute(objects);
  await page.clock.runFor(10_000);
  await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
});

test('a slow answer to a filter says "Updating…" after a moment and keeps the rows shown until it comes', async ({ page }) => {
  await signIn(page, 'alice@acme-corp.com', DEMO);
  await hydrated(page);
  const table = page.getByRole('table', { name: 'DemoItem list' });
  await expect(table).toBeVisible();
  const updating = page.locator('[data-updating]');
  await expect(updating).toBeHidden();
  // Only the filter's call is slow: the live list also reads again whenever another test
  // changes a DemoItem, and those must not keep the notice up.
  let slowed = 0;
  await page.route(
    (url) => url.pathname.endsWith('/objects'),
    async (route) => {
      if (slowed++ === 0) await new Promise((resolve) => setTimeout(resolve, 2_000));
      await route.continue();
    },
  );
  await page.getByLabel('Search').fill('hello');
  await page.getByLabel('Search').press('Enter');
  await expect(updating).toBeVisible();
  await expect(updating).toHaveText('Updating…');
  await expect(updating).toHaveRole('status');
  await expect(table).toBeVisible();
  // Not at once: only after a moment.
  await expect.poll(() => updating.evaluate((e) => getComputedStyle(e).opacity)).toBe('1');
  await expect(updating).toBeHidden({ timeout: 8_000 });
  await expect(page).toHaveURL(/q=hello/);
});

test('a live list whose refresh fails keeps its rows, says they may be out of date, and catches up by itself', async ({ page }) => {
  const name = `stale-${Date.now()}`;
  await signIn(page, 'alice@acme-corp.com', `${DEMO}?namespace=default`);
  await hydrated(page);
  const table = page.getByRole('table', { name: 'DemoItem list' });
  await expect(table).toBeVisible();
  const rowsBefore = await table.locator('tbody tr').count();
  expect(rowsBefore).toBeGreaterThan(0);
  // The list's reads fail from here (the console unreachable for a moment); the watch stays.
  let refused = 0;
  const objects = (url: URL) => url.pathname.endsWith('/objects');
  await page.route(
    objects,
    (route) => {
      refused += 1;
      return route.abort('connectionrefused');
    },
  );
  try {
    kubectl(['create', '-f', '-'], JSON.stringify({
      apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem',
      metadata: { name, namespace: 'default' }, spec: { message: 'While the list could not be read' },
    }));
    await expect.poll(() => refused).toBeGreaterThan(0);
    const stale = page.locator('main [data-stale]');
    await expect(stale).toHaveRole('status');
    await expect(stale).toContainText('The list could not be refreshed:');
    await expect(stale).toContainText('It shows what was loaded last; the console tries again.');
    // The rows stay; no error in their place.
    await expect(table.locator('tbody tr')).toHaveCount(rowsBefore);
    await expect(page.locator('main [role="alert"]')).toHaveCount(0);
    // Tried again every 5 s; once the reads answer, the new object shows and the note goes.
    const tries = refused;
    await expect.poll(() => refused, { timeout: 8_000 }).toBeGreaterThan(tries);
    await page.unroute(objects);
    await expect(table.getByRole('link', { name, exact: true })).toBeVisible({ timeout: 8_000 });
    await expect(stale).toHaveCount(0);
  } finally {
    kubectl(['delete', 'demoitem', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
  }
});

test('an object page whose refresh fails keeps what it shows, says it may be out of date, and catches up by itself', async ({ page }) => {
  const name = `stale-${Date.now()}`;
  kubectl(['create', '-f', '-'], JSON.stringify({
    apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem',
    metadata: { name, namespace: 'default' }, spec: { message: 'As loaded' },
  }));
  try {
    await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default`);
    await hydrated(page);
    const spec = page.getByRole('region', { name: 'Spec' });
    await expect(spec).toContainText('As loaded');
    let refused = 0;
    const object = (url: URL) => url.pathname.endsWith('/object');
    await page.route(object, (route) => {
      refused += 1;
      return route.abort('connectionrefused');
    });
    kubectl(['patch', 'demoitem', name, '-n', 'default', '--type', 'merge', '-p', '{"spec":{"message":"Changed"}}']);
    const stale = page.locator('main [data-stale]');
    await expect(stale).toContainText('The object could not be refreshed:');
    await expect(spec).toContainText('As loaded');
    await expect(page.locator('main [role="alert"]')).toHaveCount(0);
    expect(refused).toBeGreaterThan(0);
    await page.unroute(object);
    await expect(spec).toContainText('Changed', { timeout: 8_000 });
    await expect(stale).toHaveCount(0);
  } finally {
    kubectl(['delete', 'demoitem', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
  }
});
