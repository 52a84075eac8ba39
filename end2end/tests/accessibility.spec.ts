// Automated accessibility audit (axe-core, WCAG 2.1 A/AA rules) of the shell's
// pages in both themes. It cannot prove a page accessible, but it catches
// missing labels, landmarks, duplicate ids and contrast regressions.
import { test, expect, type Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { contextMenu, hydrated, signIn, userMenu } from './fixtures';

async function audit(page: Page) {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const summary = results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(summary).toEqual([]);
}

for (const colorScheme of ['light', 'dark'] as const) {
  test(`pages pass the axe audit in the ${colorScheme} theme`, async ({ page }) => {
    // Eleven full axe audits, each one to three seconds on a busy 2-core machine: the 30 s
    // default is the time of one page load, not of this walk.
    test.setTimeout(120_000);
    await page.emulateMedia({ colorScheme });
    await page.goto('/sign-in?error=unknown-user');
    await hydrated(page);
    await audit(page);

    await signIn(page, 'alice@acme-corp.com');
    const grants = '/projects/webshop/plugin-resources/acme-corp--camunda/grants.plugins.camunda.io';
    for (const path of [
      '/',
      '/clusters',
      '/plugins',
      '/projects/webshop',
      '/no/such/page',
      // A plugin page in its frame, and the generated list, detail and form.
      '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io',
      `${grants}?wide=1`,
      `${grants}/orders-backup-storage-kms-encrypt?ns=my-cluster-ns`,
      `${grants}/create`,
    ]) {
      await page.goto(path);
      await hydrated(page);
      await audit(page);
    }
    // Open menus too: their contents must be labelled and readable.
    await page.goto('/');
    await hydrated(page);
    await contextMenu(page).click();
    await userMenu(page, 'Alice').click();
    await audit(page);
  });
}
