// The first page, server-rendered: the same with and without JavaScript.
import { test, expect } from '@playwright/test';

test('the first page is rendered on the server and offers the seed users', async ({ page }) => {
  const response = await page.goto('/');
  expect(response?.status()).toBe(200);
  await expect(page).toHaveTitle('Sign in · Fundament');
  await expect(page.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Sign in as bob@acme-corp.com' })).toBeVisible();
});

test('signing in shows the shell with header, sidebar and overview', async ({ page }) => {
  await page.goto('/');
  await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
  const sidebar = page.getByRole('navigation', { name: 'Sidebar' });
  await expect(sidebar).toBeVisible();
  for (const name of ['Overview', 'Clusters', 'Plugins']) {
    await expect(sidebar.getByRole('link', { name })).toBeVisible();
  }
  await expect(page.getByRole('banner')).toBeVisible();
  await expect(page.getByRole('main')).toBeVisible();
  await expect(page.getByRole('heading', { level: 1, name: 'acme-corp' })).toBeVisible();
  await expect(page.getByText('Welcome, Alice.', { exact: false })).toBeVisible();
  await sidebar.getByRole('link', { name: 'Clusters' }).click();
  await expect(page).toHaveURL(/\/clusters$/);
  await expect(page.getByRole('cell', { name: 'prod-eu' })).toBeVisible();
  await expect(page.getByRole('cell', { name: 'restricted' })).toHaveCount(0);
  // Asked just now, through kube-api-proxy as alice: it answers with its version.
  await expect(page.getByRole('row').filter({ hasText: 'prod-eu' })).toContainText(/Reachable\s*v\d+\.\d+\.\d+/);
});

test('an unknown path answers 404 with a way back', async ({ page }) => {
  const response = await page.goto('/no/such/page');
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Not found' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Go to the overview' })).toHaveAttribute('href', '/');
});
