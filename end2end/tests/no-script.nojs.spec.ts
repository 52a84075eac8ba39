// With JavaScript off, the console still reads and works through plain forms.
import { test, expect } from '@playwright/test';
import { userMenu } from './fixtures';

test('sign-in, theme and sign-out work as plain form posts', async ({ page }) => {
  await page.goto('/clusters');
  await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
  // Back where the user wanted to go.
  await expect(page).toHaveURL(/\/clusters$/);
  await expect(page.getByRole('cell', { name: 'prod-eu' })).toBeVisible();

  await page.getByRole('button', { name: 'Switch to dark theme' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(page).toHaveURL(/\/clusters$/);

  await userMenu(page, 'Alice').click();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
});

test('a bookmarked page with several query parameters comes back whole after signing in', async ({ page }) => {
  await page.goto('/audit?user=alice&decision=denied');
  await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
  await expect(page).toHaveURL(/\/audit\?user=alice&decision=denied$/);
  await expect(page.getByRole('heading', { name: 'Audit' })).toBeVisible();
  await expect(page.getByLabel('Decision')).toHaveValue('denied');
});
