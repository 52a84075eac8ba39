// Sign-in through a real OpenID Connect provider (end2end/oidc/provider.mjs):
// the whole walk — a wrong password refused at the provider, the right one,
// the user's name from the ID token, a plugin page, sign-out at the console
// and at the provider, and the old session refused by the console,
// kube-api-proxy, authn and plugin-proxy — and one test per failure, each a
// readable page on the console with a way back.
import crypto from 'node:crypto';
import { test, expect, type APIRequestContext, type Cookie, type Page } from '@playwright/test';
import { AUTHN, CONSOLE, GATEWAY, originOf, send } from '../tests/origins';
import { setFault } from '../tests/faults';

const PROVIDER = 'http://127.0.0.1:8099';
const PROD = '019b4000-2000-7000-8000-000000000001';
const CERT_MANAGER = 'acme-corp--cert-manager';
const CERT_MANAGER_ORIGIN = originOf(CERT_MANAGER);
const CERTS = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';
const CERTS_PAGE = `/clusters/${PROD}/plugins/${CERT_MANAGER}/v1.17.2/console/certificates-list.html`;
const PASSWORD = 'correct horse battery staple';
/** A list the gateway answers 200 for a live session of alice's, 401 for an ended one. */
const LIST = `${GATEWAY}/clusters/${PROD}/apis/cert-manager.io/v1/certificates`;
/**
 * Where the names of the sign-ins' transaction cookies begin: one cookie per sign-in in
 * progress, `__Host-fundament_oidc_tx_<stamp>_<tag>` (crates/session/src/oidc_transaction.rs).
 */
const TX = '__Host-fundament_oidc_tx';

/** The transaction cookies among a browser's cookies (earlier consoles' one cookie too). */
const transactions = (cookies: Cookie[]) => cookies.filter((c) => c.name.startsWith(TX));

/** The name of the transaction cookie of the sign-in whose state is `state`, started at `stamp`. */
function transactionName(state: string, stamp: number): string {
  const tag = crypto.createHash('sha256').update(state).digest('base64url').slice(0, 16);
  return `${TX}_${stamp}_${tag}`;
}

async function providerMode(mode: 'normal' | 'rogue-key' | 'clock-ahead' | 'down' | 'short-code') {
  const answer = await send(`${PROVIDER}/test/mode/${mode}`, { method: 'PUT' });
  expect(answer.status).toBe(204);
}

/**
 * Where the console's sign-in start sends a browser now: the provider, or the sign-in page
 * with an error. authn keeps a discovery, good or failed, for 5 s (DISCOVERY_MAX_AGE_SECS in
 * crates/authn/src/oidc/mod.rs), so a change of the provider shows within that time.
 */
async function startSendsTo(request: APIRequestContext): Promise<string> {
  const answer = await request.get('/sign-in/oidc/start', { maxRedirects: 0 });
  return answer.headers()['location'] ?? `no redirect: ${answer.status()}`;
}

test.afterEach(async ({ request }) => {
  await providerMode('normal');
  // A failure authn keeps must not reach the next test.
  await expect.poll(() => startSendsTo(request), { timeout: 10_000 }).toMatch(new RegExp(`^${PROVIDER}/`));
});

/** From the console's sign-in page to the provider's login form. */
async function toProvider(page: Page, next = '/') {
  await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await expect(page).toHaveURL(new RegExp(`^${PROVIDER}/interaction/`));
}

/** Logs in at the provider and allows the console. */
async function logInAndAllow(page: Page) {
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Allow' }).click();
}

/** The console's sign-in page, showing `message`, with the way back offered. */
async function refusedWith(page: Page, code: string, message: RegExp) {
  await expect(page).toHaveURL(new RegExp(`/sign-in\\?error=${code}`));
  await expect(page.getByRole('alert')).toHaveText(message);
  await expect(page.getByRole('link', { name: 'Sign in with Test IdP' })).toBeVisible();
  const cookies = await page.context().cookies(CONSOLE);
  expect(cookies.map((c) => c.name)).not.toContain('__Host-fundament_auth');
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' });

async function frameTicket(userToken: string): Promise<{ status: number; ticket?: string }> {
  const uid = await send(`${GATEWAY}/clusters/${PROD}/apis/plugins.fundament.io/v1/plugininstallations/${CERT_MANAGER}`, {
    headers: bearer(userToken),
  });
  const installationId = uid.status === 200 ? JSON.parse(uid.body).metadata.uid : '00000000-0000-4000-8000-000000000000';
  const answer = await send(`${AUTHN}/authn.v1.TokenService/MintFrameTicket`, {
    method: 'POST',
    headers: bearer(userToken),
    body: JSON.stringify({ clusterId: PROD, installationId }),
  });
  return { status: answer.status, ticket: answer.status === 200 ? JSON.parse(answer.body).ticket : undefined };
}

test('sign in through the provider, browse a plugin page, sign out everywhere', async ({ page, browser }) => {
  await toProvider(page, CERTS);
  // The provider checks the password (its built-in form would take any).
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toHaveText('Wrong username or password.');
  await expect(page).toHaveURL(new RegExp(`^${PROVIDER}/interaction/`));
  await logInAndAllow(page);

  // Back on the console where the sign-in started, as the ID token's name says.
  await expect(page).toHaveURL(CERTS);
  await expect(page.locator('summary').filter({ hasText: 'User menu: Alice Anders (IdP)' })).toBeVisible();
  await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'ready');
  await expect(page.frameLocator('[data-plugin-frame] iframe').getByRole('link', { name: 'web-tls-cert' })).toBeVisible();

  const cookies = await page.context().cookies(CONSOLE);
  const session = cookies.find((c) => c.name === '__Host-fundament_auth')!;
  expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict' });
  expect(transactions(cookies)).toEqual([]);
  const token = session.value;
  // alice's UserToken: the directory mapped the provider's account to her, with the groups.
  const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
  expect(claims).toMatchObject({ sub: 'alice', email: 'alice@acme-corp.com', groups: ['platform-admins', 'acme-corp'] });

  // Controls: while signed in the token works on the gateway and at authn, and a frame
  // cookie of plugin-proxy opens the plugin's page.
  expect((await send(LIST, { headers: bearer(token) })).status).toBe(200);
  const ticket = await frameTicket(token);
  expect(ticket.status).toBe(200);
  const exchange = await send(`${CERT_MANAGER_ORIGIN}${CERTS_PAGE}?fundament-ticket=${ticket.ticket}`);
  expect(exchange.status).toBe(303);
  const frameCookie = [exchange.headers['set-cookie'] ?? []].flat()[0].split(';')[0];
  expect((await send(`${CERT_MANAGER_ORIGIN}${CERTS_PAGE}`, { headers: { Cookie: frameCookie } })).status).toBe(200);

  // The ID token kept for sign-out survives another site's navigation to the sign-out's last
  // step (which would otherwise leave the provider's session open at the next sign-out), and
  // a stray same-origin visit while signed in.
  const idTokenCookie = async () => (await page.context().cookies(CONSOLE)).find((c) => c.name === '__Host-fundament_oidc_id');
  expect(await idTokenCookie()).toBeDefined();
  await page.goto(`${PROVIDER}/.well-known/openid-configuration`);
  await Promise.all([
    page.waitForURL(new RegExp(`^${CONSOLE}/`)),
    page.evaluate((to) => { location.href = to; }, `${CONSOLE}/sign-in/oidc/end-session`),
  ]);
  await page.waitForLoadState('load');
  expect(await idTokenCookie()).toBeDefined();
  await page.goto('/sign-in/oidc/end-session');
  expect(await idTokenCookie()).toBeDefined();
  await page.goto(CERTS);
  await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'ready');

  // Sign out: our session is revoked, then the provider's session ends too.
  await page.locator('summary').filter({ hasText: 'User menu: Alice Anders (IdP)' }).click();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(new RegExp(`^${PROVIDER}/session/end`));
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  await expect(page).toHaveURL(new RegExp(`^${CONSOLE}/sign-in`));
  await expect(page.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
  const after = await page.context().cookies(CONSOLE);
  expect(after.map((c) => c.name)).not.toContain('__Host-fundament_auth');
  expect(after.map((c) => c.name)).not.toContain('__Host-fundament_oidc_id');

  // The old cookie, planted back, is refused everywhere.
  const replay = await browser.newContext();
  await replay.addCookies([{ ...session, sameSite: 'Strict' }]);
  const again = await replay.newPage();
  await again.goto(CERTS);
  await expect(again.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
  await replay.close();
  await expect.poll(async () => (await send(LIST, { headers: bearer(token) })).status).toBe(401);
  expect((await frameTicket(token)).status).toBe(401);
  expect((await send(`${CERT_MANAGER_ORIGIN}${CERTS_PAGE}`, { headers: { Cookie: frameCookie } })).status).toBe(404);

  // The provider's session ended: the next sign-in asks for the password again.
  await toProvider(page);
  await expect(page.getByLabel('Password')).toBeVisible();
});

/** The browser's session cookie now. */
const sessionCookie = async (page: Page) =>
  (await page.context().cookies(CONSOLE)).find((c) => c.name === '__Host-fundament_auth')!;

/** Alice signed in through the provider, on /clusters: her session cookie. */
async function aliceSignedIn(page: Page) {
  await toProvider(page, '/clusters');
  await logInAndAllow(page);
  await expect(page).toHaveURL('/clusters');
  const first = await sessionCookie(page);
  expect((await send(LIST, { headers: bearer(first.value) })).status).toBe(200);
  return first;
}

test('a second sign-in in the same browser ends the session it replaces', async ({ page, browser }) => {
  const first = await aliceSignedIn(page);

  // Signed in still, the browser signs in again (the provider remembers alice: straight back).
  await page.goto('/sign-in?next=%2Fclusters');
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await expect(page).toHaveURL('/clusters');
  await expect(page.locator('summary').filter({ hasText: 'User menu: Alice Anders (IdP)' })).toBeVisible();
  const second = await sessionCookie(page);
  expect(second.value).not.toBe(first.value);

  // The first session ended with the switch: its token and its cookie, replayed, are nobody.
  await expect.poll(async () => (await send(LIST, { headers: bearer(first.value) })).status).toBe(401);
  expect((await frameTicket(first.value)).status).toBe(401);
  const replay = await browser.newContext();
  await replay.addCookies([{ ...first, sameSite: 'Strict' }]);
  const again = await replay.newPage();
  await again.goto('/clusters');
  await expect(again.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
  await replay.close();
  expect((await send(LIST, { headers: bearer(second.value) })).status).toBe(200);
});

test("a sign-in started from another site's link ends the session it replaces too", async ({ page }) => {
  const first = await aliceSignedIn(page);
  // A mail's link, on another site: the browser sends no SameSite=Strict cookie with it. The
  // console steps once through a page of its own, which does.
  await page.route('http://mail.example/**', (route) =>
    route.fulfill({ contentType: 'text/html', body: `<a href="${CONSOLE}/sign-in/oidc/start?next=%2Fclusters">Sign in</a>` }),
  );
  await page.goto('http://mail.example/inbox');
  await page.getByRole('link', { name: 'Sign in' }).click();
  // The provider remembers alice: straight back.
  await expect(page).toHaveURL('/clusters');
  const second = await sessionCookie(page);
  expect(second.value).not.toBe(first.value);
  await expect.poll(async () => (await send(LIST, { headers: bearer(first.value) })).status).toBe(401);
  expect((await send(LIST, { headers: bearer(second.value) })).status).toBe(200);
});

test("a sign-out that cannot end the provider's session says so, keeps the hint, and can be tried again", async ({ page }) => {
  await toProvider(page);
  await logInAndAllow(page);
  await expect(page.locator('summary').filter({ hasText: 'User menu: Alice Anders (IdP)' })).toBeVisible();
  const idTokenCookie = async () => (await page.context().cookies(CONSOLE)).find((c) => c.name === '__Host-fundament_oidc_id');
  // authn is down: the console ends its own session, but nobody can give it the provider's
  // end-session URL.
  await setFault('authn', { fault: 'down' });
  try {
    await page.locator('summary').filter({ hasText: 'User menu: Alice Anders (IdP)' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page).toHaveURL(/\/sign-in\?error=provider-sign-out-failed/);
    await expect(page.getByRole('alert')).toContainText('the identity provider could not be told');
    expect((await page.context().cookies(CONSOLE)).map((c) => c.name)).not.toContain('__Host-fundament_auth');
    expect(await idTokenCookie(), 'the hint is kept for the retry').toBeDefined();
  } finally {
    await setFault('authn', { fault: 'none' });
  }
  // authn is back: the retry ends the provider's session, and the next sign-in asks for the
  // password again.
  await page.getByRole('link', { name: 'Try again to sign out of the identity provider' }).click();
  await expect(page).toHaveURL(new RegExp(`^${PROVIDER}/session/end`));
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  await expect(page).toHaveURL(new RegExp(`^${CONSOLE}/sign-in`));
  expect(await idTokenCookie()).toBeUndefined();
  await toProvider(page);
  await expect(page.getByLabel('Password')).toBeVisible();
});

test('a provider that is down is a readable page', async ({ page, request }) => {
  await page.goto('/sign-in');
  await providerMode('down');
  // The test before this one had authn fetch the discovery moments ago: a provider that went
  // down is told within 5 s.
  await expect.poll(() => startSendsTo(request), { timeout: 10_000 }).toContain('error=provider-unavailable');
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await refusedWith(page, 'provider-unavailable', /could not be reached/);
});

test('denied consent is a readable page, and signing in from it still leads to the page asked for', async ({ page }) => {
  await toProvider(page, '/clusters?view=all');
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Deny' }).click();
  await refusedWith(page, 'denied', /cancelled at the identity provider/);
  // The provider returns the state with its error: that sign-in's transaction is used up.
  expect(transactions(await page.context().cookies(CONSOLE))).toEqual([]);
  // The page the sign-in was for is not lost with it (its start kept it beside the transaction).
  expect(new URL(page.url()).searchParams.get('next')).toBe('/clusters?view=all');
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  // The provider may remember the login (then it asks for consent only).
  const username = page.getByLabel('Username');
  const allow = page.getByRole('button', { name: 'Allow' });
  await expect(username.or(allow)).toBeVisible();
  if (await username.isVisible()) await logInAndAllow(page);
  else await allow.click();
  await expect(page).toHaveURL(`${CONSOLE}/clusters?view=all`);
  await expect(page.getByRole('navigation', { name: 'Sidebar' })).toBeVisible();
});

/**
 * Signs in once and keeps the provider's redirect back (the callback URL) and the sign-in's
 * transaction cookie as the browser sent them; then forgets every cookie of the console but
 * that one.
 */
async function capturedCallback(page: Page): Promise<{ callback: URL; transaction: Cookie }> {
  await toProvider(page);
  const [transaction] = transactions(await page.context().cookies(CONSOLE));
  expect(transaction).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
  const request = page.waitForRequest((r) => r.url().includes('/sign-in/oidc/callback?'));
  await logInAndAllow(page);
  const callback = await request;
  expect((await callback.allHeaders()).cookie).toContain(`${transaction.name}=${transaction.value}`);
  await expect(page.getByRole('navigation', { name: 'Sidebar' })).toBeVisible();
  await page.context().clearCookies();
  await page.context().addCookies([transaction]);
  return { callback: new URL(callback.url()), transaction };
}

test('a callback whose state is not this browser\'s sign-in is refused', async ({ page }) => {
  const { callback, transaction } = await capturedCallback(page);
  const forged = 'forged-state-of-another-sign-in';
  callback.searchParams.set('state', forged);
  // No sign-in of this browser has that state: nothing to finish, and the browser's own
  // transaction is left to its own callback.
  await page.goto(callback.toString());
  await refusedWith(page, 'transaction-invalid', /not started in this browser/);
  const held = transactions(await page.context().cookies(CONSOLE));
  expect(held.map((c) => `${c.name}=${c.value}`)).toEqual([`${transaction.name}=${transaction.value}`]);
  // A transaction under that state's name that holds another state: authn refuses it, and it
  // is used up.
  await page.context().clearCookies();
  await page.context().addCookies([{ ...transaction, name: transactionName(forged, 1) }]);
  await page.goto(callback.toString());
  await refusedWith(page, 'state-mismatch', /does not belong to the sign-in this browser started/);
  expect(transactions(await page.context().cookies(CONSOLE))).toEqual([]);
});

test('a code used once is refused the second time', async ({ page }) => {
  // Replayed with its own transaction cookie: the provider refuses the used code.
  const { callback } = await capturedCallback(page);
  await page.goto(callback.toString());
  await refusedWith(page, 'code-rejected', /expired or was already used/);
});

test('two tabs of one browser sign in at once, and both finish', async ({ page }) => {
  // A session that ran out in two tabs: "Sign in" in both, and both reach the provider
  // before either is finished there.
  const other = await page.context().newPage();
  await toProvider(page, '/clusters');
  await toProvider(other, CERTS);
  expect(transactions(await page.context().cookies(CONSOLE))).toHaveLength(2);
  for (const tab of [page, other]) {
    await tab.getByLabel('Username').fill('alice');
    await tab.getByLabel('Password').fill(PASSWORD);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await expect(tab.getByRole('button', { name: 'Allow' })).toBeVisible();
  }
  // Each tab finishes its own sign-in, on the page it started from.
  await page.getByRole('button', { name: 'Allow' }).click();
  await expect(page).toHaveURL('/clusters');
  await expect(page.locator('summary').filter({ hasText: 'User menu: Alice Anders (IdP)' })).toBeVisible();
  expect(transactions(await page.context().cookies(CONSOLE)), "the other tab's sign-in goes on").toHaveLength(1);
  await other.getByRole('button', { name: 'Allow' }).click();
  await expect(other).toHaveURL(CERTS);
  await expect(other.locator('summary').filter({ hasText: 'User menu: Alice Anders (IdP)' })).toBeVisible();
  expect(transactions(await page.context().cookies(CONSOLE))).toEqual([]);
  expect((await send(LIST, { headers: bearer((await sessionCookie(page)).value) })).status).toBe(200);
  await other.close();
});

test('sign-ins started over and over leave the browser three, and the newest finishes', async ({ page }) => {
  // Another site can make the browser start sign-ins again and again: the browser keeps the
  // newest three, so its Cookie header for the console stays small.
  for (let i = 0; i < 10; i++) {
    await page.goto('/sign-in/oidc/start?next=%2Fclusters');
    await expect(page).toHaveURL(new RegExp(`^${PROVIDER}/interaction/`));
    expect(transactions(await page.context().cookies(CONSOLE)).length).toBe(Math.min(i + 1, 3));
  }
  await logInAndAllow(page);
  await expect(page).toHaveURL('/clusters');
  await expect(page.locator('summary').filter({ hasText: 'User menu: Alice Anders (IdP)' })).toBeVisible();
  expect(transactions(await page.context().cookies(CONSOLE))).toHaveLength(2);
});

test('an expired code is refused', async ({ page }) => {
  // The provider's codes live 1 s and its token endpoint answers 1.5 s late: the code authn
  // exchanges has expired by the provider's own clock.
  await providerMode('short-code');
  await toProvider(page);
  await logInAndAllow(page);
  await refusedWith(page, 'code-rejected', /expired or was already used/);
});

test('a callback without the sign-in\'s cookie is refused', async ({ page }) => {
  await page.goto(`/sign-in/oidc/callback?code=abc&state=def`);
  await refusedWith(page, 'transaction-invalid', /not started in this browser/);
});

test('an ID token signed by a key the provider does not publish is refused', async ({ page }) => {
  await providerMode('rogue-key');
  await toProvider(page);
  await logInAndAllow(page);
  await refusedWith(page, 'unknown-key', /signed with a key it does not publish/);
});

test('an ID token from a clock ten minutes ahead is refused', async ({ page }) => {
  await providerMode('clock-ahead');
  await toProvider(page);
  await logInAndAllow(page);
  await refusedWith(page, 'clock-skew', /its clock and the console's disagree/);
});
