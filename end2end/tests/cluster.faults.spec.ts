// The embedded cluster failing and coming back, through mock mode's development fault switch
// (docs/dev-switches.md): down, restarting, answering 429 and 500, slow. For each: what the page
// shows while it lasts, and that the same page recovers by itself, without a reload, when it
// ends. Runs in end2end/playwright.faults.config.ts, on a stack of its worker's own: a switch
// acts on the whole stack. A slow cluster also shows the loading ring, which turns only where
// the user has not asked for reduced motion.
import { test, expect } from '@playwright/test';
import { frameReady, hydrated, messages, pluginFrame, recordMessages, signIn } from './fixtures';
import { aliceOnHome, CERTS, clearFaults, DATABASES, DEMO, DEMO_SPEC, expectSameDocument, frame, markDocument, navigate, probe, setFault, unavailable } from './faults';
import { kubectl } from './kubectl';
import { GATEWAY } from './origins';

test.describe('the cluster fails and comes back', () => {
  test.describe.configure({ mode: 'serial' });
  test.afterEach(clearFaults);

  test('cluster down: a live list pauses, a new page says so, both come back without a reload', async ({ page, context }) => {
    test.setTimeout(90_000);
    // A plugin page stays open in a second tab throughout.
    const plugin = await context.newPage();
    await recordMessages(plugin);
    await signIn(plugin, 'alice@acme-corp.com', CERTS);
    await frameReady(plugin);
    await page.goto(DEMO);
    await hydrated(page);
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    await markDocument(page);

    await setFault('cluster', { fault: 'down' });
    await expect(page.locator('[data-live="paused"]')).toBeVisible({ timeout: 15_000 });
    await expect(page.locator('[data-live="paused"]')).toContainText('cannot be reached');
    // What was on screen stays.
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    // The gateway's readiness shows the cluster failing, and it stays ready.
    const gateway = await probe(`${GATEWAY}/readyz?verbose`);
    expect(gateway.status).toBe(200);
    expect(gateway.body).toMatch(/\[-\]cluster \S+ failed: /);

    // A page opened now says what is wrong and when it tries again.
    await navigate(page, DATABASES);
    await expect(unavailable(page)).toContainText('Not available right now');
    await expect(unavailable(page)).toContainText('cannot be reached');
    await expect(unavailable(page).locator('[data-retry-in]')).toBeVisible();

    await setFault('cluster', { fault: 'none' });
    await expect(page.getByRole('table', { name: 'Database list' })).toBeVisible({ timeout: 15_000 });
    await navigate(page, DEMO);
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    await expect(page.locator('[data-live="paused"]')).toHaveCount(0, { timeout: 15_000 });
    // Live again: a change made with kubectl shows up.
    const name = `after-outage-${Date.now()}`;
    const item = { apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name, namespace: 'default' }, spec: DEMO_SPEC };
    kubectl(['apply', '-f', '-'], JSON.stringify(item));
    await expect(page.getByRole('link', { name })).toBeVisible({ timeout: 15_000 });
    kubectl(['delete', 'demoitem', name, '-n', 'default', '--wait=false']);
    await expectSameDocument(page);
    // The plugin page was never told its authentication failed: a cluster outage is not one.
    await expect(frame(plugin)).toHaveAttribute('data-state', 'ready');
    const told = (await messages(pluginFrame(plugin, 'certificates-list.html'))).filter((m) => m.type === 'fundament:auth-failed');
    expect(told).toEqual([]);
    await plugin.close();
  });

  test('cluster restarting: the page waits and loads by itself when it is back', async ({ page }) => {
    test.setTimeout(60_000);
    await aliceOnHome(page);
    // 8 s: the navigation and the check of the notice must fall inside the restart however
    // slowly a loaded machine runs them (4 s was the window once).
    await setFault('cluster', { fault: 'restarting', seconds: 8 });
    const started = Date.now();
    await navigate(page, DEMO);
    await expect(unavailable(page)).toContainText('cannot be reached');
    // Nobody switches it back: the restart ends after 8 s and the next try succeeds, not before
    // (`started` is taken just after the switch: a second's slack).
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible({ timeout: 20_000 });
    expect(Date.now() - started).toBeGreaterThan(7_000);
    await expectSameDocument(page);
  });

  for (const status of [429, 500]) {
    test(`cluster answering ${status}: the page names it and loads once it answers again`, async ({ page }) => {
      test.setTimeout(60_000);
      await aliceOnHome(page);
      await setFault('cluster', { fault: 'status', status });
      await navigate(page, DEMO);
      await expect(unavailable(page)).toContainText(status === 429 ? 'HTTP 429' : 'HTTP 500');
      // A 429 names its wait (Retry-After: 1); the page keeps to it.
      if (status === 429) await expect(unavailable(page).locator('[data-retry-in]')).toHaveAttribute('data-retry-in', '1');
      await setFault('cluster', { fault: 'none' });
      await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible({ timeout: 15_000 });
      await expectSameDocument(page);
    });
  }

  test('the loading ring turns only where motion is welcome (prefers-reduced-motion)', async ({ page }) => {
    test.setTimeout(60_000);
    await aliceOnHome(page);
    // Every request to the cluster waits 4 s, so the page loads for 8 s at least (the
    // namespaces, then the list): time for the checks below on a loaded machine. Not longer:
    // one call of the console may take two of them in turn (a cold ServiceAccount token, then
    // the list), and must stay under its 10 s timeout.
    await setFault('cluster', { fault: 'slow', delay_ms: 4_000 });
    await navigate(page, DEMO);
    const ring = page.locator('main').getByRole('status').filter({ hasText: 'Loading' }).locator('[aria-hidden="true"]');
    await expect(ring).toBeVisible();
    const animation = () => ring.evaluate((e) => getComputedStyle(e).animationName);
    expect(await animation()).toBe('spin');
    await page.emulateMedia({ reducedMotion: 'reduce' });
    expect(await animation()).toBe('none');
    await expect(ring).toBeVisible();
    // The definition, the namespaces and the list, each 4 s late.
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible({ timeout: 30_000 });
  });

  test('a form button keeps the keyboard focus while its post is on its way', async ({ page }) => {
    test.setTimeout(60_000);
    await signIn(page, 'alice@acme-corp.com', `${DEMO}/hello-world?ns=default&edit=1`);
    await hydrated(page);
    const check = page.getByRole('button', { name: 'Check' });
    await check.focus();
    await setFault('cluster', { fault: 'slow', delay_ms: 3_000 });
    await page.keyboard.press('Enter');
    // Busy, and marked so, without losing the focus to the page's body (a disabled button does).
    await expect(check).toHaveAttribute('aria-disabled', 'true');
    await expect(check).toBeFocused();
    await expect(page.getByText('The API server accepts this (dry run).')).toBeVisible({ timeout: 20_000 });
    await expect(check).toHaveAttribute('aria-disabled', 'false');
    await expect(check).toBeFocused();
  });

  test('cluster slow: a short delay only shows loading; past the timeout the page says so and recovers', async ({ page }) => {
    test.setTimeout(90_000);
    await aliceOnHome(page);
    // 4 s a request, as in the test above: loading for long enough to be seen on a loaded
    // machine, each call of the console well under its 10 s timeout.
    await setFault('cluster', { fault: 'slow', delay_ms: 4_000 });
    await navigate(page, DEMO);
    await expect(page.locator('main').getByRole('status').filter({ hasText: 'Loading' })).toBeVisible();
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible({ timeout: 30_000 });
    await expect(unavailable(page)).toHaveCount(0);

    await setFault('cluster', { fault: 'slow', delay_ms: 15_000 });
    await navigate(page, DATABASES);
    await expect(unavailable(page)).toContainText('did not answer within 10 s', { timeout: 20_000 });
    await setFault('cluster', { fault: 'none' });
    await expect(page.getByRole('table', { name: 'Database list' })).toBeVisible({ timeout: 25_000 });
    await expectSameDocument(page);
  });
});
