// PluginToken failures and recovery, through authn's mock-mode fault switch
// (docs/dev-switches.md). Runs on the fault suite's stack of its own
// (end2end/playwright.faults.config.ts): while the switch is on, no page there can mint.
import { test, expect, request as playwrightRequest } from '@playwright/test';
import { signIn } from './fixtures';
import { AUTHN } from './origins';

const SWITCH = `${AUTHN}/dev/faults/mint-plugin-token`;
const CERTS = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';

async function setFault(fail: boolean) {
  const api = await playwrightRequest.newContext();
  const response = await api.put(SWITCH, { data: { fail } });
  expect(response.status()).toBe(204);
  await api.dispose();
}

test.describe('plugin tokens', () => {
  test.afterEach(async () => setFault(false));

  test('a mint failure shows the auth-failed state and recovers without a reload', async ({ page }) => {
    test.setTimeout(90_000);
    await signIn(page, 'alice@acme-corp.com', '/projects/webshop');
    await setFault(true);
    // When each mint's request started, as the browser's network stack stamped it (wall-clock
    // ms), not when Playwright's events reach this process.
    const mints: number[] = [];
    page.on('requestfinished', (r) => {
      if (r.url().endsWith('/api/plugin-token')) mints.push(r.timing().startTime);
    });
    await page.getByRole('navigation', { name: 'Sidebar' }).getByRole('link', { name: 'Certificates' }).click();
    const frame = page.locator('[data-plugin-frame]');
    // The page loads and gets its init without a token, while the console retries (2, 4, 8 s).
    await expect(frame).toHaveAttribute('data-state', 'ready');
    await expect(frame).toHaveAttribute('data-state', 'auth-failed', { timeout: 30_000 });
    // The first mint and its three retries; once told, the page may ask again at once.
    await expect.poll(() => mints.length).toBeGreaterThanOrEqual(4);
    // Each retry waits twice as long as the one before. Counted from one request's start to the
    // next, a gap is the backoff plus the failed answer's time (a few ms; 140 ms once on a busy
    // run): never shorter than the backoff (50 ms for the wall clock's rounding), at most 1.5 s
    // longer, so a constant or slower-growing backoff still fails. (Playwright's responseEnd is
    // no anchor: it read 272 ms for an answer its own trace timed at 140 ms.)
    mints.sort((a, b) => a - b);
    const gaps = mints.slice(1, 4).map((start, i) => Math.round(start - mints[i]));
    const backoff = [2_000, 4_000, 8_000];
    gaps.forEach((gap, i) => {
      expect(gap, `retry ${i + 1} after ${gaps}`).toBeGreaterThanOrEqual(backoff[i] - 50);
      expect(gap, `retry ${i + 1} after ${gaps}`).toBeLessThan(backoff[i] + 1_500);
    });
    await expect(page.getByRole('alert')).toContainText('Cert Manager cannot reach the cluster');
    await expect(page.getByRole('alert')).toContainText('could not get a plugin token');
    // The page was told (the SDK rejects its calls with the reason).
    const body = page.frameLocator('[data-plugin-frame] iframe').locator('body');
    await expect(body).toContainText(/mint_failed|auth failed/i);

    // Turned off: the console's next attempt succeeds, the page gets a token and draws its rows.
    await setFault(false);
    await expect(frame).toHaveAttribute('data-state', 'ready', { timeout: 20_000 });
    await expect(page.getByRole('alert')).toHaveCount(0);
    const list = page.frameLocator('[data-plugin-frame] iframe');
    await expect(list.getByRole('link', { name: 'web-tls-cert' })).toBeVisible({ timeout: 15_000 });
  });

  test('"Try again" mints at once', async ({ page }) => {
    test.setTimeout(60_000);
    await setFault(true);
    await signIn(page, 'alice@acme-corp.com', CERTS);
    const frame = page.locator('[data-plugin-frame]');
    await expect(frame).toHaveAttribute('data-state', 'auth-failed', { timeout: 30_000 });
    // The click sends a mint at once rather than waiting for the console's next try (every
    // 10 s once it gave up). Clicked while minting still fails: with the switch off first,
    // that next try or the page's own next call could recover the frame before the click,
    // and the button would be gone (it was, once, on a busy machine). The wait holds the click
    // itself, which a loaded machine can make slow: 5 s. The console's own next try comes 10 s
    // after it gave up, which the check above saw within a second or so, so that try falls
    // past this wait and a button that did not mint still fails it.
    const minted = page.waitForRequest((r) => r.url().endsWith('/api/plugin-token'), { timeout: 5_000 });
    await page.getByRole('button', { name: 'Try again' }).click();
    await minted;
    await expect(frame).toHaveAttribute('data-state', 'auth-failed');
    // Minting works again: the next try, or a click on the button, brings the page back.
    await setFault(false);
    const again = page.getByRole('button', { name: 'Try again' });
    await expect(async () => {
      if (await again.isVisible()) await again.click({ timeout: 1_000 });
      await expect(frame).toHaveAttribute('data-state', 'ready', { timeout: 1_000 });
    }).toPass({ timeout: 15_000 });
  });
});
