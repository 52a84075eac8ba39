// A page for something that does not exist answers 404 on the server's render, says what
// was looked for, links back to where it could be found, and offers no "Try again" (asking
// again gets the same answer). The same with and without JavaScript.
import { test, expect, type Page } from '@playwright/test';

const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';

/** Signs in through the sign-in page's form (it works without JavaScript too). */
async function signIn(page: Page) {
  await page.goto('/sign-in');
  await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
  await expect(page.getByRole('navigation', { name: 'Sidebar' })).toBeVisible();
}

test('a missing object answers 404, names the object and links back to its list', async ({ page }) => {
  await signIn(page);
  for (const query of ['', '&edit=1', '&edit=1&yaml=1']) {
    const response = await page.goto(`${DEMO}/no-such-item?ns=default${query}`);
    expect(response?.status(), query).toBe(404);
    const main = page.getByRole('main');
    await expect(main.getByRole('heading', { name: 'Not found' })).toBeVisible();
    await expect(main).toContainText('DemoItem default/no-such-item does not exist, or you cannot see it.');
    await expect(main.getByRole('link', { name: 'Try again' })).toHaveCount(0);
    await expect(main.getByRole('link', { name: 'Back to the DemoItem list' })).toHaveAttribute('href', DEMO);
  }
  await page.getByRole('main').getByRole('link', { name: 'Back to the DemoItem list' }).click();
  await expect(page).toHaveURL(DEMO);
  await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
});

test("a plugin's own detail page is not opened for an object there is not", async ({ page }) => {
  await signIn(page);
  const certs = '/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';
  const response = await page.goto(`${certs}/no-such-cert?ns=default`);
  expect(response?.status()).toBe(404);
  const main = page.getByRole('main');
  await expect(main).toContainText('Certificate default/no-such-cert does not exist, or you cannot see it.');
  await expect(main.getByRole('link', { name: 'Back to the Certificate list' })).toHaveAttribute('href', certs);
  await expect(page.locator('[data-plugin-frame]')).toHaveCount(0);
  // Inside a project, an object of another project's namespace is refused, not framed.
  const refused = await page.goto(`/projects/analytics${certs}/web-tls-cert?ns=default`);
  expect(refused?.status()).toBe(400);
  await expect(main.getByRole('alert')).toContainText('The namespace "default" is not one this page shows.');
  await expect(page.locator('[data-plugin-frame]')).toHaveCount(0);
  // One there is opens in its frame.
  expect((await page.goto(`${certs}/web-tls-cert?ns=default`))?.status()).toBe(200);
  await expect(page.locator('[data-plugin-frame]')).toHaveCount(1);
});

test('an unknown plugin, kind or project answers 404 too', async ({ page }) => {
  await signIn(page);
  for (const path of [
    '/plugin-resources/acme-corp--nope/demoitems.demo.fundament.io',
    '/plugin-resources/acme-corp--demo/nothings.demo.fundament.io/x?ns=default',
    '/projects/no-such-project/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io',
  ]) {
    const response = await page.goto(path);
    expect(response?.status(), path).toBe(404);
    await expect(page.getByRole('main').getByRole('heading', { name: 'Not found' })).toBeVisible();
    await expect(page.getByRole('main').getByRole('link', { name: 'Try again' })).toHaveCount(0);
  }
});

test('a page the console cannot serve as asked answers 400, says why, and offers no "Try again"', async ({ page }) => {
  await signIn(page);
  for (const [path, why] of [
    [`${DEMO}?labels=${encodeURIComponent('app in (web')}`, 'The label selector "app in (web" is not valid'],
    [`/projects/analytics${DEMO}?namespace=default`, 'The namespace "default" is not one this page shows.'],
  ]) {
    const response = await page.goto(path);
    expect(response?.status(), path).toBe(400);
    const alert = page.getByRole('main').getByRole('alert');
    await expect(alert).toContainText(why);
    await expect(alert.getByRole('link', { name: 'Try again' })).toHaveCount(0);
  }
  // The filter keeps what was typed, to be put right.
  await page.goto(`${DEMO}?labels=${encodeURIComponent('app in (web')}`);
  await expect(page.getByLabel('Label selector')).toHaveValue('app in (web');
});
