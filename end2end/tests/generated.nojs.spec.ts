// With JavaScript off, the generated list still filters, sorts and pages:
// its controls are a GET form and links, answered by the server.
import { test, expect } from '@playwright/test';

const GRANTS = '/projects/webshop/plugin-resources/acme-corp--camunda/grants.plugins.camunda.io';

test('the generated list filters by label and sorts without JavaScript', async ({ page }) => {
  await page.goto(GRANTS);
  await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
  await expect(page.getByRole('table', { name: 'Grant list' })).toBeVisible();
  await page.getByLabel('Label selector').fill('plugins.camunda.io/cluster=payments');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/labels=plugins.camunda.io%2Fcluster%3Dpayments/);
  const names = await page.locator('main tbody tr td:first-child').allInnerTexts();
  expect(names.length).toBeGreaterThan(0);
  expect(names.every((n) => n.startsWith('payments-'))).toBe(true);
  await page.locator('main thead a').first().click();
  await expect(page.locator('main thead th[aria-sort="descending"]')).toContainText('Name');
  const sorted = await page.locator('main tbody tr td:first-child').allInnerTexts();
  expect(sorted).toEqual([...names].sort().reverse());
});

test('the edit form and its YAML tab render without JavaScript', async ({ page }) => {
  const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';
  await page.goto(DEMO);
  await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
  await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
  await page.goto(`${DEMO}/hello-world?ns=default&edit=1`);
  await expect(page.locator('[name="spec.message"]')).toBeVisible();
  // The tabs are links: the server renders the YAML tab, its text in the textarea.
  await page.getByRole('tab', { name: 'YAML' }).click();
  await expect(page).toHaveURL(/yaml=1/);
  const yaml = page.getByRole('textbox', { name: 'YAML', exact: true });
  await expect(yaml).toHaveValue(/message: Hello, world!/);
  expect(await yaml.inputValue()).not.toMatch(/managedFields|resourceVersion/);
  await expect(page.locator('[name="spec.message"]')).toBeHidden();
});

test("the detail page's YAML opens from the URL without JavaScript", async ({ page }) => {
  const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';
  await page.goto(DEMO);
  await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
  await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
  await page.goto(`${DEMO}/hello-world?ns=default`);
  const code = page.getByRole('region', { name: 'YAML' }).locator('pre');
  await expect(code).toBeHidden();
  await page.goto(`${DEMO}/hello-world?ns=default&yaml=1`);
  await expect(code).toBeVisible();
  await expect(code).toContainText('message: Hello, world!');
});
