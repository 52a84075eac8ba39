// The production topology (see playwright.production.config.ts): the console,
// the gateway and each plugin on host names of their own over TLS. Plugin
// pages load from their installation's origin and call the gateway there with
// CORS; the console's live lists watch through its own route; cookies stay on
// the host that set them; sign-out ends the session everywhere.
import { test, expect } from '@playwright/test';
import http from 'node:http';
import { signIn, hydrated, userMenu } from '../tests/fixtures';

const TLS = 9443;
const CONSOLE = `https://console.example.test:${TLS}`;
const GATEWAY = `https://kube.example.test:${TLS}`;
const CERT_MANAGER = `https://acme-corp--cert-manager.plugins.example.test:${TLS}`;
const PROD = '019b4000-2000-7000-8000-000000000001';
// The services' own loopback ports, for calls from Node (which cannot resolve *.example.test).
const INTERNAL_CONSOLE = 'http://127.0.0.1:9000';
const INTERNAL_GATEWAY = 'http://127.0.0.1:9081';

function call(url: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (c) => (text += c));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    request.on('error', reject);
    if (body) request.write(body);
    request.end();
  });
}

test('a plugin page loads from its own origin and reads the cluster through the gateway host', async ({ page }) => {
  const dataCall = page.waitForRequest((r) => r.url().startsWith(`${GATEWAY}/clusters/${PROD}/apis/cert-manager.io/`));
  await signIn(page, 'alice@acme-corp.com', '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io');
  await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'ready');
  const src = new URL((await page.locator('[data-plugin-frame] iframe').getAttribute('src'))!);
  expect(src.origin).toBe(CERT_MANAGER);
  const frame = page.frameLocator('[data-plugin-frame] iframe');
  await expect(frame.getByRole('link', { name: 'web-tls-cert' })).toBeVisible();
  const request = await dataCall;
  expect((await request.allHeaders()).origin).toBe(CERT_MANAGER);
  expect((await request.allHeaders()).cookie).toBeUndefined();
  // The page's own origin holds no console credential, and cannot read its frame cookie.
  const pluginFrame = page.frames().find((f) => f.url().startsWith(CERT_MANAGER))!;
  expect(await pluginFrame.evaluate(() => document.cookie)).not.toMatch(/fundament_(auth|frame)/);
});

test('cookies stay on the host that set them', async ({ page, context }) => {
  await signIn(page, 'alice@acme-corp.com', '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io');
  await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'ready');
  const session = (await context.cookies(CONSOLE)).find((c) => c.name === '__Host-fundament_auth')!;
  expect(session).toMatchObject({ domain: 'console.example.test', path: '/', secure: true, httpOnly: true, sameSite: 'Strict' });
  expect((await context.cookies(GATEWAY)).map((c) => c.name)).not.toContain('__Host-fundament_auth');
  expect((await context.cookies(`https://plugins.example.test:${TLS}`)).map((c) => c.name)).toEqual([]);
  const frameCookie = (await context.cookies(CERT_MANAGER)).find((c) => c.name.startsWith('__Host-fundament_frame-'));
  expect(frameCookie).toMatchObject({ domain: 'acme-corp--cert-manager.plugins.example.test', secure: true, httpOnly: true });
  // The gateway refuses the console's cookie even when a page makes the browser send it.
  const status = await page.evaluate(async (url) => {
    try {
      return (await fetch(url, { credentials: 'include' })).status;
    } catch {
      return 'blocked';
    }
  }, `${GATEWAY}/clusters/${PROD}/api/v1/namespaces`);
  expect(status).toBe('blocked');
});

test('a generated list follows the cluster through the console\'s own route', async ({ page }) => {
  const name = `prod-topology-${Date.now()}`;
  const watch = page.waitForRequest((r) => r.url().startsWith(`${CONSOLE}/kube/clusters/${PROD}/apis/demo.fundament.io/`));
  await signIn(page, 'alice@acme-corp.com', '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io');
  await hydrated(page);
  await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
  await watch;
  // Created behind the browser's back, as alice, on the gateway's loopback port.
  const token = await userToken(page);
  const created = await call(
    `${INTERNAL_GATEWAY}/clusters/${PROD}/apis/demo.fundament.io/v1/namespaces/default/demoitems`,
    { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    'POST',
    JSON.stringify({ apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name }, spec: { message: 'over TLS' } }),
  );
  expect(created.status, created.body).toBe(201);
  await expect(page.getByRole('link', { name, exact: true })).toBeVisible();
});

test('sign-out ends the session: a copy of the cookie is nobody afterwards', async ({ page, context }) => {
  await signIn(page, 'alice@acme-corp.com', '/');
  const session = (await context.cookies(CONSOLE)).find((c) => c.name === '__Host-fundament_auth')!;
  const before = await call(`${INTERNAL_CONSOLE}/clusters`, { Cookie: `${session.name}=${session.value}`, Accept: 'text/html' });
  expect(before.body).toContain('>Alice<');
  await page.locator('summary').filter({ hasText: 'User menu: Alice' }).click();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(`${CONSOLE}/sign-in`);
  const after = await call(`${INTERNAL_CONSOLE}/clusters`, { Cookie: `${session.name}=${session.value}`, Accept: 'text/html' });
  expect(after.body).not.toContain('>Alice<');
  expect(after.body).toContain('Sign in to Fundament');
});

/** alice's UserToken, as the console keeps it (the session cookie's value). */
async function userToken(page: import('@playwright/test').Page): Promise<string> {
  const cookie = (await page.context().cookies(CONSOLE)).find((c) => c.name === '__Host-fundament_auth')!;
  return cookie.value;
}

test("a plugin page that never yields its thread leaves the console responsive (its own process)", async ({ page }) => {
  await signIn(page, 'alice@acme-corp.com', '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io');
  await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'ready');
  const pluginFrame = page.frames().find((f) => f.url().startsWith(CERT_MANAGER))!;
  // Started from a timer: the evaluation itself returns before the loop begins.
  await pluginFrame.evaluate(() => { setTimeout(() => { for (;;) { /* never yields */ } }, 50); });
  const within = (ms: number, evaluation: Promise<string>) =>
    Promise.race([evaluation, new Promise<string>((resolve) => setTimeout(() => resolve('no answer'), ms))]);
  // The page's loop runs: the frame answers nothing any more.
  await expect.poll(() => within(1_000, pluginFrame.evaluate(() => 'the page answered')), { timeout: 10_000 }).toBe('no answer');
  // The console, in a process of its own (the page's origin asks for one: Origin-Agent-Cluster),
  // still does, although the two share a site.
  expect(await within(5_000, page.evaluate(() => 'the console answered'))).toBe('the console answered');
  await page.getByRole('navigation', { name: 'Sidebar' }).getByRole('link', { name: 'Overview' }).click();
  await expect(page).toHaveURL(/\/projects\/webshop$/);
});

test("a page of the console's site reads no console page as the user, even without a plugin's CSP", async ({ browser }) => {
  // Plugin origins are the console's site here, so its Strict session cookie goes along with
  // their requests. A plugin page's CSP stops a no-cors read or a nested frame of a console
  // page; with CSP bypassed (as a page would be without that header), the console refuses them
  // itself.
  const context = await browser.newContext({ bypassCSP: true, baseURL: CONSOLE });
  const page = await context.newPage();
  try {
    await signIn(page, 'alice@acme-corp.com', '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io');
    await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'ready');
    const pluginFrame = page.frames().find((f) => f.url().startsWith(CERT_MANAGER))!;
    const answer = (url: string) => page.waitForResponse((r) => r.url() === url);
    const read = answer(`${CONSOLE}/clusters?read=1`);
    await pluginFrame.evaluate((url) => { fetch(url, { mode: 'no-cors', credentials: 'include' }).catch(() => {}); }, `${CONSOLE}/clusters?read=1`);
    expect((await read).status(), 'a no-cors read').toBe(403);
    const framed = answer(`${CONSOLE}/clusters?frame=1`);
    await pluginFrame.evaluate((url) => {
      const frame = document.createElement('iframe');
      frame.src = url;
      document.body.append(frame);
    }, `${CONSOLE}/clusters?frame=1`);
    expect((await framed).status(), 'a nested frame').toBe(403);
    // The console's own page, navigated to: served, and telling the browser to keep to https.
    const response = (await page.goto(`${CONSOLE}/clusters`))!;
    expect(response.status()).toBe(200);
    expect(response.headers()['strict-transport-security']).toBe('max-age=31536000');
    expect(response.headers()['cross-origin-opener-policy']).toBe('same-origin');
  } finally {
    await context.close();
  }
});

test("cookies a plugin page sets for the parent domain neither sign the user out nor stop other plugins' pages", async ({ page, context }) => {
  // Here the plugin origins share the console's parent domain (example.test), so a plugin page
  // may set a cookie with Domain=example.test; the browser then sends it to the console and to
  // every plugin origin. Chromium stores and sends UTF-8 in cookie names and values, and one
  // such byte made the console and plugin-proxy drop the whole Cookie header: the user was
  // signed out of the console, and every plugin frame refused, for as long as the planted
  // cookie lived. A name that is the session cookie's after a no-break space (which the
  // browser's __Host- check does not see as prefixed) must stay another name, and the theme
  // cookie's unprefixed name chooses nothing.
  const certificates = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';
  await signIn(page, 'alice@acme-corp.com', certificates);
  await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'ready');
  const pluginFrame = page.frames().find((f) => f.url().startsWith(CERT_MANAGER))!;
  const planted = await pluginFrame.evaluate((cluster) => {
    for (const cookie of [
      'tossed=\u00fc; Domain=example.test; Path=/; Max-Age=600',
      'fundament_theme=dark; Domain=example.test; Path=/; Max-Age=600',
      '\u00a0__Host-fundament_auth=planted; Domain=example.test; Path=/; Max-Age=600',
      `\u00a0__Host-fundament_frame-${cluster}=planted; Domain=example.test; Path=/; Max-Age=600`,
    ]) {
      document.cookie = cookie;
    }
    return document.cookie;
  }, PROD);
  expect(planted, 'the browser kept the planted cookies').toContain('tossed=\u00fc');
  const sent = (await context.cookies(CONSOLE)).map((c) => c.name);
  expect(sent, 'the browser sends them to the console').toEqual(expect.arrayContaining(['tossed', '\u00a0__Host-fundament_auth']));

  // The console still reads alice's session.
  await page.goto('/');
  await hydrated(page);
  await expect(userMenu(page, 'Alice')).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Sidebar' })).toBeVisible();
  // Nor does the page choose the console's theme (the user's choice is a __Host- cookie).
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'system');
  // And a plugin page opens: plugin-proxy reads its frame cookie beside them.
  await page.goto(certificates);
  await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'ready');
  await expect(page.frameLocator('[data-plugin-frame] iframe').getByRole('link', { name: 'web-tls-cert' })).toBeVisible();
});
