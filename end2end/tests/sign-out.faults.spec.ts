// A tab whose session ended: a sign-out in another tab of the browser (told on the console's
// BroadcastChannel) or a session revoked elsewhere (found by the tab's watch, answered 401).
// The tab says so once, with a way back; its watches stop and are not retried; its plugin page
// is unloaded. Two tabs of one browser context share the session cookie as real tabs do.
// With the failing dependencies (end2end/playwright.faults.config.ts, lane 2) rather than the
// console suite, whose lane is the longest: these tests mostly wait (for requests that must not
// come), and they flip no switch, so they share their worker's stack.
import { test, expect, type Page, type Request } from '@playwright/test';
import { frameReady, hydrated, signIn, signOutInNewTab } from './fixtures';
import { AUTHN, CONSOLE, send } from './origins';

const CERTS = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';

/** What the tab asks the console for the session: watches and lists through the cluster route,
 *  server functions (tokens, tickets, the plugin registry's polls). */
function sessionCalls(page: Page): Request[] {
  const calls: Request[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.origin === CONSOLE && (url.pathname.startsWith('/kube/') || url.pathname.startsWith('/api/'))) calls.push(r);
  });
  return calls;
}

const isWatch = (r: Request) => new URL(r.url()).searchParams.get('watch') === '1';

const notice = (page: Page) => page.getByRole('alert').filter({ hasText: 'You were signed out' });

/** After the notice: nothing more is asked for the dead session, for longer than the registry's
 *  poll (5 s) and than the watch hub's first back-offs (1 s, then 2 s: a watch that was open,
 *  or that one 401 ended, would be back within them). */
async function asksNothingMore(page: Page, calls: Request[]) {
  const seen = calls.length;
  await page.waitForTimeout(6_000);
  expect(calls.slice(seen).map((r) => `${r.method()} ${r.url()}`), 'requests after the notice').toEqual([]);
}

/** The plugin page was unloaded: no frame of it is left, the console says why. */
async function pluginPageClosed(page: Page) {
  await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'signed-out');
  await expect(page.locator('[data-plugin-frame] iframe')).toHaveAttribute('src', 'about:blank');
  await expect.poll(() => page.frames().some((f) => f.url().includes('/console/certificates-list.html'))).toBe(false);
  await expect(page.getByText('You were signed out: the Cert Manager page was closed.')).toBeVisible();
}

test.describe('the end of a session in an open tab', () => {
  test('a sign-out in another tab shows at once, stops the watches and closes the plugin page', async ({ page, context }) => {
    test.setTimeout(60_000);
    const calls = sessionCalls(page);
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    // The registry's watch of the installations is open.
    await expect.poll(() => calls.filter(isWatch).length).toBeGreaterThan(0);
    await expect(notice(page)).toHaveCount(0);

    const other = await signOutInNewTab(context);
    // The tab that signed out is not told it was signed out: it left.
    await expect(notice(other)).toHaveCount(0);

    await expect(notice(page)).toBeVisible({ timeout: 3_000 });
    await expect(notice(page)).toHaveCount(1);
    const again = notice(page).getByRole('link', { name: 'Sign in again' });
    await expect(again).toHaveAttribute('href', `/sign-in?next=${encodeURIComponent(CERTS).replaceAll('%2F', '/')}`);
    await pluginPageClosed(page);
    await asksNothingMore(page, calls);
    await other.close();
  });

  test('a session revoked elsewhere is found by the watch; signing in again brings the page back', async ({ page, context }) => {
    test.setTimeout(90_000);
    // No message from another tab here: only the 401 can tell this tab.
    await page.addInitScript(() => {
      delete (window as { BroadcastChannel?: unknown }).BroadcastChannel;
    });
    const calls = sessionCalls(page);
    const answered401: string[] = [];
    page.on('response', (r) => {
      if (r.status() === 401 && new URL(r.url()).origin === CONSOLE) answered401.push(r.url());
    });
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    await expect.poll(() => calls.filter(isWatch).length).toBeGreaterThan(0);

    // An administrator (or another browser holding a copy) ends the session at authn; the
    // browser keeps its cookie.
    const cookie = (await context.cookies(CONSOLE)).find((c) => c.name === '__Host-fundament_auth')!;
    const revoked = await send(`${AUTHN}/authn.v1.AuthnService/SignOut`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${cookie.value}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(revoked.status).toBe(200);

    // The gateway ends the watch of a revoked session; the watch's next connection is answered 401.
    await expect(notice(page)).toBeVisible({ timeout: 10_000 });
    expect(answered401.some((u) => new URL(u).pathname.startsWith('/kube/')), answered401.join('\n')).toBe(true);
    await pluginPageClosed(page);
    await asksNothingMore(page, calls);

    // The notice's link: sign in again, back on the same page, live.
    await notice(page).getByRole('link', { name: 'Sign in again' }).click();
    await expect(page.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
    await hydrated(page);
    await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
    await page.waitForURL(`**${CERTS}`);
    await frameReady(page);
    await expect(notice(page)).toHaveCount(0);
  });
});
