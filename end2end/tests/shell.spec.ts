// The hydrated console: theme, client-side navigation, menus, sign-out.
import { test, expect } from '@playwright/test';
import { contextMenu, hydrated, signIn, userMenu } from './fixtures';
import { GATEWAY, PROD, send, userToken } from './origins';

const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';
const ITEMS = `${GATEWAY}/clusters/${PROD}/apis/demo.fundament.io/v1/namespaces/default/demoitems`;

test('alice signs in, picks a theme that survives a reload, and navigates without page loads', async ({ page }) => {
  await signIn(page, 'alice@acme-corp.com');
  await hydrated(page);
  const html = page.locator('html');
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  // Until the user picks, the console follows the OS preference.
  await expect(html).toHaveAttribute('data-theme', 'system');
  await page.emulateMedia({ colorScheme: 'light' });
  const lightBackground = await background();
  await page.emulateMedia({ colorScheme: 'dark' });
  const darkBackground = await background();
  expect(darkBackground).not.toBe(lightBackground);
  await page.emulateMedia({ colorScheme: 'light' });
  expect(await background()).toBe(lightBackground);

  // Picking dark overrides the (light) OS preference, at once and after a reload.
  const saved = page.waitForResponse((r) => r.url().endsWith('/api/theme') && r.ok());
  await page.getByRole('button', { name: 'Switch to dark theme' }).click();
  await saved;
  await expect(html).toHaveAttribute('data-theme', 'dark');
  expect(await background()).toBe(darkBackground);

  await page.reload();
  await expect(html).toHaveAttribute('data-theme', 'dark');
  expect(await background()).toBe(darkBackground);
  await expect(page.getByRole('button', { name: 'Switch to light theme' })).toBeVisible();
  await hydrated(page);

  // A marker on window survives client-side navigation, not a full page load.
  await page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 42));
  const requests: string[] = [];
  page.on('request', (r) => { if (r.resourceType() === 'document') requests.push(r.url()); });

  const sidebar = page.getByRole('navigation', { name: 'Sidebar' });
  await sidebar.getByRole('link', { name: 'Clusters' }).click();
  await expect(page).toHaveURL(/\/clusters$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Clusters' })).toBeVisible();
  await expect(sidebar.getByRole('link', { name: 'Clusters' })).toHaveAttribute('aria-current', 'page');
  await sidebar.getByRole('link', { name: 'Plugins' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Plugins' })).toBeVisible();
  await page.goBack();
  await expect(page.getByRole('heading', { level: 1, name: 'Clusters' })).toBeVisible();

  expect(await page.evaluate(() => (window as unknown as { __marker?: number }).__marker)).toBe(42);
  expect(requests).toEqual([]);
  await expect(page).toHaveTitle('Clusters · Fundament');
});

test('the project switcher moves into a project and the sidebar follows', async ({ page }) => {
  await signIn(page, 'bob@acme-corp.com');
  await hydrated(page);
  await contextMenu(page).click();
  await page.getByRole('link', { name: 'Analytics prod-eu' }).click();
  await expect(page).toHaveURL(/\/projects\/analytics$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Analytics' })).toBeVisible();
  await expect(contextMenu(page)).toContainText('Analytics');
  const overview = page.getByRole('navigation', { name: 'Sidebar' }).getByRole('link', { name: 'Overview' });
  await expect(overview).toHaveAttribute('href', '/projects/analytics');
  await expect(overview).toHaveAttribute('aria-current', 'page');
});

test('the user menu signs out', async ({ page }) => {
  await signIn(page, 'bob@acme-corp.com');
  await hydrated(page);
  await userMenu(page, 'Bob').click();
  await expect(page.getByText('bob@acme-corp.com')).toBeVisible();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
  await page.goto('/clusters');
  await expect(page.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
});

test('keyboard users get a skip link and a visible focus ring', async ({ page }) => {
  await signIn(page, 'alice@acme-corp.com');
  await page.goto('/');
  await hydrated(page);
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to main content' });
  await expect(skip).toBeFocused();
  await expect(skip).toBeVisible();
  await page.keyboard.press('Tab');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle);
  expect(outline).toBe('solid');
  // The skip link moves the focus to the page's content, hydrated too (the client-side router
  // takes same-page links, so the browser's own move never happened).
  await skip.focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('main#main')).toBeFocused();
  // The theme switch hides the button pressed: the focus goes to the one that shows.
  await page.getByRole('button', { name: 'Switch to dark theme' }).focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('button', { name: 'Switch to light theme' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('button', { name: 'Switch to dark theme' })).toBeFocused();
});

test('a client-side navigation is announced to screen readers, and the focus stays on the link', async ({ page }) => {
  await signIn(page, 'alice@acme-corp.com');
  await page.goto('/');
  await hydrated(page);
  const announcer = page.locator('[data-route-announcer]');
  await expect(announcer).toHaveAttribute('aria-live', 'polite');
  // Nothing is said on a page load: the screen reader announces that itself.
  await expect(announcer).toHaveText('');
  const link = page.getByRole('navigation', { name: 'Sidebar' }).getByRole('link', { name: 'Clusters' });
  await link.focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1, name: 'Clusters' })).toBeVisible();
  await expect(announcer).toHaveText(await page.title());
  await expect(announcer).toContainText('Clusters');
  await expect(link).toBeFocused();
});

test('the page loads its wasm and CSS, with a CSP and no console errors', async ({ page }) => {
  const errors: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  const assets: Record<string, number> = {};
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/pkg/')) assets[u.pathname] = r.status();
  });
  const response = await page.goto('/');
  const csp = response?.headers()['content-security-policy'] ?? '';
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=_-]+'/);
  await hydrated(page);
  // Content-hashed names (console.<hash>.css …), see caching.spec.ts.
  for (const ext of ['css', 'js', 'wasm']) {
    const loaded = Object.entries(assets).filter(([p]) => new RegExp(`^/pkg/console\\.[A-Za-z0-9_-]{22}\\.${ext}$`).test(p));
    expect(loaded.map(([, status]) => status), `console.<hash>.${ext} in ${Object.keys(assets).join(', ')}`).toEqual([200]);
  }
  expect(errors).toEqual([]);
});

test('menus close with Escape, returning focus, on a click outside, and when the focus leaves them', async ({ page }) => {
  await signIn(page, 'alice@acme-corp.com');
  await hydrated(page);
  const menu = page.locator('details.menu').filter({ has: userMenu(page, 'Alice') });
  const button = userMenu(page, 'Alice');
  await button.click();
  await expect(menu).toHaveAttribute('open', '');
  await page.keyboard.press('Escape');
  await expect(menu).not.toHaveAttribute('open', '');
  await expect(button).toBeFocused();

  await button.click();
  await expect(menu).toHaveAttribute('open', '');
  await page.getByRole('main').click();
  await expect(menu).not.toHaveAttribute('open', '');

  // A keyboard user tabbing away leaves no menu open over the page behind it.
  await button.focus();
  await page.keyboard.press('Enter');
  await expect(menu).toHaveAttribute('open', '');
  await page.keyboard.press('Shift+Tab');
  await expect(button).not.toBeFocused();
  await expect(menu).not.toHaveAttribute('open', '');
});

test('on a phone the sidebar becomes a row above the page', async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 667 });
  await signIn(page, 'bob@acme-corp.com', '/clusters');
  await hydrated(page);
  // One measurement of both boxes, in page coordinates, once layout is settled.
  const layout = await page.evaluate(() => {
    const box = (el: Element) => {
      const r = el.getBoundingClientRect();
      return { top: r.top + window.scrollY, bottom: r.bottom + window.scrollY, width: r.width };
    };
    return {
      nav: box(document.querySelector('nav[aria-label="Sidebar"]')!),
      main: box(document.querySelector('main')!),
      scrollWidth: document.documentElement.scrollWidth,
      viewport: window.innerWidth,
    };
  });
  expect(layout.viewport).toBe(375);
  expect(layout.main.top).toBeGreaterThanOrEqual(layout.nav.bottom - 1);
  expect(layout.main.width).toBeGreaterThan(360);
  expect(layout.scrollWidth).toBeLessThanOrEqual(375);
});

test('Back returns a long list to where it was scrolled once its rows are there; Forward too', async ({ page }) => {
  // 30 DemoItems of their own label: a list taller than the sidebar.
  const stamp = `scroll-${Date.now()}`;
  const names = Array.from({ length: 30 }, (_, i) => `${stamp}-${String(i).padStart(2, '0')}`);
  const auth = { Authorization: `Bearer ${userToken('alice@acme-corp.com')}` };
  await Promise.all(
    names.map(async (name) => {
      const item = { apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name, namespace: 'default', labels: { 'e2e-scroll': stamp } }, spec: { message: name } };
      const answer = await send(ITEMS, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify(item) });
      expect(answer.status, answer.body).toBe(201);
    }),
  );
  try {
    await signIn(page, 'alice@acme-corp.com', `${DEMO}?labels=e2e-scroll%3D${stamp}`);
    await hydrated(page);
    const table = page.getByRole('table', { name: 'DemoItem list' });
    await expect(table.getByRole('row')).toHaveCount(31);
    const row = table.getByRole('row').last();
    await row.scrollIntoViewIfNeeded();
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(300);
    const scrolled = await page.evaluate(() => window.scrollY);

    // Into the last row's object (its page starts at its top), then Back: the list loads again,
    // slowly (as a long list does), and comes back where it was once its rows are there.
    await row.getByRole('link').first().click();
    await expect(page.getByRole('region', { name: 'Spec' })).toBeVisible();
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBe(0);
    await page.route(
      (url) => url.pathname.endsWith('/objects'),
      async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await route.continue();
      },
    );
    await page.goBack();
    await expect(table.getByRole('row')).toHaveCount(31);
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBe(scrolled);

    // Forward: the object at its top again.
    await page.goForward();
    await expect(page.getByRole('region', { name: 'Spec' })).toBeVisible();
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBe(0);
  } finally {
    await Promise.all(names.map((name) => send(`${ITEMS}/${name}`, { method: 'DELETE', headers: auth })));
  }
});
