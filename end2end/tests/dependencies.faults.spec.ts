// Every other dependency of the console failing and coming back, through mock mode's
// development fault switches (docs/dev-switches.md): authn (down, slow, its signing key
// rotated), organization-api (down), OpenFGA (failing) and a plugin's runtime (hanging,
// answering garbage, down); the cluster's are in cluster.faults.spec.ts. For each: what the page shows
// while it lasts, and that the same page recovers by itself, without a reload, when it ends.
// Runs in end2end/playwright.faults.config.ts, on a stack of its worker's own: a switch acts on
// the whole stack.
import { test, expect, request as playwrightRequest, type Page } from '@playwright/test';
import { frameReady, hydrated, signIn, userMenu } from './fixtures';
import { aliceOnHome, CERTS, clearFaults, DEMO, expectSameDocument, FAULTS, frame, markDocument, navigate, probe, RUNTIME, setFault, sidebar, unavailable } from './faults';
import { kubectl } from './kubectl';
import { AUTHN, GATEWAY, ORGANIZATION_API, PROD, send } from './origins';

/** Opens the Certificates page of webshop as alice with cert-manager's runtime `fault`: the
 * frame ends in its error state. */
async function certificatesWhileRuntimeIs(page: Page, fault: string) {
  await signIn(page, 'alice@acme-corp.com', '/projects/webshop');
  await hydrated(page);
  await markDocument(page);
  await setFault(RUNTIME, { fault });
  await sidebar(page).getByRole('link', { name: 'Certificates' }).first().click();
  await expect(frame(page)).toHaveAttribute('data-state', 'error', { timeout: 15_000 });
}

test.describe('dependencies that fail and come back', () => {
  test.describe.configure({ mode: 'serial' });
  test.afterEach(clearFaults);

  test('authn down: browsing goes on, a plugin page waits for it, sign-in says so; all recover', async ({ page, browser }) => {
    test.setTimeout(90_000);
    await aliceOnHome(page);
    // bob, signed in before the outage, signs out during it (below).
    const leaving = await browser.newPage();
    await signIn(leaving, 'bob@acme-corp.com');
    const bobsToken = (await leaving.context().cookies()).find((c) => c.name === '__Host-fundament_auth')!.value;
    const namespaces = `${GATEWAY}/clusters/${PROD}/api/v1/namespaces`;
    const bearer = { headers: { Authorization: `Bearer ${bobsToken}` } };
    expect((await send(namespaces, bearer)).status).not.toBe(401);
    await setFault('authn', { fault: 'down' });
    expect((await probe(`${AUTHN}/readyz`)).status).toBe(503);
    // Sessions are verified with the keys the console holds: pages that need no token work.
    await navigate(page, DEMO);
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    // A plugin page needs a frame ticket and a token from authn.
    await navigate(page, CERTS);
    await expect(frame(page)).toHaveAttribute('data-state', 'not-opened');
    const notice = frame(page).getByRole('alert');
    await expect(notice).toContainText('could not get a plugin token from authn');
    await expect(notice.locator('[data-retry-in]')).toBeVisible();

    // Signing in is not possible meanwhile, and the page says why.
    const other = await browser.newPage();
    await other.goto('/sign-in');
    await hydrated(other);
    await other.getByRole('button', { name: 'Sign in as bob@acme-corp.com' }).click();
    await expect(other).toHaveURL(/error=authn-unavailable/);
    await expect(other.getByRole('alert')).toContainText('the sign-in service (authn) cannot be reached');

    // Signing out is possible: the session ends in this browser, and the page says that authn
    // has not been told yet.
    await hydrated(leaving);
    await userMenu(leaving, 'Bob').click();
    await leaving.getByRole('button', { name: 'Sign out' }).click();
    await expect(leaving).toHaveURL(/error=sign-out-pending/);
    await expect(leaving.getByRole('alert')).toContainText('could not be reached to end the session everywhere');
    expect((await leaving.context().cookies()).map((c) => c.name)).not.toContain('__Host-fundament_auth');

    await setFault('authn', { fault: 'none' });
    // The console tells authn once it is back: a copy of bob's token stops working everywhere.
    await expect.poll(async () => (await send(namespaces, bearer)).status, { timeout: 20_000 }).toBe(401);
    await leaving.close();
    // The frame opens by itself on its next try.
    await expect(frame(page)).toHaveAttribute('data-state', 'ready', { timeout: 20_000 });
    await expectSameDocument(page);
    await other.getByRole('button', { name: 'Sign in as bob@acme-corp.com' }).click();
    await expect(sidebar(other)).toBeVisible();
    await other.close();
  });

  test('authn slow: the plugin page shows it is loading, then opens', async ({ page }) => {
    test.setTimeout(60_000);
    await signIn(page, 'alice@acme-corp.com', '/projects/webshop');
    await hydrated(page);
    // 4 s: the page loads at least that long (its frame ticket and its token both wait on
    // authn), time for the two checks below on a loaded machine. Not longer: the frame gives a
    // page 5 s (READY_TIMEOUT_MS, counted from the same start) before it says the page did not
    // load, and past that this would be a test of a late page, not of a slow authn.
    await setFault('authn', { fault: 'slow', delay_ms: 4_000 });
    await sidebar(page).getByRole('link', { name: 'Certificates' }).first().click();
    await expect(frame(page)).toHaveAttribute('data-state', 'loading');
    await expect(page.getByText('Loading the Cert Manager page…')).toBeVisible();
    await expect(frame(page)).toHaveAttribute('data-state', 'ready', { timeout: 20_000 });
  });

  test("organization-api down: plugins stay usable from the definitions the console has, and it says so", async ({ page }) => {
    test.setTimeout(120_000);
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    await markDocument(page);
    await setFault('organization-api', { fault: 'down' });
    expect((await probe(`${ORGANIZATION_API}/readyz`)).status).toBe(503);
    // The console asks organization-api again once its copy is older than 30 s, on the next
    // change of the installations: make changes until it has asked.
    const notice = sidebar(page).locator('[data-notice="organization-api"]');
    for (let i = 0; i < 25 && !(await notice.isVisible()); i++) {
      kubectl(['annotate', 'plugininstallation', 'acme-corp--cert-manager', `faults.fundament.io/poke=${Date.now()}`, '--overwrite']);
      await page.waitForTimeout(2_000);
    }
    await expect(notice).toContainText('organization-api cannot be reached');
    // The plugins are still there and their pages still open (the pinned definitions are kept).
    await expect(sidebar(page).getByRole('link', { name: 'Certificates' }).first()).toBeVisible();
    await navigate(page, '/projects/webshop/plugin-resources/acme-corp--cert-manager/issuers.cert-manager.io');
    await expect(frame(page)).toHaveAttribute('data-state', 'ready', { timeout: 15_000 });

    await setFault('organization-api', { fault: 'none' });
    await expect(notice).toHaveCount(0, { timeout: 15_000 });
    await expectSameDocument(page);
    kubectl(['annotate', 'plugininstallation', 'acme-corp--cert-manager', 'faults.fundament.io/poke-']);
  });

  test('signing key rotated mid-session: nobody is signed out, plugin pages keep working', async ({ page, browser }) => {
    test.setTimeout(60_000);
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    await markDocument(page);
    const api = await playwrightRequest.newContext();
    const rotated = await api.post(`${FAULTS}/rotate-signing-key`);
    expect(rotated.status()).toBe(200);
    const { kid, published } = await rotated.json();
    expect(published[0]).toBe(kid);
    expect(published).toHaveLength(2);
    await api.dispose();
    // A new page mints a token signed with the new key; the gateway learns the key and serves it.
    await navigate(page, '/projects/webshop/plugin-resources/acme-corp--cert-manager/issuers.cert-manager.io');
    await frameReady(page);
    const list = page.frameLocator('[data-plugin-frame] iframe');
    await expect(list.getByText('ca-issuer').first()).toBeVisible({ timeout: 15_000 });
    await navigate(page, '/clusters');
    await expect(page.getByRole('table')).toBeVisible();
    await expectSameDocument(page);
    // A session that starts now carries the new key, and the console accepts it at once.
    const other = await browser.newPage();
    await signIn(other, 'bob@acme-corp.com', CERTS);
    await frameReady(other);
    await other.close();
  });

  test('a plugin runtime that hangs: the page says it did not load, and opens again once it answers', async ({ page }) => {
    test.setTimeout(90_000);
    await certificatesWhileRuntimeIs(page, 'hang');
    await expect(frame(page).getByRole('alert')).toContainText('did not load');
    // plugin-proxy gives up on the runtime after its 10 s and says so in the frame.
    const inFrame = page.frameLocator('[data-plugin-frame] iframe').locator('body');
    await expect(inFrame).toContainText('did not answer within 10 s', { timeout: 20_000 });
    await setFault(RUNTIME, { fault: 'none' });
    // The frame may load by itself once the runtime answers (its page request was still open
    // on a loaded machine), taking the error and its link away: then there is nothing to click.
    const tryAgain = frame(page).getByRole('link', { name: 'Try again' });
    if (await tryAgain.isVisible()) await tryAgain.click({ timeout: 5_000 }).catch(() => {});
    await expect(frame(page)).toHaveAttribute('data-state', 'ready', { timeout: 20_000 });
    await expectSameDocument(page);
  });

  test('a plugin runtime that answers garbage: the page says it did not load, and recovers by itself', async ({ page }) => {
    test.setTimeout(90_000);
    await certificatesWhileRuntimeIs(page, 'garbage');
    await setFault(RUNTIME, { fault: 'none' });
    // Opened again by itself (every 10 s while it does not load).
    await expect(frame(page)).toHaveAttribute('data-state', 'ready', { timeout: 30_000 });
    await expectSameDocument(page);
  });

  test('a plugin runtime that is down: the frame says it cannot be reached, and the page recovers by itself', async ({ page }) => {
    test.setTimeout(90_000);
    await certificatesWhileRuntimeIs(page, 'down');
    await expect(frame(page).getByRole('alert')).toContainText('did not load');
    // plugin-proxy's own answer in the frame names what is wrong (the runtime, not the page).
    const inFrame = page.frameLocator('[data-plugin-frame] iframe').locator('body');
    await expect(inFrame).toContainText('cannot be reached');
    await setFault(RUNTIME, { fault: 'none' });
    await expect(frame(page)).toHaveAttribute('data-state', 'ready', { timeout: 30_000 });
    await expectSameDocument(page);
  });

  test('OpenFGA failing: access cannot be checked, pages say so and recover by themselves', async ({ page }) => {
    test.setTimeout(90_000);
    await aliceOnHome(page);
    await setFault('openfga', { fault: 'status', status: 500 });
    await navigate(page, '/clusters');
    await expect(unavailable(page)).toContainText('authorization service (OpenFGA)');
    await navigate(page, DEMO);
    await expect(unavailable(page)).toContainText('OpenFGA');
    const gateway = await probe(`${GATEWAY}/readyz?verbose`);
    expect(gateway.body).toMatch(/\[-\]openfga/);
    await setFault('openfga', { fault: 'none' });
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible({ timeout: 15_000 });
    await navigate(page, '/clusters');
    await expect(page.getByRole('table')).toBeVisible({ timeout: 15_000 });
    await expectSameDocument(page);
  });
});
