import { expect, type BrowserContext, type Frame, type Locator, type Page } from '@playwright/test';

/**
 * Clicks a link in a plugin's frame whose click makes the console open another view, and so
 * replace that frame. The click is not awaited: under load, Playwright now and then never
 * finishes a click whose frame goes away, even with noWaitAfter (it hung in "performing click
 * action" after the console had already shown the next view). The caller waits for what the
 * click does instead (the console's URL); the click's own outcome, a detached frame at worst,
 * is dropped.
 */
export function clickReplacingItsFrame(link: Locator) {
  link.click({ noWaitAfter: true }).catch(() => {});
}

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

/** Alice signs out in a new tab of `context`, whose tabs share her session cookie as a
 *  browser's do; returns that tab, on the sign-in page. */
export async function signOutInNewTab(context: BrowserContext): Promise<Page> {
  const other = await context.newPage();
  await other.goto('/');
  await hydrated(other);
  await userMenu(other, 'Alice').click();
  await other.getByRole('button', { name: 'Sign out' }).click();
  await expect(other.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
  return other;
}

/** The frame of a plugin page, by its file name. */
export function pluginFrame(page: Page, file: string): Frame {
  const frame = page.frames().find((f) => f.url().includes(`/console/${file}`));
  if (!frame) throw new Error(`no frame for ${file}: ${page.frames().map((f) => f.url()).join(', ')}`);
  return frame;
}

/** Waits until the plugin frame on the page has said plugin:ready; with `file`, the frame of
 *  that page. After a navigation between plugin views, the frame host can still say `ready`
 *  for the page before while the new frame is about:blank: `file` waits for the new one. */
export async function frameReady(page: Page, file?: string) {
  // The host says `loading` from the moment it creates a frame, before the frame has a URL.
  if (file) await expect.poll(() => page.frames().some((f) => f.url().includes(`/console/${file}`))).toBe(true);
  await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'ready');
}

/** Records every message each frame receives, with the sender's origin. */
export async function recordMessages(page: Page) {
  await page.addInitScript(() => {
    const w = window as unknown as { __messages: unknown[] };
    w.__messages = [];
    window.addEventListener('message', (e) => {
      const d = e.data && typeof e.data === 'object' ? e.data : {};
      w.__messages.push({ ...d, token: d.token ? '<token>' : d.token, origin: e.origin, at: Date.now() });
    }, true);
  });
}

export type Message = { type: string; origin: string; at: number; [k: string]: unknown };
export const messages = (frame: Frame | Page) => frame.evaluate(() => (window as unknown as { __messages: Message[] }).__messages);
