// plugin-sdk.css: both themes pass axe's WCAG 2.1 AA audit (contrast included) on a page using every class.
import AxeBuilder from '@axe-core/playwright';
import { test, expect } from './harness';

// No colour transition: computed colours are final at once.
test.beforeEach(({ page }) => page.emulateMedia({ reducedMotion: 'reduce' }));

for (const theme of ['light', 'dark'] as const) {
  test(`the component classes pass the axe audit in the ${theme} theme`, async ({ h, page }) => {
    await page.goto(h.servers.pluginOrigin + '/showcase.html');
    await page.evaluate((t) => (document.body.className = t), theme);
    const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    // Also with the hover and focus colours of the primary button.
    await page.getByRole('button', { name: 'Create' }).hover();
    await page.getByRole('button', { name: 'Create' }).focus();
    const again = await new AxeBuilder({ page }).withRules(['color-contrast']).analyze();
    expect(again.violations.map((v) => v.id)).toEqual([]);
  });
}

test('the theme class switches the colours; without a class the page is light', async ({ h, page }) => {
  await page.goto(h.servers.pluginOrigin + '/showcase.html');
  const colours = () => page.evaluate(() => {
    const b = getComputedStyle(document.body);
    return [b.backgroundColor, b.color, b.colorScheme, getComputedStyle(document.querySelector('.plugin-button')!).backgroundColor];
  });
  expect(await colours()).toEqual(['rgb(255, 255, 255)', 'rgb(17, 24, 39)', 'light', 'rgb(24, 69, 118)']);
  await page.evaluate(() => (document.body.className = 'dark'));
  expect(await colours()).toEqual(['rgb(31, 41, 55)', 'rgb(249, 250, 251)', 'dark', 'rgb(108, 155, 210)']);
  await page.evaluate(() => (document.body.className = ''));
  expect((await colours())[0]).toBe('rgb(255, 255, 255)');
});

test('buttons are at least 44px high (touch target) and show a focus ring', async ({ h, page }) => {
  await page.goto(h.servers.pluginOrigin + '/showcase.html');
  for (const name of ['Create', 'Cancel', 'Delete']) {
    const box = await page.getByRole('button', { name }).boundingBox();
    expect(box!.height).toBeGreaterThanOrEqual(44);
  }
  await page.keyboard.press('Tab'); // the link
  await page.keyboard.press('Tab'); // the name field
  await page.getByRole('button', { name: 'Create' }).focus();
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
  expect(outline).toBe('solid');
});
