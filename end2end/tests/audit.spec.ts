// The audit view (`/audit`): every plugin-path call with the check that refused it, within
// moments of the call on a live tail (two seconds on a loaded CI machine); bob sees his own calls only, alice (cluster-admin, who may
// `audit` plugininstallations) everyone's; the filters live in the URL and survive a reload;
// the export downloads what they select as JSON lines.
import { test, expect, type Page } from '@playwright/test';
import fs from 'node:fs';
import { hydrated, signIn } from './fixtures';
import { GATEWAY, PROD, pluginToken, send } from './origins';

const CERT_MANAGER = 'acme-corp--cert-manager';

/** A plugin page's call through the gateway, as `user`'s cert-manager page makes it. */
async function pluginCall(email: string, path: string, token = pluginToken(email, CERT_MANAGER)): Promise<number> {
  const answer = await send(`${GATEWAY}/clusters/${PROD}${path}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return answer.status;
}

const SECRETS = '/api/v1/namespaces/default/secrets';
const CERTIFICATES = '/apis/cert-manager.io/v1/namespaces/default/certificates';

const rows = (page: Page) => page.getByRole('table', { name: 'Plugin calls' }).locator('tbody tr[data-audit-id]');

test.describe('the audit view', () => {
  test('a call refused by allowedResources shows on the live tail within two seconds, naming the check', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', '/audit?live=1');
    await hydrated(page);
    await expect(page.locator('[data-audit-scope="everyone"]')).toBeVisible();
    // The tail is running once the page has its first answer.
    await expect(page.getByRole('table', { name: 'Plugin calls' })).toBeVisible();
    // A first call fills the gateway's caches for this token and installation and shows the
    // tail is live; the second measures the tail alone, as a user watching it sees every call
    // after the first. (Timed on a first call, the figure also held the stack's cold start when
    // the test ran first beside the other suites' start-up: 1,092 ms once.)
    const token = pluginToken('alice@acme-corp.com', CERT_MANAGER);
    expect(await pluginCall('alice@acme-corp.com', CERTIFICATES, token)).toBe(200);
    await expect(rows(page).filter({ hasText: 'certificates' }).first()).toBeVisible();
    const before = await rows(page).count();
    // When the row appeared, as the page itself saw it (a MutationObserver's wall clock): the
    // figure is the tail's, not how often Playwright's expect polls (every 500 ms at worst).
    // Rows of earlier refused calls may be there already: the new one is the one past them.
    const refusedRows = rows(page).filter({ hasText: 'refused by allowed-resources' }).filter({ hasText: 'secrets' });
    const refusedBefore = await refusedRows.count();
    await page.evaluate((baseline) => {
      const w = window as unknown as { __refusedShownAt?: number };
      const count = () => [...document.querySelectorAll('tbody tr[data-audit-id]')]
        .filter((row) => row.textContent!.includes('refused by allowed-resources') && row.textContent!.includes('secrets')).length;
      new MutationObserver(() => {
        if (w.__refusedShownAt === undefined && count() > baseline) w.__refusedShownAt = Date.now();
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    }, refusedBefore);
    // The rows shown now are tagged with the call each shows: a tail answer must add its rows
    // above them, neither drawing every row again nor moving each call into another row.
    const tagged = await page.evaluate(() => {
      const shown = [...document.querySelectorAll('tbody tr[data-audit-id]')];
      for (const row of shown) (row as unknown as { __shows?: string }).__shows = row.getAttribute('data-audit-id')!;
      return shown.length;
    });
    expect(tagged).toBeGreaterThan(0);
    expect(await pluginCall('alice@acme-corp.com', SECRETS, token)).toBe(403);
    const called = Date.now();
    await expect.poll(() => refusedRows.count(), { timeout: 5_000 }).toBeGreaterThan(refusedBefore);
    const shownAt = await page.evaluate(() => (window as unknown as { __refusedShownAt?: number }).__refusedShownAt);
    expect(shownAt, 'the observer saw the row appear').toBeDefined();
    // Two seconds, not one: on CI's loaded 2-core machine (three lanes at once, Chromium taking
    // most of the CPU) the page's own measure went past one second (1,092 and 1,130 ms, see
    // scripts/test) with nothing wrong but the load. What this guards against still fails it:
    // the tail's long poll started again when the first call's row came, moments before this
    // call, so a tail that did not wake for the call would show its row only at that poll's
    // 5 s end, some 3–4.5 s after the call.
    expect(shownAt! - called, 'ms from the answer to the row on the tail').toBeLessThanOrEqual(2_000);
    const refused = refusedRows.first();
    await expect(refused).toContainText('alice');
    await expect(refused).toContainText('cert-manager');
    await expect(refused).toContainText('403');
    expect(await rows(page).count()).toBeGreaterThan(before);
    const kept = await page.evaluate(() => [...document.querySelectorAll('tbody tr[data-audit-id]')]
      .filter((row) => (row as unknown as { __shows?: string }).__shows === row.getAttribute('data-audit-id')).length);
    expect(kept, 'the rows shown before the call are the same elements, showing the same calls').toBe(tagged);
  });

  test('changing the filters of a live tail again and again never counts as other tabs', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', '/audit?live=1');
    await hydrated(page);
    await expect(page.getByRole('table', { name: 'Plugin calls' })).toBeVisible();
    // Each change ends the tail's waiting request (aborted, so the server frees its place among
    // alice's two) before the next starts: three in a row stay within her bound.
    for (const namespace of ['a', 'b', 'c', 'default']) {
      await page.getByLabel('Namespace', { exact: true }).fill(namespace);
      await page.getByRole('button', { name: 'Apply' }).click();
      await expect(page).toHaveURL(new RegExp(`namespace=${namespace}`));
      await expect(page.getByRole('table', { name: 'Plugin calls' })).toBeVisible();
    }
    const listed = rows(page).filter({ hasText: 'certificates' });
    const before = await listed.count();
    expect(await pluginCall('alice@acme-corp.com', CERTIFICATES)).toBe(200);
    await expect.poll(() => listed.count(), { timeout: 4_000 }).toBeGreaterThan(before);
    await expect(page.getByText('open in 2 other tabs')).toHaveCount(0);
  });

  test('bob sees his own calls only; alice sees his too', async ({ page, browser }) => {
    expect(await pluginCall('bob@acme-corp.com', CERTIFICATES)).toBe(200);
    expect(await pluginCall('alice@acme-corp.com', CERTIFICATES)).toBe(200);
    await signIn(page, 'bob@acme-corp.com', '/audit');
    await expect(page.locator('[data-audit-scope="own"]')).toBeVisible();
    await expect(rows(page).first()).toBeVisible();
    const users = await rows(page).locator('td:nth-child(2)').allInnerTexts();
    expect(new Set(users)).toEqual(new Set(['bob']));
    // A filter cannot widen it.
    await page.goto('/audit?user=alice');
    await expect(page.getByText('No plugin calls match.')).toBeVisible();

    const admin = await browser.newPage();
    await signIn(admin, 'alice@acme-corp.com', '/audit?user=bob');
    await expect(rows(admin).first()).toContainText('bob');
    await admin.close();
  });

  test('filters live in the URL and survive a reload; the export holds what they select', async ({ page }) => {
    expect(await pluginCall('alice@acme-corp.com', SECRETS)).toBe(403);
    await signIn(page, 'alice@acme-corp.com', '/audit');
    await hydrated(page);
    const form = page.getByRole('form', { name: 'Filter the audit record' });
    await form.getByLabel('User').fill('alice');
    await form.getByLabel('Decision').selectOption('denied');
    await form.getByLabel('Resource').fill('secrets');
    await form.getByRole('button', { name: 'Apply' }).click();
    await expect(page).toHaveURL(/user=alice/);
    await expect(page).toHaveURL(/decision=denied/);
    // The form's fields only: the Apply button has no name, so no `&=` for it.
    expect(page.url()).not.toContain('&=');
    expect([...new URL(page.url()).searchParams.keys()]).not.toContain('');
    // The URL changes at once; the rows shown before stay until the filtered answer replaces
    // them (a transition), so wait for the filtered rows rather than read the old ones.
    await expect(async () => {
      const decisions = await rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-decision')));
      expect(decisions.length).toBeGreaterThan(0);
      for (const decision of decisions) expect(decision).toMatch(/^denied:/);
    }).toPass({ timeout: 10_000 });
    await page.reload();
    await expect(form.getByLabel('User')).toHaveValue('alice');
    await expect(form.getByLabel('Decision')).toHaveValue('denied');
    await expect(form.getByLabel('Resource')).toHaveValue('secrets');
    const shown = await rows(page).count();
    expect(shown).toBeGreaterThan(0);

    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Export as JSON lines' }).click();
    const file = await (await download).path();
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThanOrEqual(shown);
    for (const line of lines) {
      expect(line.user).toBe('alice');
      expect(line.resource).toBe('secrets');
      expect(line.decision).toMatch(/^denied:/);
    }
  });

  test('Back and Forward keep the decision shown as the record is filtered', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', '/audit');
    await hydrated(page);
    const form = page.getByRole('form', { name: 'Filter the audit record' });
    const decision = form.getByLabel('Decision');
    await decision.selectOption('allowed');
    await form.getByRole('button', { name: 'Apply' }).click();
    await expect(page).toHaveURL(/[?&]decision=allowed/);
    await page.goBack();
    await expect(page).toHaveURL(/\/audit$/);
    await expect(decision).toHaveValue('');
    await page.goForward();
    await expect(page).toHaveURL(/[?&]decision=allowed/);
    await expect(decision).toHaveValue('allowed');
    await form.getByLabel('User').fill('alice');
    await form.getByRole('button', { name: 'Apply' }).click();
    await expect(page).toHaveURL(/[?&]user=alice/);
    expect(new URL(page.url()).searchParams.get('decision')).toBe('allowed');
  });

  test('the export is refused to another site', async ({ request }) => {
    const answer = await request.get('/audit/export', { headers: { 'Sec-Fetch-Site': 'cross-site' } });
    expect(answer.status()).toBe(403);
  });
});
