// With JavaScript off, the generated list still filters, sorts and pages:
// its controls are a GET form and links, answered by the server.
import { test, expect, type Page } from '@playwright/test';
import { kubectl } from './kubectl';

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
  const sort = new URL(page.url()).searchParams.get('sort');
  expect(sort).toBeTruthy();
  // The server's page shows the filters it answered, and the form sends them on with the sort.
  await expect(page.getByLabel('Label selector')).toHaveValue('plugins.camunda.io/cluster=payments');
  await page.getByLabel('Search').fill('payments');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/[?&]q=payments/);
  await expect(page).toHaveURL(/labels=plugins.camunda.io%2Fcluster%3Dpayments/);
  expect(new URL(page.url()).searchParams.get('sort')).toBe(sort);
  await expect(page.getByLabel('Search')).toHaveValue('payments');
  await expect(page.locator('main thead th[aria-sort="descending"]')).toContainText('Name');
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

// Without JavaScript the generated form posts to its own page: a save goes on to the object's
// page, a refusal shows the form again with what was typed and the messages at their fields.
// Delete opens the page's confirmation (`?delete=1`), whose form posts the delete.
const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';

async function signInAt(page: Page, path: string) {
  await page.goto(path);
  await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
  await expect(page).toHaveURL(path);
}

const demoItem = (name: string) =>
  kubectl(['get', 'demoitems.demo.fundament.io', name, '-n', 'default', '--ignore-not-found', '-o', 'jsonpath={.spec.message}']);

test('a DemoItem is created, edited and deleted without JavaScript', async ({ page }) => {
  const name = `nojs-${Date.now()}`;
  try {
    await signInAt(page, `${DEMO}/create`);
    await page.locator('[name="metadata.name"]').fill(name);
    await page.locator('[name="metadata.namespace"]').selectOption('default');
    await page.locator('[name="spec.message"]').fill('Created without JavaScript');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
    await expect(page.getByRole('region', { name: 'Spec' })).toContainText('Created without JavaScript');
    expect(demoItem(name)).toBe('Created without JavaScript');

    // Edit: the form starts with the object's values, and Save goes back to its page.
    await page.getByRole('link', { name: 'Edit' }).click();
    await expect(page).toHaveURL(/edit=1/);
    await expect(page.locator('[name="metadata.name"]')).toHaveValue(name);
    await expect(page.locator('[name="spec.message"]')).toHaveValue('Created without JavaScript');
    await page.locator('[name="spec.message"]').fill('Edited without JavaScript');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
    await expect(page.getByRole('region', { name: 'Spec' })).toContainText('Edited without JavaScript');
    expect(demoItem(name)).toBe('Edited without JavaScript');

    // Delete asks first, on a page of its own; Cancel goes back and deletes nothing.
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default&delete=1`);
    const dialog = page.getByRole('alertdialog');
    await expect(dialog).toContainText(`Delete DemoItem ${name}?`);
    await dialog.getByRole('link', { name: 'Cancel' }).click();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
    expect(demoItem(name)).toBe('Edited without JavaScript');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.getByRole('button', { name: `Delete ${name}` }).click();
    await expect(page).toHaveURL(DEMO);
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    await expect(page.getByRole('link', { name, exact: true })).toHaveCount(0);
    expect(demoItem(name)).toBe('');
  } finally {
    kubectl(['delete', 'demoitems.demo.fundament.io', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
  }
});

test('a refused create shows the error at its field and keeps what was typed; Check saves nothing', async ({ page }) => {
  const name = `nojs-checked-${Date.now()}`;
  await signInAt(page, `${DEMO}/create`);
  const input = (path: string) => page.locator(`[name="${path}"]`);
  await input('metadata.name').fill('Not A Valid Name');
  await input('metadata.namespace').selectOption('staging');
  await input('spec.message').fill('Typed before the error');
  await input('metadata.labels').fill('app=nojs');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  // The same page, answered by the post: the message at the field, every value as typed.
  await expect(page).toHaveURL(`${DEMO}/create`);
  await expect(page.locator('[data-path="metadata.name"]').getByRole('alert')).toContainText('lowercase RFC 1123 subdomain');
  await expect(input('metadata.name')).toHaveValue('Not A Valid Name');
  await expect(input('metadata.namespace')).toHaveValue('staging');
  await expect(input('spec.message')).toHaveValue('Typed before the error');
  await expect(input('metadata.labels')).toHaveValue('app=nojs');
  // Corrected and checked: the dry run accepts it, and nothing is created.
  await input('metadata.name').fill(name);
  await page.getByRole('button', { name: 'Check' }).click();
  await expect(page.getByText('The API server accepts this (dry run).')).toBeVisible();
  await expect(page.locator('[data-path="metadata.name"]').getByRole('alert')).toHaveCount(0);
  await expect(input('spec.message')).toHaveValue('Typed before the error');
  expect(kubectl(['get', 'demoitems.demo.fundament.io', name, '-n', 'staging', '--ignore-not-found', '-o', 'name'])).toBe('');
});

test('a form post from another site, or without a sign of a console page, is refused', async ({ page }) => {
  const name = `nojs-forged-${Date.now()}`;
  await signInAt(page, DEMO);
  const origin = new URL(page.url()).origin;
  const form = { 'metadata.name': name, 'metadata.namespace': 'default', 'spec.message': 'forged' };
  const post = (path: string, data: Record<string, string>, headers: Record<string, string>) =>
    page.request.post(path, { form: data, headers, maxRedirects: 0 });
  try {
    for (const headers of [{ Origin: 'http://evil.example' }, { Origin: 'null' }, {}]) {
      const answer = await post(`${DEMO}/create`, form, headers);
      expect(answer.status(), JSON.stringify(headers)).toBe(403);
      const deleted = await post(`${DEMO}/hello-world?ns=default&delete=1`, { _action: 'delete' }, headers);
      expect(deleted.status(), JSON.stringify(headers)).toBe(403);
    }
    expect(demoItem(name)).toBe('');
    expect(demoItem('hello-world')).toBe('Hello, world!');
    // The same post from the console's own page is taken.
    const taken = await post(`${DEMO}/create`, form, { Origin: origin });
    expect(taken.status()).toBe(303);
    expect(taken.headers()['location']).toBe(`${DEMO}/${name}?ns=default`);
    expect(demoItem(name)).toBe('forged');
  } finally {
    kubectl(['delete', 'demoitems.demo.fundament.io', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
  }
});

test('an edit of an object changed since it was loaded saves nothing and keeps the edit', async ({ page }) => {
  const name = `nojs-conflict-${Date.now()}`;
  const item = { apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name, namespace: 'default' }, spec: { message: 'Base' } };
  kubectl(['apply', '-f', '-'], JSON.stringify(item));
  try {
    await signInAt(page, `${DEMO}/${name}?ns=default&edit=1`);
    const message = page.locator('[name="spec.message"]');
    await expect(message).toHaveValue('Base');
    await message.fill('Mine');
    kubectl(['patch', 'demoitem', name, '-n', 'default', '--type', 'merge', '-p', '{"spec":{"message":"Theirs"}}']);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(page.getByRole('alert').filter({ hasText: 'Changed by someone else' })).toBeVisible();
    await expect(message).toHaveValue('Mine');
    expect(demoItem(name)).toBe('Theirs');
    await page.getByRole('link', { name: 'Reload the form' }).click();
    await expect(message).toHaveValue('Theirs');
  } finally {
    kubectl(['delete', 'demoitems.demo.fundament.io', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
  }
});
