// Automated accessibility audit (axe-core, WCAG 2.1 A/AA rules) of the shell's
// pages in both themes. It cannot prove a page accessible, but it catches
// missing labels, landmarks, duplicate ids and contrast regressions.
//
// One test per page: one page load, then one audit in each theme (the themes follow
// `prefers-color-scheme`, switched in place), so each test has the default timeout to itself
// (a walk of eleven audits in one test timed out on a fresh machine's first run, where every
// first page load is slower). A load per theme cost a sign-in and a page load more per page,
// on CPU every end-to-end lane shares.
import { test, expect, type Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { contextMenu, hydrated, signIn, userMenu } from './fixtures';

/** Audits the page as it is now in the light theme, then in the dark one. */
async function auditBothThemes(page: Page) {
  const violations: string[] = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await expect.poll(() => page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches))
      .toBe(colorScheme === 'dark');
    const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    violations.push(...results.violations.map((v) => `${colorScheme}: ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`));
  }
  expect(violations).toEqual([]);
}

const grants = '/projects/webshop/plugin-resources/acme-corp--camunda/grants.plugins.camunda.io';
const signedInPages: [string, string][] = [
  ['the overview', '/'],
  ['the clusters', '/clusters'],
  ['the plugins', '/plugins'],
  ['a project', '/projects/webshop'],
  ['the not-found page', '/no/such/page'],
  // A plugin page in its frame, and the generated list, detail and form.
  ['a plugin page', '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io'],
  ['the generated list', `${grants}?wide=1`],
  ['the generated detail', `${grants}/orders-backup-storage-kms-encrypt?ns=my-cluster-ns`],
  ['the generated form', `${grants}/create`],
];

test.describe('axe audit, light and dark theme', () => {
  test('the sign-in page with an error', async ({ page }) => {
    await page.goto('/sign-in?error=unknown-user');
    await hydrated(page);
    await auditBothThemes(page);
  });

  for (const [name, path] of signedInPages) {
    test(name, async ({ page }) => {
      await signIn(page, 'alice@acme-corp.com');
      await page.goto(path);
      await hydrated(page);
      await auditBothThemes(page);
    });
  }

  // Open menus too: their contents must be labelled and readable.
  test('the open context and user menus', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com');
    await page.goto('/');
    await hydrated(page);
    await contextMenu(page).click();
    await userMenu(page, 'Alice').click();
    await auditBothThemes(page);
  });
});
