// A page for something that does not exist answers 404 on the server's render, says what
// was looked for, links back to where it could be found, and offers no "Try again" (asking
// again gets the same answer). The same with and without JavaScript.
import { test, expect, type Page } from '@playwright/test';
import { kubectl } from './kubectl';
import { send } from './origins';

const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';

/** Signs in through the sign-in page's form (it works without JavaScript too). */
async function signIn(page: Page, email = 'alice@acme-corp.com') {
  await page.goto('/sign-in');
  await page.getByRole('button', { name: `Sign in as ${email}` }).click();
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
  // The filter keeps what was typed, to be put right, and the namespace chosen with it.
  await page.goto(`/projects/webshop${DEMO}?namespace=default&labels=${encodeURIComponent('app in (web')}`);
  await expect(page.getByLabel('Label selector')).toHaveValue('app in (web');
  await expect(page.getByLabel('Namespace')).toHaveValue('default');
  await page.getByLabel('Label selector').fill('app=web');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/[?&]labels=app%3Dweb/);
  expect(new URL(page.url()).searchParams.get('namespace')).toBe('default');
  // A namespace the page does not show stays shown as chosen, beside the way out of it.
  await page.goto(`/projects/analytics${DEMO}?namespace=default`);
  await expect(page.getByLabel('Namespace')).toHaveValue('default');
  await page.getByLabel('Namespace').selectOption({ label: 'All namespaces' });
  await page.getByRole('button', { name: 'Apply' }).click();
  // Other suites may have made DemoItems in analytics' namespaces: a list or "none", not an error.
  await expect(page.getByLabel('Namespace')).toHaveValue('');
  await expect(page.getByRole('main').getByRole('alert')).toHaveCount(0);
  expect(new URL(page.url()).searchParams.get('namespace') ?? '').toBe('');
  // An audit filter no call could match is refused too, rather than answering "no calls".
  const decision = await page.goto('/audit?decision=zzz');
  expect(decision?.status()).toBe(400);
  await expect(page.getByRole('main').getByRole('alert')).toContainText('the audit filter decision must be allowed, denied or error');
});

test('a page asked for with a trailing slash is sent to its one URL, query and all', async ({ page }) => {
  await signIn(page);
  for (const [path, to] of [
    ['/clusters/', '/clusters'],
    ['/audit/?decision=denied', '/audit?decision=denied'],
    [`${DEMO}//?sort=-0`, `${DEMO}?sort=-0`],
  ]) {
    const response = await page.goto(path);
    expect(response?.status(), path).toBe(200);
    expect(response?.request().redirectedFrom()?.url(), path).toMatch(new RegExp(`${path.replace(/[?]/g, '\\?')}$`));
    expect(page.url().slice(new URL(page.url()).origin.length), path).toBe(to);
  }
  // Never to another host: `//host` is a host to a browser. (Node keeps the path as sent.)
  const other = await send(`${new URL(page.url()).origin}//evil.example/`);
  expect(other.status).toBe(404);
  expect(other.headers.location).toBeUndefined();
});

test('a list sorted by a column it does not have is sorted by name, and marked so', async ({ page }) => {
  await signIn(page);
  await page.goto(`${DEMO}?sort=-99`);
  await expect(page.locator('main thead th[aria-sort="ascending"]')).toContainText('Name');
  const names = await page.locator('main tbody tr td:first-child').allInnerTexts();
  expect(names.length).toBeGreaterThan(1);
  expect(names).toEqual([...names].sort());
});

test('bob, who may not delete a DemoItem, is told so when he asks, and a delete he posts anyway says why', async ({ page }) => {
  const name = `bob-no-delete-${Date.now()}`;
  const item = { apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name, namespace: 'default' }, spec: { message: 'Stays' } };
  kubectl(['apply', '-f', '-'], JSON.stringify(item));
  try {
    await signIn(page, 'bob@acme-corp.com');
    const detail = `/projects/webshop${DEMO}/${name}?ns=default`;
    await page.goto(`${detail}&delete=1`);
    const refusal = page.getByRole('main').locator('[data-delete-refused]');
    await expect(refusal).toContainText(`You may not delete DemoItem ${name}`);
    await expect(page.getByRole('main').getByRole('button', { name: 'Delete' })).toHaveCount(0);
    // A delete posted as the page would (a page loaded before his right was taken, say).
    const origin = new URL(page.url()).origin;
    const posted = await page.request.post(`${detail}&delete=1`, { form: { _action: 'delete' }, headers: { Origin: origin }, maxRedirects: 0 });
    expect(posted.status()).toBe(403);
    const html = await posted.text();
    expect(html).toContain('data-delete-refused');
    expect(html).toContain(`You may not delete DemoItem ${name}`);
    expect(kubectl(['get', 'demoitems.demo.fundament.io', name, '-n', 'default', '-o', 'name'])).toContain(name);
    // Where nothing was asked, nothing is said.
    await page.goto(detail);
    await expect(page.getByRole('region', { name: 'Spec' })).toContainText('Stays');
    await expect(refusal).toHaveCount(0);
  } finally {
    kubectl(['delete', 'demoitems.demo.fundament.io', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
  }
});
