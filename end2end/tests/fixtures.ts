import { expect, type Page } from '@playwright/test';

/** Waits until the console has hydrated (the app marks <body data-hydrated>). */
export async function hydrated(page: Page) {
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
}

/** Signs in through the sign-in page as a seed user and lands on `next`. */
export async function signIn(page: Page, email: string, next = '/') {
  await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
  await hydrated(page);
  await page.getByRole('button', { name: `Sign in as ${email}` }).click();
  await expect(page.getByRole('navigation', { name: 'Sidebar' })).toBeVisible();
}

/** The organization/project switcher's button. */
export const contextMenu = (page: Page) => page.locator('summary').filter({ hasText: 'Organization and project:' });

/** The user menu's button for the user with this display name. */
export const userMenu = (page: Page, name: string) => page.locator('summary').filter({ hasText: `User menu: ${name}` });
