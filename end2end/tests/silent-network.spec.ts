// A network that loses the console's connection without a word: a request gets no answer,
// ever, and the browser fails none by itself for many minutes. The page's server calls give up
// after 45 s (played on the page's own clock), say so in words, and a read is tried again by
// itself once the network answers; nothing shows "Loading" for ever. (A watch's silence:
// watches.spec.ts.)
import { test, expect, type Page } from '@playwright/test';
import { hydrated, signIn } from './fixtures';

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
