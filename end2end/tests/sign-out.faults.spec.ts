// A tab whose session ended or changed hands: a sign-out in another tab of the browser (hinted
// on the console's BroadcastChannel by the page the sign-out lands on, then checked with the
// server), a session revoked elsewhere (found by the tab's watch, answered 401), or another
// user's sign-in in another tab (hinted by that user's page, checked). The tab says so once,
// with a way back; its watches stop and are not retried; its plugin page is unloaded. A sign-out
// that did not happen ends nothing. Two tabs of one browser context share the session cookie as
// real tabs do. With the failing dependencies (end2end/playwright.faults.config.ts, lane 2)
// rather than the console suite, whose lane is the longest: these tests mostly wait (for
// requests that must not come), and they flip no switch, so they share their worker's stack.
import { test, expect, type Page, type Request } from '@playwright/test';
import { frameReady, hydrated, signIn, signOutInNewTab, userMenu } from './fixtures';
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
const otherUserNotice = (page: Page) => page.getByRole('alert').filter({ hasText: 'You are now signed in as' });

/** The tab's question to the server after a hint from another tab: whose is the session now. */
const isCheck = (r: Request) => new URL(r.url()).pathname === '/api/signed-in-as';

/** After the notice: nothing more is asked for the dead session, for longer than the registry's
 *  poll (5 s) and than the watch hub's first back-offs (1 s, then 2 s: a watch that was open,
 *  or that one 401 ended, would be back within them). A shorter wait where a test before
 *  covered the poll already. */
async function asksNothingMore(page: Page, calls: Request[], ms = 6_000) {
  const seen = calls.length;
  await page.waitForTimeout(ms);
  expect(calls.slice(seen).map((r) => `${r.method()} ${r.url()}`), 'requests after the notice').toEqual([]);
}

/** The plugin page was unloaded: no frame of it is left, the console says why. */
async function pluginPageClosed(page: Page, why = 'You were signed out') {
  await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'signed-out');
  await expect(page.locator('[data-plugin-frame] iframe')).toHaveAttribute('src', 'about:blank');
  await expect.poll(() => page.frames().some((f) => f.url().includes('/console/certificates-list.html'))).toBe(false);
  await expect(page.getByText(`${why}: the Cert Manager page was closed.`)).toBeVisible();
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

  test('a sign-out whose post fails ends no other tab', async ({ page, context }) => {
    test.setTimeout(60_000);
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);

    const other = await context.newPage();
    // The console does not answer the sign-out (down, or the network lost the post): alice is
    // still signed in.
    await other.route('**/api/sign-out', (route) => route.abort('connectionfailed'));
    await other.goto('/');
    await hydrated(other);
    const failed = other.waitForEvent('requestfailed', (r) => new URL(r.url()).pathname === '/api/sign-out');
    await userMenu(other, 'Alice').click();
    await other.getByRole('button', { name: 'Sign out' }).click();
    await failed;

    // A message from the other tab arrives at once, and its check within a moment.
    await page.waitForTimeout(1_500);
    await expect(notice(page)).toHaveCount(0);
    await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'ready');
    await other.close();
  });

  test("another user's sign-in in another tab is shown, and the tab stops acting for anyone", async ({ page, context }) => {
    test.setTimeout(60_000);
    const calls = sessionCalls(page);
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    await expect.poll(() => calls.filter(isWatch).length).toBeGreaterThan(0);

    // At the same browser, bob signs in without signing alice out: the cookie alice's tab
    // sends is now bob's.
    const other = await context.newPage();
    await signIn(other, 'bob@acme-corp.com');

    await expect(otherUserNotice(page)).toBeVisible({ timeout: 5_000 });
    await expect(otherUserNotice(page)).toHaveText(
      "You are now signed in as Bob in another tab. This page still shows Alice's view: its live updates and plugin pages stopped. Reload",
    );
    await expect(notice(page)).toHaveCount(0);
    expect(calls.some(isCheck), 'asked the server, not the message').toBe(true);
    const reload = otherUserNotice(page).getByRole('link', { name: 'Reload' });
    await expect(reload).toHaveAttribute('href', CERTS);
    await pluginPageClosed(page, 'Another user signed in');
    // The stopping is the sign-out's (the first test waits out the registry's poll); here the
    // watches' first back-offs.
    await asksNothingMore(page, calls, 3_000);

    // Reload: the page drawn for bob.
    await reload.click();
    await expect(userMenu(page, 'Bob')).toBeVisible();
    await expect(otherUserNotice(page)).toHaveCount(0);
    await other.close();
  });
});
