// With JavaScript off, the audit view lists the plugin calls and filters them: its filters
// are a GET form answered by the server.
import { test, expect } from '@playwright/test';
import { GATEWAY, PROD, pluginToken, send } from './origins';

test('the audit view lists and filters plugin calls without JavaScript', async ({ page }) => {
  const answer = await send(`${GATEWAY}/clusters/${PROD}/api/v1/namespaces/default/secrets`, {
    headers: { Authorization: `Bearer ${pluginToken('alice@acme-corp.com', 'acme-corp--cert-manager')}` },
  });
  expect(answer.status).toBe(403);
  await page.goto('/audit');
  await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
  const table = page.getByRole('table', { name: 'Plugin calls' });
  await expect(table).toBeVisible();
  // This test's own call only (cert-manager reading secrets): other suites' calls, the hostile
  // plugin's and cert-manager's refused by origin among them, are refused meanwhile.
  await page.getByLabel('Decision').selectOption('denied');
  await page.getByLabel('Installation').fill('acme-corp--cert-manager');
  await page.getByLabel('Resource').fill('secrets');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/decision=denied/);
  await expect(table.locator('tbody tr[data-audit-id]').first()).toContainText('refused by allowed-resources');
  // The answered page shows the filters it answers, so the next Apply keeps them.
  await expect(page.getByLabel('Installation')).toHaveValue('acme-corp--cert-manager');
  await page.getByLabel('Status').fill('403');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/status=403/);
  await expect(page).toHaveURL(/installation=acme-corp--cert-manager/);
  await expect(page.getByLabel('Status')).toHaveValue('403');
  await expect(page.getByLabel('Decision')).toHaveValue('denied');
  await expect(table.locator('tbody tr[data-audit-id]').first()).toContainText('refused by allowed-resources');
});
