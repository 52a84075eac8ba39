// The YAML tab of the generated edit form against `fundament dev`: the object as
// text without status and the server's fields, a form ↔ YAML round trip that keeps
// what the form does not show, the diff before saving, and a change made with
// kubectl during the edit shown as a conflict (never silently overwritten) — in the
// YAML tab and in the form.
import { test, expect, type Page } from '@playwright/test';
import { hydrated, signIn, signOutInNewTab } from './fixtures';
import { kubectl } from './kubectl';

const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';

/** The DemoItems this worker's tests made, deleted after each. */
const made: string[] = [];

/** A DemoItem of its own for one test, with an annotation the form has no input for. */
function demoItem(message: string): string {
  const name = `yaml-${Date.now()}-${Math.floor(Math.random() * 1000)}`;
  const item = {
    apiVersion: 'demo.fundament.io/v1',
    kind: 'DemoItem',
    metadata: { name, namespace: 'default', annotations: { 'e2e.fundament.io/keep': 'yes' } },
    spec: { message },
  };
  // create, not apply: no last-applied annotation repeating the others.
  kubectl(['create', '-f', '-'], JSON.stringify(item));
  made.push(name);
  return name;
}

const live = (name: string) => JSON.parse(kubectl(['get', 'demoitem', name, '-n', 'default', '-o', 'json']));

async function openYaml(page: Page, name: string) {
  await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default&edit=1`);
  await hydrated(page);
  await page.getByRole('tab', { name: 'YAML' }).click();
  await expect(page.getByRole('tab', { name: 'YAML' })).toHaveAttribute('aria-selected', 'true');
  return page.getByRole('textbox', { name: 'YAML', exact: true });
}

test.describe('YAML editing', () => {
  test.afterEach(() => {
    for (const name of made.splice(0)) {
      kubectl(['delete', 'demoitem', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
    }
  });

  test('edit a DemoItem as YAML: the round trip keeps unknown fields, the diff shows before saving', async ({ page }) => {
    const name = demoItem('Before');
    const yaml = await openYaml(page, name);
    await expect(yaml).toHaveValue(/message: Before/);
    await expect(yaml).toHaveValue(/e2e\.fundament\.io\/keep: 'yes'|e2e\.fundament\.io\/keep: "yes"|e2e\.fundament\.io\/keep: yes/);
    const text = await yaml.inputValue();
    expect(text).not.toMatch(/managedFields|resourceVersion|uid:|creationTimestamp|status:/);
    await expect(page.getByText(/Loaded at resource version \d+/)).toBeVisible();

    // YAML → form → YAML: the form shows the edit; the annotation it has no input for survives.
    await yaml.fill(text.replace('message: Before', 'message: From YAML'));
    await page.getByRole('tab', { name: 'Form' }).click();
    const message = page.locator('[name="spec.message"]');
    await expect(message).toHaveValue('From YAML');
    await message.fill('After');
    await page.getByRole('tab', { name: 'YAML' }).click();
    await expect(yaml).toHaveValue(/message: After/);
    await expect(yaml).toHaveValue(/e2e\.fundament\.io\/keep/);

    // The review: the change against the live object, each line marked in words too.
    await page.getByRole('button', { name: 'Review changes' }).click();
    const change = page.getByRole('figure', { name: 'Your change' });
    await expect(change.locator('del')).toContainText('message: Before');
    await expect(change.locator('ins')).toContainText('message: After');
    await expect(change.locator('del')).toContainText('Removed:');
    await expect(change).toContainText('1 line added, 1 line removed');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
    await expect(page.getByRole('region', { name: 'Spec' })).toContainText('After');
    const saved = live(name);
    expect(saved.spec.message).toBe('After');
    expect(saved.metadata.annotations['e2e.fundament.io/keep']).toBe('yes');
  });

  test('what the YAML tab adds is saved from the form too: an edit and a create', async ({ page }) => {
    const name = demoItem('Base');
    const yaml = await openYaml(page, name);
    await expect(yaml).toHaveValue(/e2e\.fundament\.io\/keep/);
    // An annotation the form has no input for, added in the YAML, then the form edited and saved.
    const text = await yaml.inputValue();
    const added = text.replace(/(\n( +)e2e\.fundament\.io\/keep:[^\n]*)/, '$1\n$2e2e.fundament.io/added: from-yaml');
    expect(added).not.toBe(text);
    await yaml.fill(added);
    await page.getByRole('tab', { name: 'Form' }).click();
    await page.locator('[name="spec.message"]').fill('From the form');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
    const saved = live(name);
    expect(saved.spec.message).toBe('From the form');
    expect(saved.metadata.annotations['e2e.fundament.io/added']).toBe('from-yaml');
    expect(saved.metadata.annotations['e2e.fundament.io/keep']).toBe('yes');

    // A create typed as YAML, finished in the form: its annotation is saved, and no empty labels.
    const created = `yaml-create-${Date.now()}`;
    made.push(created);
    await page.goto(`${DEMO}/create?yaml=1`);
    await hydrated(page);
    const createYaml = page.getByRole('textbox', { name: 'YAML', exact: true });
    await createYaml.fill(
      [
        'apiVersion: demo.fundament.io/v1',
        'kind: DemoItem',
        'metadata:',
        `  name: ${created}`,
        '  namespace: default',
        '  annotations:',
        '    e2e.fundament.io/added: at-create',
        'spec:',
        '  message: Typed as YAML',
        '',
      ].join('\n'),
    );
    await page.getByRole('tab', { name: 'Form' }).click();
    await expect(page.locator('[name="metadata.name"]')).toHaveValue(created);
    await page.locator('[name="spec.message"]').fill('Finished in the form');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expect(page).toHaveURL(`${DEMO}/${created}?ns=default`);
    const made_ = live(created);
    expect(made_.spec.message).toBe('Finished in the form');
    expect(made_.metadata.annotations['e2e.fundament.io/added']).toBe('at-create');
    expect(made_.metadata.labels).toBeUndefined();
  });

  test('a change from kubectl during the edit is a conflict with their change visible, then re-applied', async ({ page }) => {
    const name = demoItem('Base');
    const yaml = await openYaml(page, name);
    await expect(yaml).toHaveValue(/message: Base/);
    await yaml.fill((await yaml.inputValue()).replace('message: Base', 'message: Mine'));
    await page.getByRole('button', { name: 'Review changes' }).click();
    await expect(page.getByRole('figure', { name: 'Your change' }).locator('ins')).toContainText('message: Mine');

    // Between the review and the save, someone else changes the object.
    kubectl(['label', 'demoitem', name, '-n', 'default', 'changed-by=kubectl']);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Changed by someone else' });
    await expect(alert).toBeVisible();
    await expect(alert).toContainText('nothing was saved');
    await expect(alert.getByRole('figure', { name: 'Their change' }).locator('ins', { hasText: 'changed-by: kubectl' })).toHaveCount(1);
    await expect(page).toHaveURL(/edit=1/);
    expect(live(name).spec.message).toBe('Base');

    // Re-applied onto the live object: their label and my message; saved at the new version.
    await alert.getByRole('button', { name: 'Reload and re-apply my edit' }).click();
    await expect(alert).toHaveCount(0);
    await expect(yaml).toHaveValue(/changed-by: kubectl/);
    await expect(yaml).toHaveValue(/message: Mine/);
    await page.getByRole('button', { name: 'Review changes' }).click();
    const change = page.getByRole('figure', { name: 'Your change' });
    await expect(change.locator('ins')).toContainText('message: Mine');
    await expect(change.locator('del')).toContainText('message: Base');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
    const saved = live(name);
    expect(saved.spec.message).toBe('Mine');
    expect(saved.metadata.labels['changed-by']).toBe('kubectl');
  });

  test('the conflict can also be reloaded discarding the edit', async ({ page }) => {
    const name = demoItem('Base');
    const yaml = await openYaml(page, name);
    await yaml.fill((await yaml.inputValue()).replace('message: Base', 'message: Mine'));
    kubectl(['patch', 'demoitem', name, '-n', 'default', '--type', 'merge', '-p', '{"spec":{"message":"Theirs"}}']);
    await page.getByRole('button', { name: 'Review changes' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Changed by someone else' });
    const theirs = alert.getByRole('figure', { name: 'Their change' });
    await expect(theirs.locator('del')).toContainText('message: Base');
    await expect(theirs.locator('ins')).toContainText('message: Theirs');
    await alert.getByRole('button', { name: 'Reload, discarding my edit' }).click();
    await expect(yaml).toHaveValue(/message: Theirs/);
    expect(live(name).spec.message).toBe('Theirs');
  });

  test('the form refuses too when the object changed since it was loaded', async ({ page }) => {
    const name = demoItem('Base');
    await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default&edit=1`);
    await hydrated(page);
    const message = page.locator('[name="spec.message"]');
    await expect(message).toHaveValue('Base');
    await message.fill('Mine');
    kubectl(['patch', 'demoitem', name, '-n', 'default', '--type', 'merge', '-p', '{"spec":{"message":"Theirs"}}']);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(page.getByRole('alert').filter({ hasText: 'Changed by someone else' })).toBeVisible();
    expect(live(name).spec.message).toBe('Theirs');
    await page.getByRole('button', { name: 'Reload the form' }).click();
    await expect(page.locator('[name="spec.message"]')).toHaveValue('Theirs');
  });

  test('a YAML syntax error names its line and column; a rename is refused', async ({ page }) => {
    const name = demoItem('Base');
    const yaml = await openYaml(page, name);
    const text = await yaml.inputValue();
    await yaml.fill(text.replace('message: Base', 'message: [unclosed'));
    await page.getByRole('button', { name: 'Review changes' }).click();
    await expect(page.locator('#panel-yaml').getByRole('alert')).toContainText(/YAML line \d+, column \d+/);
    await yaml.fill(text.replace(`name: ${name}`, 'name: another-name'));
    await page.getByRole('button', { name: 'Review changes' }).click();
    await expect(page.locator('#panel-yaml').getByRole('alert')).toContainText('metadata.name cannot change');
  });

  test('the tabs work from the keyboard: one Tab stop, arrows between them, Space or Enter shows one', async ({ page }) => {
    const name = demoItem('Keys');
    await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default&edit=1`);
    await hydrated(page);
    const form = page.getByRole('tab', { name: 'Form' });
    const yaml = page.getByRole('tab', { name: 'YAML' });
    // The tab not shown is out of the Tab order: Tab from the shown one leaves the list.
    await expect(yaml).toHaveAttribute('tabindex', '-1');
    await form.focus();
    await page.keyboard.press('ArrowRight');
    await expect(yaml).toBeFocused();
    // Moving is not showing: the form is still the one shown until Space.
    await expect(form).toHaveAttribute('aria-selected', 'true');
    await page.keyboard.press(' ');
    await expect(yaml).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByRole('textbox', { name: 'YAML', exact: true })).toHaveValue(/message: Keys/);
    await expect(form).toHaveAttribute('tabindex', '-1');
    await yaml.focus();
    await page.keyboard.press('Home');
    await expect(form).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(form).toHaveAttribute('aria-selected', 'true');
    await expect(page.locator('[name="spec.message"]')).toBeVisible();
  });

  test('closing the page with an edit in the form asks first; as loaded, it does not', async ({ page }) => {
    const name = demoItem('Unsaved');
    await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default&edit=1`);
    await hydrated(page);
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => { dialogs.push(dialog.type()); void dialog.dismiss(); });
    const message = page.locator('[name="spec.message"]');
    await message.fill('Typed, not saved');
    await page.close({ runBeforeUnload: true });
    await expect.poll(() => dialogs).toEqual(['beforeunload']);
    // Staying: the edit is still there. Undone, the page closes without asking.
    expect(page.isClosed()).toBe(false);
    await expect(message).toHaveValue('Typed, not saved');
    await message.fill('Unsaved');
    await page.close({ runBeforeUnload: true });
    await expect.poll(() => page.isClosed()).toBe(true);
    expect(dialogs).toEqual(['beforeunload']);
  });

  test('leaving an edited form by a link of the console or by Back asks first; its own tabs and an unedited form do not', async ({ page }) => {
    const name = demoItem('Leaving');
    await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default`);
    await hydrated(page);
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default&edit=1`);
    const dialogs: string[] = [];
    let leave = false;
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void (leave ? dialog.accept() : dialog.dismiss());
    });
    const message = page.locator('[name="spec.message"]');
    const toList = page.locator(`main a[href="${DEMO}"], nav a[href="${DEMO}"]`).first();
    await message.fill('Typed, not saved');
    // The YAML tab and back: the same page, nothing asked, the edit kept.
    await page.getByRole('tab', { name: 'YAML' }).click();
    await expect(page.getByRole('textbox', { name: 'YAML', exact: true })).toHaveValue(/message: Typed, not saved/);
    await page.getByRole('tab', { name: 'Form' }).click();
    await expect(message).toHaveValue('Typed, not saved');
    expect(dialogs).toEqual([]);

    // A link elsewhere, then Back: asked each time; "no" keeps the page and the edit.
    const question = 'confirm: Leave this page? The changes you made are not saved.';
    await toList.click();
    await expect.poll(() => dialogs).toEqual([question]);
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default&edit=1`);
    await expect(message).toHaveValue('Typed, not saved');
    await page.evaluate(() => history.back());
    await expect.poll(() => dialogs).toEqual([question, question]);
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default&edit=1`);
    await expect(message).toHaveValue('Typed, not saved');
    // "Yes" leaves: Back to the object.
    leave = true;
    await page.evaluate(() => history.back());
    await expect(page.getByRole('region', { name: 'Spec' })).toBeVisible();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
    expect(dialogs).toHaveLength(3);

    // As loaded, nothing is asked.
    await page.goto(`${DEMO}/${name}?ns=default&edit=1`);
    await hydrated(page);
    await expect(message).toHaveValue('Leaving');
    await toList.click();
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    expect(dialogs).toHaveLength(3);
  });

  test('edits under a session that ends come back after "Sign in again", once, and are saved', async ({ page, context }) => {
    const name = demoItem('Kept');
    await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default&edit=1`);
    await hydrated(page);
    const message = page.locator('[name="spec.message"]');
    await message.fill('Typed before the sign-out');
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });

    await (await signOutInNewTab(context)).close();
    const notice = page.getByRole('alert').filter({ hasText: 'You were signed out' });
    await expect(notice).toContainText('Your unsaved changes here come back when you sign in again.');
    // Nothing asked on the way out (a "stay" would leave the user on a page that saves nothing).
    await notice.getByRole('link', { name: 'Sign in again' }).click();
    await expect(page.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
    expect(dialogs).toEqual([]);
    await hydrated(page);
    await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();

    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default&edit=1`);
    await expect(page.getByRole('status').filter({ hasText: 'Your changes from before you were signed out are back' })).toBeVisible();
    await expect(message).toHaveValue('Typed before the sign-out');
    // Taken back once: nothing is left in the tab.
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    // Still unsaved edits: leaving asks as before.
    await page.locator(`main a[href="${DEMO}"], nav a[href="${DEMO}"]`).first().click();
    await expect.poll(() => dialogs).toEqual(['confirm: Leave this page? The changes you made are not saved.']);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
    expect(live(name).spec.message).toBe('Typed before the sign-out');
  });

  test('kept edits are a conflict when the object changed meanwhile, and no other user gets them', async ({ page, context }) => {
    const name = demoItem('Base');
    /** Alice types in the YAML tab; her session ends; "Sign in again", then `meanwhile`, then
     *  `as` signs in and lands where she was. */
    const editThenSignInAgain = async (as: string, meanwhile = () => {}) => {
      const yaml = await openYaml(page, name);
      await yaml.fill((await yaml.inputValue()).replace('message: Base', 'message: Mine'));
      await (await signOutInNewTab(context)).close();
      await page.getByRole('alert').filter({ hasText: 'You were signed out' }).getByRole('link', { name: 'Sign in again' }).click();
      await expect(page.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
      meanwhile();
      await hydrated(page);
      await page.getByRole('button', { name: `Sign in as ${as}` }).click();
      await expect(page).toHaveURL(`${DEMO}/${name}?ns=default&edit=1&yaml=1`);
      await hydrated(page);
      return yaml;
    };

    // Bob signs in in that tab: he is not shown Alice's edits, and they are gone from the tab.
    await editThenSignInAgain('bob@acme-corp.com');
    await expect(page.getByText('Mine')).toHaveCount(0);
    await expect.poll(() => page.evaluate(() => sessionStorage.length)).toBe(0);

    // Alice's come back in the YAML tab where she typed them; kubectl changed the object
    // meanwhile, so the save is refused as a conflict rather than written over their change.
    await context.clearCookies();
    const patch = '{"spec":{"message":"Theirs"}}';
    const yaml = await editThenSignInAgain('alice@acme-corp.com', () =>
      kubectl(['patch', 'demoitem', name, '-n', 'default', '--type', 'merge', '-p', patch]),
    );
    await expect(yaml).toHaveValue(/message: Mine/);
    // The review already compares with the live object.
    await page.getByRole('button', { name: 'Review changes' }).click();
    await expect(page.getByRole('alert').filter({ hasText: 'Changed by someone else' })).toBeVisible();
    expect(live(name).spec.message).toBe('Theirs');
  });

  test('bidirectional controls in the text are named by line, and the review writes them out', async ({ page }) => {
    const name = demoItem('invoice\u202etxt.exe');
    const yaml = await openYaml(page, name);
    // The textarea holds the text as stored: it can only obey the override.
    await expect(yaml).toHaveValue(/invoice\u202etxt\.exe/);
    const line = (await yaml.inputValue()).split('\n').findIndex((l) => l.includes('\u202e')) + 1;
    const note = page.locator('[data-bidi-controls]');
    await expect(note).toHaveText(
      `Line ${line} holds bidirectional control characters (U+202E…), which can make text read otherwise than it is saved. The review shows them as ⟨U+202E⟩.`,
    );
    await yaml.fill((await yaml.inputValue()).replace('txt.exe', 'txt.exe.zip'));
    await page.getByRole('button', { name: 'Review changes' }).click();
    const change = page.getByRole('figure', { name: 'Your change' });
    await expect(change.locator('ins')).toHaveText(/invoice⟨U\+202E⟩txt\.exe\.zip/);
    await expect(change.locator('del')).toHaveText(/invoice⟨U\+202E⟩txt\.exe$/);
    expect(await change.evaluate((e) => e.textContent!.includes('\u202e'))).toBe(false);
    // Taken out, the note goes.
    await yaml.fill((await yaml.inputValue()).replaceAll('\u202e', ''));
    await expect(note).toHaveCount(0);
  });

  test('a text longer than a save takes is said while it is typed or pasted, and goes when shortened', async ({ page }) => {
    const name = demoItem('Long');
    await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default&edit=1&yaml=1`);
    await hydrated(page);
    const text = page.getByRole('textbox', { name: 'YAML', exact: true });
    const original = await text.inputValue();
    const tooLong = page.locator('[data-too-long]');
    await expect(tooLong).toHaveCount(0);
    await text.fill(`${original}\n# ${'x'.repeat(600 * 1024)}\n`);
    await expect(tooLong).toHaveText(/^The text is 60\d KiB: at most 512 KiB can be saved\./);
    await expect(tooLong).toHaveAttribute('role', 'alert');
    await text.fill(original);
    await expect(tooLong).toHaveCount(0);
  });

  test('the chosen tab is in the URL: a reload keeps it, and Back leaves the form', async ({ page }) => {
    const name = demoItem('Kept');
    await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default`);
    await hydrated(page);
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default&edit=1`);
    const yaml = page.getByRole('tab', { name: 'YAML' });
    await yaml.click();
    await expect(yaml).toHaveAttribute('aria-selected', 'true');
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default&edit=1&yaml=1`);
    await page.reload();
    await hydrated(page);
    await expect(yaml).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByRole('textbox', { name: 'YAML', exact: true })).toHaveValue(/message: Kept/);
    await expect(page.locator('[name="spec.message"]')).toBeHidden();
    // Back to the form tab: the URL says so too.
    await page.getByRole('tab', { name: 'Form' }).click();
    await expect(page.getByRole('tab', { name: 'Form' })).toHaveAttribute('aria-selected', 'true');
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default&edit=1`);
    await page.reload();
    await hydrated(page);
    await expect(page.locator('[name="spec.message"]')).toBeVisible();
    // A tab is not a page of its own: Back returns to the object, not to the other tab.
    await page.goBack();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
  });

  test("the detail page's YAML stays open across a reload", async ({ page }) => {
    const name = demoItem('Open');
    await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default`);
    await hydrated(page);
    const code = page.getByRole('region', { name: 'YAML' }).locator('pre');
    await expect(code).toBeHidden();
    await page.locator('summary', { hasText: 'YAML' }).click();
    await expect(code).toBeVisible();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default&yaml=1`);
    await page.reload();
    await hydrated(page);
    await expect(code).toBeVisible();
    await expect(code).toContainText('message: Open');
    await page.locator('summary', { hasText: 'YAML' }).click();
    await expect(code).toBeHidden();
    await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
  });

  test('?yaml=1 opens the YAML tab from the server render', async ({ page }) => {
    const name = demoItem('Server');
    await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default&edit=1&yaml=1`);
    await hydrated(page);
    await expect(page.getByRole('tab', { name: 'YAML' })).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByRole('textbox', { name: 'YAML', exact: true })).toHaveValue(/message: Server/);
    await expect(page.locator('[name="spec.message"]')).toBeHidden();
  });
});
