// Generated views against `fundament dev`: kubectl's columns, wide mode, the
// right object of two with one name, live updates from a create in another
// tab, and the API server's validation messages at the fields they name.
import { test, expect, type Page } from '@playwright/test';
import { hydrated, signIn } from './fixtures';
import { kubectl } from './kubectl';

const DATABASES = '/plugin-resources/acme-corp--cloudnative-pg/databases.postgresql.cnpg.io';
const CERTS = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';
const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';
const GRANTS = '/projects/webshop/plugin-resources/acme-corp--camunda/grants.plugins.camunda.io';

const headers = (page: Page) => page.locator('main table thead th:visible').allInnerTexts();
const clean = (xs: string[]) => xs.map((x) => x.replace(/[▲▼]/g, '').trim());

test.describe('generated views', () => {
  test("CloudNativePG Databases: kubectl's columns, and the right app-db of two", async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', DATABASES);
    await expect(page.getByRole('table', { name: 'Database list' })).toBeVisible();
    expect(clean(await headers(page))).toEqual(['Name', 'Namespace', 'Age', 'Cluster', 'PG Name', 'Applied', 'Message']);
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'analytics', exact: true }) }).filter({ hasText: 'app-db' });
    await row.getByRole('link', { name: 'app-db' }).click();
    await expect(page).toHaveURL(`${DATABASES}/app-db?ns=analytics`);
    await expect(page.getByRole('region', { name: 'Metadata' })).toContainText('analytics');
    await expect(page.getByRole('region', { name: 'Spec' })).toContainText('analytics-pg');
    // Dates are ages with the exact time on hover.
    await page.goto(DATABASES);
    await expect(page.locator('main tbody time').first()).toHaveAttribute('title', /^\d{4}-\d\d-\d\dT/);
  });

  test('Certificates with their custom page switched off: Ready, Secret, Age; Issuer and Status in wide mode', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await page.getByRole('link', { name: 'Show the generated view' }).click();
    await expect(page).toHaveURL(`${CERTS}?generated=1`);
    await expect(page.getByRole('table', { name: 'Certificate list' })).toBeVisible();
    expect(clean(await headers(page))).toEqual(['Name', 'Namespace', 'Ready', 'Secret', 'Age']);
    await hydrated(page);
    await page.getByRole('link', { name: 'Show wide columns' }).click();
    await expect(page.locator('main table thead th', { hasText: 'Issuer' })).toBeVisible();
    expect(clean(await headers(page))).toEqual(['Name', 'Namespace', 'Ready', 'Secret', 'Issuer', 'Status', 'Age']);
    // Filters keep the generated view and wide mode.
    await page.getByLabel('Search').fill('api-tls');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page).toHaveURL(/generated=1/);
    await expect(page.locator('main tbody tr')).toHaveCount(1);
    // The URL holds the form's fields only: the Apply button has no name, so no `&=` for it.
    expect(page.url()).not.toContain('&=');
    expect([...new URL(page.url()).searchParams.keys()]).not.toContain('');
    expect(new URL(page.url()).searchParams.get('q')).toBe('api-tls');
  });

  test('a DemoItem created through the generated form appears in the open list without a reload', async ({ page, context }) => {
    await signIn(page, 'alice@acme-corp.com', DEMO);
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    const name = `e2e-${Date.now()}`;
    const form = await context.newPage();
    await form.goto(`${DEMO}/create`);
    await hydrated(form);
    await expect(form.locator('[name="metadata.name"]')).toBeVisible();
    await form.locator('[name="metadata.name"]').fill(name);
    await form.locator('[name="metadata.namespace"]').selectOption('default');
    await form.locator('[name="spec.message"]').fill('Created from the generated form');
    await form.getByRole('button', { name: 'Create', exact: true }).click();
    await expect(form).toHaveURL(`${DEMO}/${name}?ns=default`);
    await expect(form.getByRole('region', { name: 'Spec' })).toContainText('Created from the generated form');
    // The list tab was not touched: its watch brings the new row.
    await expect(page.getByRole('link', { name })).toBeVisible({ timeout: 10_000 });

    // Delete names the object and takes it away from the list too.
    await form.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect(form.getByRole('alertdialog')).toContainText(`Delete DemoItem ${name}?`);
    await form.getByRole('button', { name: `Delete ${name}` }).click();
    await expect(form).toHaveURL(DEMO);
    await expect(page.getByRole('link', { name })).toHaveCount(0, { timeout: 10_000 });
  });

  test('Cancel leaves a form for where it came from; after a save or a delete, Back skips the form', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', DEMO);
    await hydrated(page);
    await page.getByRole('link', { name: 'Create DemoItem' }).click();
    await expect(page).toHaveURL(`${DEMO}/create`);
    await page.getByRole('link', { name: 'Cancel', exact: true }).click();
    await expect(page).toHaveURL(DEMO);
    const name = `back-${Date.now()}`;
    try {
      await page.getByRole('link', { name: 'Create DemoItem' }).click();
      await page.locator('[name="metadata.name"]').fill(name);
      await page.locator('[name="metadata.namespace"]').selectOption('default');
      await page.locator('[name="spec.message"]').fill('Saved once');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
      // Back goes to the list the form was opened from, not to a form of what was just created.
      await page.goBack();
      await expect(page).toHaveURL(DEMO);
      await page.goForward();
      await expect(page).toHaveURL(`${DEMO}/${name}?ns=default`);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('button', { name: `Delete ${name}` }).click();
      await expect(page).toHaveURL(DEMO);
      await expect(page.getByRole('link', { name, exact: true })).toHaveCount(0);
      // Back from the list does not land on the deleted object's "not found".
      await page.goBack();
      await expect(page).toHaveURL(DEMO);
      // The YAML tab's Cancel leaves an edit for the object's page.
      await page.goto(`${DEMO}/hello-world?ns=default`);
      await hydrated(page);
      await page.getByRole('link', { name: 'Edit', exact: true }).click();
      await expect(page).toHaveURL(`${DEMO}/hello-world?ns=default&edit=1`);
      await page.getByRole('tab', { name: 'YAML' }).click();
      await page.getByRole('tabpanel', { name: 'YAML' }).getByRole('link', { name: 'Cancel', exact: true }).click();
      await expect(page).toHaveURL(`${DEMO}/hello-world?ns=default`);
    } finally {
      kubectl(['delete', 'demoitems.demo.fundament.io', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
    }
  });

  test('an object named create opens from its list, and the create page stays the form', async ({ page }) => {
    // `create` is a valid name; `<list>/create` is the kind's create page, so its detail page
    // is `<list>/create?object=1`.
    const item = { apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name: 'create', namespace: 'staging' }, spec: { message: 'Named like the create page' } };
    kubectl(['apply', '-f', '-'], JSON.stringify(item));
    try {
      await signIn(page, 'alice@acme-corp.com', DEMO);
      await hydrated(page);
      await page.getByRole('link', { name: 'create', exact: true }).click();
      await expect(page).toHaveURL(`${DEMO}/create?object=1&ns=staging`);
      await expect(page.getByRole('region', { name: 'Spec' })).toContainText('Named like the create page');
      await expect(page.locator('[name="metadata.name"]')).toHaveCount(0);
      // Loaded from the server too, and the plain create path is still the form.
      await page.reload();
      await expect(page.getByRole('region', { name: 'Spec' })).toContainText('Named like the create page');
      await page.goto(`${DEMO}/create`);
      await expect(page.locator('[name="metadata.name"]')).toBeVisible();
    } finally {
      kubectl(['delete', 'demoitems.demo.fundament.io', 'create', '-n', 'staging', '--ignore-not-found']);
    }
  });

  test("editing a Grant's spec.cluster shows the API server's message at that field", async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', `${GRANTS}/orders-backup-storage-bucket-access?ns=my-cluster-ns`);
    await hydrated(page);
    await page.getByRole('link', { name: 'Edit' }).click();
    await expect(page).toHaveURL(/edit=1/);
    await hydrated(page);
    const cluster = page.locator('[name="spec.cluster.name"]');
    await expect(cluster).toHaveValue('orders');
    await cluster.fill('payments');
    await page.getByRole('button', { name: 'Check' }).click();
    await expect(page.locator('[data-path="spec.cluster"]').getByRole('alert').first()).toContainText(
      'cluster is immutable: delete the grant and create a new one',
    );
  });

  test("Grants: the seed's labels filter the list, and each reason comes with what to do", async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', `${GRANTS}/orders-backup-storage-kms-encrypt?ns=my-cluster-ns`);
    await hydrated(page);
    const conditions = page.getByRole('table', { name: 'Conditions' });
    await expect(conditions.locator('tr[data-condition="Applied"]')).toContainText('OverCeiling');
    await expect(conditions.locator('tr[data-condition="Applied"]')).toContainText(
      'What to do: Ask the admin of the identity extension to raise the ceiling',
    );
    // A label of the grant opens the list of every grant with it.
    await page.getByRole('link', { name: 'plugins.camunda.io/cluster=orders' }).click();
    await expect(page).toHaveURL(`${GRANTS}?labels=plugins.camunda.io%2Fcluster%3Dorders`);
    await expect(page.getByLabel('Label selector')).toHaveValue('plugins.camunda.io/cluster=orders');
    // The filtered page arrives after the URL changes: wait for it before reading the rows.
    await expect(page.locator('main tbody tr td:first-child').first()).toHaveText(/^orders-/);
    await expect(page.locator('main tbody tr td:first-child', { hasText: /^payments-/ })).toHaveCount(0);
    const names = await page.locator('main tbody tr td:first-child').allInnerTexts();
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((n) => n.startsWith('orders-'))).toBe(true);
    // A selector that does not parse is refused with a clear message, not an empty list.
    await page.getByLabel('Label selector').fill('plugins.camunda.io/cluster in (orders');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.getByRole('alert')).toContainText('is not valid');
  });

  test('a name over 63 characters is refused with the seed message', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', `${GRANTS}/create`);
    await hydrated(page);
    // A valid DNS subdomain of 64 characters: only the Grant's own rule refuses it.
    await page.locator('[name="metadata.name"]').fill(`${'a'.repeat(40)}.${'b'.repeat(23)}`);
    await page.locator('[name="metadata.namespace"]').selectOption('my-cluster-ns');
    await page.locator('[name="spec.cluster.name"]').fill('orders');
    await page.locator('[name="spec.format"]').selectOption('aws-iam-statement');
    await page.locator('[name="spec.fragment"]').fill('{"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": "arn:aws:s3:::x/*"}');
    await page.locator('[name="spec.template"]').fill('bucket-access');
    await page.locator('[name="metadata.labels"]').fill(
      'plugins.camunda.io/registration=s3-backup-bucket\nplugins.camunda.io/request=orders-backup-storage\nplugins.camunda.io/cluster=orders',
    );
    await page.getByRole('button', { name: 'Check' }).click();
    await expect(page.locator('[data-path="metadata.name"]').getByRole('alert')).toContainText(
      'must be at most 63 characters',
    );
  });

  test('bad data never breaks a page: no schema, missing and mistyped values', async ({ page }) => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const ODDITIES = '/plugin-resources/acme-corp--demo/oddities.demo.fundament.io';
    await signIn(page, 'alice@acme-corp.com', `${ODDITIES}?wide=1`);
    await hydrated(page);
    expect(clean(await headers(page))).toEqual(['Name', 'Namespace', 'Color', 'Size', 'Started', 'Note', 'Age']);
    const cells = async (name: string) =>
      page.getByRole('row').filter({ has: page.getByRole('link', { name, exact: true }) }).getByRole('cell').allInnerTexts();
    // Missing paths are empty; an object in a string column is printed as JSON, as the API server does.
    expect((await cells('complete')).slice(2)).toEqual(['teal', '3', expect.stringMatching(/^\d+d$/), 'every column has a value', expect.stringMatching(/^\d+d$/)]);
    expect((await cells('empty')).slice(2, 6)).toEqual(['', '', '', '']);
    expect((await cells('mistyped')).slice(2, 5)).toEqual(['{"b":3,"g":2,"r":1}', '', '<invalid>']);
    for (const name of ['complete', 'empty', 'mistyped']) {
      await page.getByRole('link', { name, exact: true }).click();
      await expect(page.getByRole('region', { name: 'Metadata' })).toContainText(name);
      await expect(page.getByRole('region', { name: 'Spec' })).toBeVisible();
      await page.goBack();
      await expect(page.getByRole('table', { name: 'Oddity list' })).toBeVisible();
    }
    await page.goto(`${ODDITIES}/mistyped?ns=default`);
    await expect(page.getByRole('region', { name: 'Spec' })).toContainText('Deepest');
    await page.goto(`${ODDITIES}/create`);
    await expect(page.locator('[name="metadata.name"]')).toBeVisible();
    expect(errors).toEqual([]);
  });

  test("a reader's YAML alias bomb and a form with 2⁵³ items are refused at once, and the console stays up", async ({ page }) => {
    // bob may only read: both reach the server before any write check.
    await signIn(page, 'bob@acme-corp.com', CERTS);
    const origin = new URL(page.url()).origin;
    const post = (endpoint: string, data: unknown) =>
      page.request.post(`/api/${endpoint}`, { data, headers: { Origin: origin }, timeout: 15_000 });
    const cluster_id = '019b4000-2000-7000-8000-000000000001';
    const crd = 'certificates.cert-manager.io';
    const started = Date.now();
    // 100 KB naming one anchor of 25,000 values 16,000 times: 4×10⁸ values if expanded.
    const bomb = `a: &a [${'0,'.repeat(25_000)}]\nb: [${'*a,'.repeat(16_000)}]\n`;
    const toForm = await post('yaml-form', { cluster_id, crd, yaml: bomb });
    expect(toForm.status()).toBe(200);
    expect(JSON.stringify(await toForm.json())).toContain('aliases repeat what they name');
    // The form's item counts come from the browser: the server counted up to them.
    const values = { values: {}, lengths: { 'spec.dnsNames': Number.MAX_SAFE_INTEGER }, present: [] };
    const toYaml = await post('form-yaml', { cluster_id, crd, base: '', values, labels: '' });
    expect(toYaml.status()).toBe(200);
    expect(JSON.stringify(await toYaml.json())).toContain('more items than a form takes');
    expect(Date.now() - started, 'answered at once, not after building gigabytes').toBeLessThan(10_000);
    expect((await page.request.get('/livez')).status()).toBe(200);
  });

  test('bob, who may create DemoItems in staging only, gets the form there; a create elsewhere is refused by the cluster', async ({ page }) => {
    // staging is not the first of the page's namespaces (analytics is): the form asks each one.
    const rbac = [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'e2e-bob-creates-demoitems', namespace: 'staging' },
        rules: [{ apiGroups: ['demo.fundament.io'], resources: ['demoitems'], verbs: ['create'] }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'e2e-bob-creates-demoitems', namespace: 'staging' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'e2e-bob-creates-demoitems' },
        subjects: [{ kind: 'ServiceAccount', name: 'fundament-bob', namespace: 'fundament-system' }] },
    ];
    // The embedded cluster serves no OpenAPI schema of RBAC kinds for kubectl to validate against.
    for (const object of rbac) kubectl(['apply', '--validate=false', '-f', '-'], JSON.stringify(object));
    try {
      // The list's Create link carries its namespace filter.
      await signIn(page, 'bob@acme-corp.com', `${DEMO}?namespace=staging`);
      await hydrated(page);
      await expect(page.getByRole('link', { name: 'Create DemoItem' })).toHaveAttribute('href', `${DEMO}/create?namespace=staging`);
      await page.goto(`${DEMO}/create`);
      await hydrated(page);
      const namespace = page.locator('form [name="metadata.namespace"]');
      await expect(namespace).toHaveValue('staging');
      expect(await namespace.locator('option').allInnerTexts()).toEqual(['staging']);
      await expect(page.getByText('You may not create')).toHaveCount(0);
      // A request naming another namespace is the cluster's to refuse, with its own words.
      const origin = new URL(page.url()).origin;
      const values = { values: { 'metadata.name': 'e2e-bob', 'metadata.namespace': 'default', 'spec.message': 'x' }, lengths: {}, present: [] };
      const answer = await page.request.post('/api/form-submit', {
        data: { cluster_id: '019b4000-2000-7000-8000-000000000001', crd: 'demoitems.demo.fundament.io', project: null, existing: null,
          input: { values, labels: '', resource_version: '' }, dry_run: true },
        headers: { Origin: origin },
      });
      expect(answer.status()).toBe(200);
      expect(JSON.stringify(await answer.json())).toMatch(/cannot create resource .*demoitems.* in the namespace .*default/);
    } finally {
      kubectl(['delete', 'rolebinding,role', 'e2e-bob-creates-demoitems', '-n', 'staging', '--ignore-not-found']);
    }
  });

  test("under a project, another project's object does not open, nor its edit or YAML, and is not deleted", async ({ page }) => {
    // default is webshop's namespace, not analytics's.
    const ANALYTICS_DATABASES = '/projects/analytics/plugin-resources/acme-corp--cloudnative-pg/databases.postgresql.cnpg.io';
    const refused = 'The namespace "default" is not one this page shows.';
    await signIn(page, 'alice@acme-corp.com', `${ANALYTICS_DATABASES}/app-db?ns=default`);
    await hydrated(page);
    await expect(page.getByRole('alert')).toContainText(refused);
    await expect(page.getByRole('region', { name: 'Spec' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Delete', exact: true })).toHaveCount(0);
    for (const query of ['&edit=1', '&edit=1&yaml=1']) {
      await page.goto(`${ANALYTICS_DATABASES}/app-db?ns=default${query}`);
      await expect(page.getByRole('alert')).toContainText(refused);
      await expect(page.locator('form [name="metadata.name"], textarea')).toHaveCount(0);
    }
    // A crafted delete is refused by the server, and the object stays.
    const origin = new URL(page.url()).origin;
    const answer = await page.request.post('/api/delete-object', {
      data: { cluster_id: '019b4000-2000-7000-8000-000000000001', crd: 'databases.postgresql.cnpg.io', project: 'analytics', name: 'app-db', namespace: 'default' },
      headers: { Origin: origin },
    });
    expect(answer.status()).not.toBe(200);
    expect(await answer.text()).toContain('is not one this page shows');
    expect(kubectl(['get', 'databases.postgresql.cnpg.io', 'app-db', '-n', 'default', '-o', 'name'])).toContain('app-db');
    // The project's own app-db opens.
    await page.goto(`${ANALYTICS_DATABASES}/app-db?ns=analytics`);
    await expect(page.getByRole('region', { name: 'Metadata' })).toContainText('analytics');
    // A plugin's own detail page is not framed for another project's object either.
    await page.goto('/projects/analytics/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io/web-tls-cert?ns=default');
    await expect(page.getByRole('alert')).toContainText(refused);
    await expect(page.locator('[data-plugin-frame]')).toHaveCount(0);
  });

  test('the delete confirmation takes the keyboard: focus on Cancel, Tab stays inside, Escape cancels', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', `${DATABASES}/app-db?ns=analytics`);
    await hydrated(page);
    const opener = page.getByRole('button', { name: 'Delete', exact: true });
    const dialog = page.getByRole('alertdialog');
    const confirm = dialog.getByRole('button', { name: 'Delete app-db' });
    const cancel = dialog.getByRole('button', { name: 'Cancel' });
    await opener.click();
    await expect(cancel).toBeFocused();
    await page.keyboard.press('Tab');
    await expect(confirm).toBeFocused();
    await page.keyboard.press('Tab');
    await expect(cancel).toBeFocused();
    await page.keyboard.press('Shift+Tab');
    await expect(confirm).toBeFocused();
    await page.keyboard.press('Shift+Tab');
    await expect(cancel).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(dialog).toHaveCount(0);
    await expect(opener).toBeFocused();
    // Opened from the keyboard and cancelled with its button: focus comes back too.
    await page.keyboard.press('Enter');
    await expect(cancel).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(dialog).toHaveCount(0);
    await expect(opener).toBeFocused();
    expect(kubectl(['get', 'databases.postgresql.cnpg.io', 'app-db', '-n', 'analytics', '-o', 'name'])).toContain('app-db');
  });

  test('a 245-character name wraps: the detail page is no wider than the window, nor its list', async ({ page }) => {
    const name = `long-${'a'.repeat(240)}`;
    // kubectl apply adds its last-applied annotation: one unbroken line of JSON naming it.
    const item = { apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name, namespace: 'default' }, spec: { message: 'A long name' } };
    kubectl(['apply', '-f', '-'], JSON.stringify(item));
    try {
      await page.setViewportSize({ width: 1280, height: 800 });
      await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default`);
      await hydrated(page);
      await expect(page.getByRole('region', { name: 'Spec' })).toContainText('A long name');
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(name);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
      // In the list the name wraps in its column: the table fits its card, every column in view.
      await page.goto(`${DEMO}?q=long-`);
      const table = page.getByRole('table', { name: 'DemoItem list' });
      await expect(table.getByRole('link', { name })).toBeVisible();
      const fit = await table.evaluate((t) => ({ table: t.scrollWidth, card: t.parentElement!.clientWidth }));
      expect(fit.table).toBeLessThanOrEqual(fit.card);
      await expect(table.locator('thead th').last()).toBeInViewport();
    } finally {
      kubectl(['delete', 'demoitems.demo.fundament.io', name, '-n', 'default', '--ignore-not-found']);
    }
  });

  test("a right-to-left override in an object's text is shown, not obeyed", async ({ page }) => {
    const name = `bidi-${Date.now()}`;
    const spoof = 'invoice\u202Etxt.exe';
    const item = {
      apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem',
      metadata: { name, namespace: 'default', annotations: { 'e2e.fundament.io/file': spoof } },
      spec: { message: spoof },
    };
    kubectl(['create', '-f', '-'], JSON.stringify(item));
    try {
      await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default`);
      const shown = 'invoice⟨U+202E⟩txt.exe';
      await expect(page.getByRole('region', { name: 'Spec' })).toContainText(shown);
      await expect(page.getByRole('region', { name: 'Metadata' })).toContainText(`e2e.fundament.io/file=${shown}`);
      for (const region of ['Spec', 'Metadata']) {
        expect(await page.getByRole('region', { name: region }).innerText()).not.toContain('\u202E');
      }
    } finally {
      kubectl(['delete', 'demoitems.demo.fundament.io', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
    }
  });

  test('a quarter of a megabyte in an annotation and a field is shown in part, with its whole length; the YAML has it all', async ({ page }) => {
    const name = `long-${Date.now()}`;
    // Just under the 256 KiB the API server allows for all of an object's annotations.
    const long = 'x'.repeat(250 * 1024);
    const item = {
      apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem',
      metadata: { name, namespace: 'default', annotations: { 'e2e.fundament.io/long': long } },
      spec: { message: long },
    };
    kubectl(['create', '-f', '-'], JSON.stringify(item));
    try {
      await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default`);
      const metadata = page.getByRole('region', { name: 'Metadata' });
      const spec = page.getByRole('region', { name: 'Spec' });
      await expect(metadata).toContainText('e2e.fundament.io/long=xxx');
      await expect(metadata).toContainText('(251 KB in all: see the YAML)');
      await expect(spec).toContainText('(250 KB in all: see the YAML)');
      expect((await metadata.innerText()).length).toBeLessThan(2_000);
      expect((await spec.innerText()).length).toBeLessThan(4_000);
      await page.locator('summary', { hasText: 'YAML' }).click();
      expect(await page.getByRole('region', { name: 'YAML' }).locator('pre').innerText()).toContain(long);
    } finally {
      kubectl(['delete', 'demoitems.demo.fundament.io', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
    }
  });

  test('on a phone, a detail page with its YAML open is no wider than the window', async ({ page }) => {
    const name = `phone-${Date.now()}`;
    // One unbroken line of YAML far wider than a phone.
    const message = `https://example.com/${'a'.repeat(120)}`;
    const item = { apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name, namespace: 'default' }, spec: { message } };
    kubectl(['apply', '-f', '-'], JSON.stringify(item));
    try {
      await page.setViewportSize({ width: 375, height: 800 });
      await signIn(page, 'alice@acme-corp.com', `${DEMO}/${name}?ns=default&yaml=1`);
      await hydrated(page);
      const yaml = page.getByRole('region', { name: 'YAML' }).getByLabel('YAML');
      await expect(yaml).toContainText(message);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      // The YAML's long lines scroll inside its card instead.
      expect(await yaml.evaluate((pre) => pre.scrollWidth > pre.clientWidth)).toBe(true);
    } finally {
      kubectl(['delete', 'demoitems.demo.fundament.io', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
    }
  });

  test('Back and Forward keep the namespace shown as the list is filtered, so Apply keeps the filter', async ({ page }) => {
    const LIST = `/projects/webshop${DEMO}`;
    await signIn(page, 'alice@acme-corp.com', LIST);
    await hydrated(page);
    const namespace = page.getByLabel('Namespace');
    await namespace.selectOption('default');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page).toHaveURL(/[?&]namespace=default/);
    await page.getByLabel('Search').fill('hello');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page).toHaveURL(/[?&]q=hello/);
    await page.goBack();
    await page.goBack();
    await expect(page).toHaveURL(LIST);
    await expect(namespace).toHaveValue('');
    await page.goForward();
    await expect(page).toHaveURL(/[?&]namespace=default/);
    await expect(namespace).toHaveValue('default');
    await expect(page.getByLabel('Search')).toHaveValue('');
    await page.getByLabel('Search').fill('world');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page).toHaveURL(/[?&]q=world/);
    expect(new URL(page.url()).searchParams.get('namespace')).toBe('default');
  });

  test("the generated view of a kind with the plugin's own page edits there and comes back to it", async ({ page }) => {
    const name = `gen-edit-${Date.now()}`;
    const cert = {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name, namespace: 'default' },
      spec: { secretName: `${name}-tls`, dnsNames: ['gen.example.com'], issuerRef: { name: 'letsencrypt', kind: 'ClusterIssuer' } },
    };
    kubectl(['apply', '-f', '-'], JSON.stringify(cert));
    try {
      await signIn(page, 'alice@acme-corp.com', `${CERTS}/${name}?ns=default&generated=1`);
      await hydrated(page);
      await page.getByRole('link', { name: 'Edit', exact: true }).click();
      await expect(page).toHaveURL(/[?&]edit=1/);
      await expect(page).toHaveURL(/[?&]generated=1/);
      const secret = page.locator('[name="spec.secretName"]');
      await expect(secret).toHaveValue(`${name}-tls`);
      await secret.fill(`${name}-renamed`);
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await expect(page).toHaveURL(`${CERTS}/${name}?ns=default&generated=1`);
      await expect(page.getByRole('region', { name: 'Spec' })).toContainText(`${name}-renamed`);
      expect(kubectl(['get', 'certificates.cert-manager.io', name, '-n', 'default', '-o', 'jsonpath={.spec.secretName}'])).toBe(`${name}-renamed`);
      // The edit form is a generated view wherever it is asked for: the plugin's page does not take it.
      await page.goto(`${CERTS}/${name}?ns=default&edit=1`);
      await expect(page.locator('[name="spec.secretName"]')).toHaveValue(`${name}-renamed`);
      await expect(page.getByRole('link', { name: "Show the plugin's page" })).toBeVisible();
    } finally {
      kubectl(['delete', 'certificates.cert-manager.io', name, '-n', 'default', '--ignore-not-found', '--wait=false']);
    }
  });

  test('bob sees why he cannot create instead of a broken form', async ({ page }) => {
    await signIn(page, 'bob@acme-corp.com', `${DEMO}/create`);
    await expect(page.getByRole('alert')).toContainText('You may not create demoitems');
    await expect(page.locator('form [name="metadata.name"]')).toHaveCount(0);
  });
});
