// The console's plugin integration against `fundament dev`: the seed's
// "Verifying the integration end-to-end" walk, discovery (kubectl-applied
// installations, the Pending one), bob's read-only access, the theme, and the
// frame host's refusal of messages that are not from its frame.
import { test, expect, type Page, type Frame } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clickReplacingItsFrame, frameReady, hydrated, messages, pluginFrame, recordMessages, signIn, signOutInNewTab, userMenu } from './fixtures';
import { kubectl } from './kubectl';

export const auditLog = process.env.FUNDAMENT_AUDIT_LOG ?? path.join(os.tmpdir(), 'fundament-e2e-audit.jsonl');
// Each installation's pages live on an origin of their own under plugin-proxy's host.
const CERT_MANAGER_ORIGIN = 'http://acme-corp--cert-manager.localhost:8082';
const KUBE_API_PROXY = 'http://localhost:8081';
const PROD = '019b4000-2000-7000-8000-000000000001';
const CERTS = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';



function auditLines(since: number): Record<string, unknown>[] {
  if (!fs.existsSync(auditLog)) return [];
  return fs
    .readFileSync(auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((l) => Date.parse(l.time) >= since - 1000);
}

test.describe('plugin pages in the console', () => {
  test("the seed's end-to-end walk: frame, init, Bearer calls, navigate, audit, forbidden", async ({ page }) => {
    const started = Date.now();
    await recordMessages(page);
    const pageResponse = page.waitForResponse((r) => r.url().endsWith('/console/certificates-list.html'));
    const dataRequest = page.waitForRequest((r) => r.url().startsWith(`${KUBE_API_PROXY}/clusters/${PROD}/apis/cert-manager.io/`));
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);

    // The src is on the installation's own plugin-proxy origin, with installation name and
    // version, and carries a single-use frame ticket; the page has the plugin CSP.
    const iframe = page.locator('[data-plugin-frame] iframe');
    await expect(iframe).toHaveAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
    await expect(iframe).toHaveAttribute('title', 'Cert Manager: Certificates');
    const src = new URL((await iframe.getAttribute('src'))!);
    expect(`${src.origin}${src.pathname}`).toBe(
      `${CERT_MANAGER_ORIGIN}/clusters/${PROD}/plugins/acme-corp--cert-manager/v1.17.2/console/certificates-list.html`,
    );
    expect(src.searchParams.get('fundament-ticket')).toMatch(/^ey/);
    // The page itself lives at the clean URL: plugin-proxy took the ticket and redirected.
    expect(pluginFrame(page, 'certificates-list.html').url()).toBe(`${src.origin}${src.pathname}`);
    const csp = (await (await pageResponse).allHeaders())['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain('frame-ancestors http://localhost:3000');

    // plugin:ready reached the console, and fundament:init came back from it.
    const list = pluginFrame(page, 'certificates-list.html');
    await expect.poll(async () => (await messages(page)).some((m) => m.type === 'plugin:ready')).toBe(true);
    const init = (await messages(list)).find((m) => m.type === 'fundament:init')!;
    expect(init).toMatchObject({
      origin: 'http://localhost:3000',
      protocolVersion: 1,
      pluginName: 'acme-corp--cert-manager',
      crdKind: 'Certificate',
      view: 'list',
      kubeApiProxyUrl: KUBE_API_PROXY,
      clusterId: PROD,
      token: '<token>',
    });
    expect(['light', 'dark']).toContain(init.theme);
    expect(init.tokenExpiresAt as number).toBeGreaterThan(Date.now() / 1000 + 600);
    const ready = (await messages(page)).find((m) => m.type === 'plugin:ready')!;
    expect(ready.origin).toBe(CERT_MANAGER_ORIGIN);
    expect(ready.at).toBeLessThanOrEqual(init.at);

    // Data goes to kube-api-proxy with the PluginToken, never the cookie.
    const headers = await (await dataRequest).allHeaders();
    expect(headers.authorization).toMatch(/^Bearer ey/);
    expect(headers.cookie).toBeUndefined();
    await expect(page.frameLocator('[data-plugin-frame] iframe').getByRole('link', { name: 'web-tls-cert' })).toBeVisible();

    // A row click posts plugin:navigate and the console opens the detail view.
    const entries = await page.evaluate(() => history.length);
    clickReplacingItsFrame(page.frameLocator('[data-plugin-frame] iframe').getByRole('link', { name: 'web-tls-cert' }));
    await expect(page).toHaveURL(`${CERTS}/web-tls-cert?ns=default`);
    // The click in the frame is the user's (it activates the console's window too): a new entry.
    expect(await page.evaluate(() => history.length)).toBe(entries + 1);
    await frameReady(page, 'certificates-detail.html');
    await expect(page.getByRole('navigation', { name: 'Breadcrumb' })).toContainText('Webshop›Cert Manager›Certificates›web-tls-cert');
    const detail = pluginFrame(page, 'certificates-detail.html');
    const detailInit = (await messages(detail)).find((m) => m.type === 'fundament:init')!;
    expect(detailInit).toMatchObject({ view: 'detail', resource: { name: 'web-tls-cert', namespace: 'default' } });
    await expect(page.frameLocator('[data-plugin-frame] iframe').getByText('web-tls', { exact: true }).first()).toBeVisible();

    // A call outside the plugin's RBAC is refused with SdkError('forbidden').
    const refused = await detail.evaluate(async () => {
      try {
        await (window as any).fundament.k8s.list({ version: 'v1', resource: 'secrets', namespace: 'default' });
        return 'allowed';
      } catch (err: any) {
        return `${err.name}:${err.code}:${err.status}`;
      }
    });
    expect(refused).toBe('SdkError:forbidden:403');

    // Each call left an audit line with its decision.
    await expect.poll(() => auditLines(started).length).toBeGreaterThanOrEqual(3);
    const lines = auditLines(started).filter((l) => l.installation_name === 'acme-corp--cert-manager');
    expect(lines.find((l) => l.resource === 'certificates' && l.verb === 'list')).toMatchObject({ decision: 'allowed', status: 200 });
    expect(lines.find((l) => l.resource === 'certificates' && l.verb === 'get' && l.name === 'web-tls-cert')).toMatchObject({
      decision: 'allowed',
      namespace: 'default',
    });
    const secrets = lines.find((l) => l.resource === 'secrets');
    expect(secrets?.decision).toMatch(/^denied/);
    expect(secrets?.status).toBe(403);
  });

  test('bob sees the plugins; a create he may not do fails with a readable message', async ({ page }) => {
    await signIn(page, 'bob@acme-corp.com', '/projects/webshop');
    const sidebar = page.getByRole('navigation', { name: 'Sidebar' });
    for (const name of ['Cert Manager', 'CloudNativePG', 'OpenFSC', 'Demo']) {
      await expect(sidebar.locator('summary', { hasText: name })).toBeVisible();
    }
    // The Pending installation is not offered.
    await expect(sidebar.locator('[data-plugin="acme-corp--external-dns"]')).toHaveCount(0);
    await page.goto('/plugins');
    await expect(page.locator('tr[data-installation="acme-corp--external-dns"]')).toContainText('Not running');

    await page.goto('/projects/webshop/plugin-resources/acme-corp--openfsc/fscinstallations.openfsc.fundament.io');
    await frameReady(page);
    await page.getByRole('link', { name: 'Create FSCInstallation' }).click();
    await expect(page).toHaveURL(/fscinstallations\.openfsc\.fundament\.io\/create$/);
    await frameReady(page, 'fscinstallations-create.html');
    const form = page.frameLocator('[data-plugin-frame] iframe');
    // The create page got the project's namespaces.
    const create = pluginFrame(page, 'fscinstallations-create.html');
    await expect.poll(async () => create.evaluate(async () => (await (window as any).fundament.init).namespaces ?? null)).toContain('fsc-demo');
    await form.locator('[name="metadata.name"]').fill('bob-peer');
    await form.locator('[name="metadata.namespace"]').selectOption('fsc-demo');
    await form.locator('[name="spec.groupID"]').fill('fsc-test');
    await form.locator('[name="spec.peerID"]').fill('12345678901234567890');
    await form.locator('[name="spec.postgres.storageClass"]').fill('standard');
    await form.getByRole('button', { name: 'Create installation' }).click();
    const error = form.getByRole('alert');
    await expect(error).toContainText('Failed to create');
    await expect(error).toContainText(/forbidden|not allowed|cannot create/i);

    // At organization level the create page gets no namespaces: bob's list of the cluster's
    // namespaces is not the plugin's to see.
    await page.goto('/plugin-resources/acme-corp--openfsc/fscinstallations.openfsc.fundament.io/create');
    await frameReady(page, 'fscinstallations-create.html');
    const orgCreate = pluginFrame(page, 'fscinstallations-create.html');
    expect(await orgCreate.evaluate(async () => (await (window as any).fundament.init).namespaces ?? null)).toBeNull();
  });

  test('a PluginInstallation applied with kubectl appears in the sidebar without a reload, and goes on delete', async ({ page }) => {
    // Room for both 15 s waits below besides the sign-in (the default is 30 s in all).
    test.setTimeout(60_000);
    const demo = JSON.parse(kubectl(['get', 'plugininstallation', 'acme-corp--demo', '-o', 'json']));
    const name = 'acme-corp--demo-preview';
    const copy = {
      apiVersion: 'plugins.fundament.io/v1',
      kind: 'PluginInstallation',
      metadata: { name },
      spec: demo.spec,
    };
    kubectl(['delete', 'plugininstallation', name, '--ignore-not-found']);
    await signIn(page, 'alice@acme-corp.com', '/');
    const group = page.getByRole('navigation', { name: 'Sidebar' }).locator(`[data-plugin="${name}"]`);
    await expect(group).toHaveCount(0);
    // The change goes from kubectl through the cluster's plugin controller (reconciled, Running)
    // to the tab's watch, a fresh registry from the console and a render: 15 s for that chain on
    // a loaded machine. The page is never reloaded: the tab finds the change by itself.
    try {
      kubectl(['apply', '-f', '-'], JSON.stringify(copy));
      await expect(group).toBeVisible({ timeout: 15_000 });
      await expect(group.getByRole('link', { name: 'Demo items' })).toHaveAttribute(
        'href',
        `/plugin-resources/${name}/demoitems.demo.fundament.io`,
      );
    } finally {
      kubectl(['delete', 'plugininstallation', name, '--ignore-not-found']);
    }
    await expect(group).toHaveCount(0, { timeout: 15_000 });
  });

  test("a tab left open across a sign-out and bob's sign-in gets no token for bob", async ({ page, context }) => {
    test.setTimeout(60_000);
    // The mint requests alice's tab makes, and every answer to them.
    const mints: { body: string; contentType: string }[] = [];
    const replies: string[] = [];
    const afterSignOut = new Set<unknown>();
    let signedOut = false;
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/plugin-token') {
        mints.push({ body: r.postData() ?? '', contentType: r.headers()['content-type'] ?? '' });
        if (signedOut) afterSignOut.add(r);
      }
    });
    page.on('response', (r) => {
      if (afterSignOut.has(r.request())) r.text().then((t) => replies.push(t), () => replies.push('(unread)'));
    });
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    expect(mints.length).toBeGreaterThan(0);
    signedOut = true;
    // In another tab, alice signs out and bob signs in: the browser now holds bob's session.
    const other = await signOutInNewTab(context);
    await signIn(other, 'bob@acme-corp.com');

    // Alice's old tab knows it was signed out and unloaded its plugin page
    // (end2end/tests/sign-out.faults.spec.ts). Whatever such a page still manages to ask, as alice's page
    // asked before, the console answers no token for bob's session.
    // Signed out, or (when its check with the console came after bob's sign-in) now bob's.
    await expect(page.getByRole('alert').filter({ hasText: /You were signed out|You are now signed in as Bob/ })).toBeVisible();
    await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'signed-out');
    const { body, contentType } = mints[0];
    const answer = await page.evaluate(
      async ({ body, contentType }) => (await fetch('/api/plugin-token', { method: 'POST', headers: { 'Content-Type': contentType }, body })).text(),
      { body, contentType },
    );
    expect(answer).toContain('Unauthorized');
    expect(answer).not.toContain('Minted');
    await expect.poll(() => replies.length).toBe(afterSignOut.size);
    expect(replies.every((r) => r.includes('Unauthorized') && !r.includes('Minted')), replies.join('\n')).toBe(true);

    // The same page loaded again is bob's, and gets bob's tokens.
    await page.reload();
    await frameReady(page);
    await expect(userMenu(page, 'Bob')).toBeVisible();
    await other.close();
  });

  test('a page flooding the console with messages is stopped, and opens again on Try again', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    // 5,000 valid messages at once from the page (a page needs a handful; the bound is 500 at once,
    // then 50 a second).
    await pluginFrame(page, 'certificates-list.html').evaluate(() => {
      for (let i = 0; i < 5_000; i++) window.parent.postMessage({ type: 'plugin:resize', height: 400 + (i % 50) }, '*');
    });
    await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'flooded');
    await expect(page.getByRole('alert')).toContainText('sent more than 500 messages at once or 50 a second');
    // Its page is unloaded (its scripts end), and the console still answers.
    await expect.poll(() => page.frames().some((f) => f.url().includes('/console/certificates-list.html'))).toBe(false);
    await page.getByRole('alert').getByRole('link', { name: 'Try again' }).click();
    await frameReady(page, 'certificates-list.html');
    await expect(page.getByRole('alert')).toHaveCount(0);

    // The same flood from a frame the page nests (same origin, not the frame the console made):
    // each message costs the console's window the same, so it counts the same.
    const plugin = pluginFrame(page, 'certificates-list.html');
    await plugin.evaluate(() => {
      const nested = document.createElement('iframe');
      nested.srcdoc = '<p>nested</p>';
      document.body.append(nested);
    });
    await expect.poll(() => page.frames().some((f) => f.parentFrame() === plugin && f.url() === 'about:srcdoc')).toBe(true);
    const nested = page.frames().find((f) => f.parentFrame() === plugin && f.url() === 'about:srcdoc')!;
    await nested.evaluate(() => {
      for (let i = 0; i < 5_000; i++) window.top!.postMessage({ type: 'plugin:request-token-refresh' }, '*');
    });
    await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'flooded');
  });

  test('a page posting messages too large to read quickly is stopped after the first', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    // Four valid messages, well within the count, each carrying 100 MB the console's thread
    // would decode when it reads them (about 400 ms each here).
    await pluginFrame(page, 'certificates-list.html').evaluate(() => {
      const pad = 'x'.repeat(100 * 2 ** 20);
      for (let i = 0; i < 4; i++) window.parent.postMessage({ type: 'plugin:resize', height: 400, pad }, '*');
    });
    await expect(page.locator('[data-plugin-frame]')).toHaveAttribute('data-state', 'flooded');
    await expect(page.getByRole('alert')).toContainText('messages that took the console more than 200 ms to read');
    await expect.poll(() => page.frames().some((f) => f.url().includes('/console/certificates-list.html'))).toBe(false);
    await page.getByRole('alert').getByRole('link', { name: 'Try again' }).click();
    await frameReady(page, 'certificates-list.html');
  });

  test('a theme toggle reaches the open plugin page', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    const body = page.frameLocator('[data-plugin-frame] iframe').locator('body');
    await expect(body).toHaveClass(/\blight\b/);
    await page.getByRole('button', { name: 'Switch to dark theme' }).click();
    await expect(body).toHaveClass(/\bdark\b/);
    await page.getByRole('button', { name: 'Switch to light theme' }).click();
    await expect(body).toHaveClass(/\blight\b/);
  });

  test('the host takes messages only from its frame, and only valid ones', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    const url = page.url();
    // The console's own window, and a frame of another origin, cannot drive it.
    await page.evaluate(() => window.postMessage({ type: 'plugin:navigate', name: 'spoofed' }, '*'));
    await page.evaluate(() => {
      const f = document.createElement('iframe');
      f.srcdoc = "<script>parent.postMessage({type:'plugin:navigate',name:'from-srcdoc'},'*')</script>";
      document.body.append(f);
    });
    // The plugin's own frame cannot navigate to a path of its choosing.
    const list = pluginFrame(page, 'certificates-list.html');
    await list.evaluate(() => {
      parent.postMessage({ type: 'plugin:navigate', name: '../../../clusters' }, '*');
      parent.postMessage({ type: 'plugin:navigate', name: 'ok', namespace: '../x' }, '*');
      parent.postMessage({ type: 'plugin:resize', height: 1e9 }, '*');
      parent.postMessage({ type: 'plugin:navigate-back' }, '*'); // already the list
    });
    await page.waitForTimeout(500);
    expect(page.url()).toBe(url);
    const height = await page.locator('[data-plugin-frame] iframe').evaluate((f) => f.getBoundingClientRect().height);
    expect(height).toBeLessThanOrEqual(20_000);
    // A valid message from the frame works.
    await list.evaluate(() => parent.postMessage({ type: 'plugin:navigate', name: 'api-tls', namespace: 'prod' }, '*'));
    await expect(page).toHaveURL(`${CERTS}/api-tls?ns=prod`);
    await frameReady(page, 'certificates-detail.html');
    await pluginFrame(page, 'certificates-detail.html').evaluate(() => parent.postMessage({ type: 'plugin:navigate-back' }, '*'));
    await expect(page).toHaveURL(CERTS);
    // cert-manager ships no create page: plugin:create opens the generated form.
    await frameReady(page, 'certificates-list.html');
    await pluginFrame(page, 'certificates-list.html').evaluate(() => parent.postMessage({ type: 'plugin:create' }, '*'));
    await expect(page).toHaveURL(`${CERTS}/create`);
    await expect(page.locator('form [name="metadata.name"]')).toBeVisible();
  });

  test('a page that never sends plugin:ready gets a clear error naming the plugin and the page', async ({ page }) => {
    // The frame's first request carries its ticket (Playwright routes do not see redirects).
    await page.route('**/console/issuers-list.html?*', (route) =>
      route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>x</title><p>No SDK here.</p>' }),
    );
    await signIn(page, 'alice@acme-corp.com', '/projects/webshop/plugin-resources/acme-corp--cert-manager/issuers.cert-manager.io');
    const frame = page.locator('[data-plugin-frame]');
    await expect(frame).toHaveAttribute('data-state', 'loading');
    await expect(frame).toHaveAttribute('data-state', 'error', { timeout: 8_000 });
    await expect(page.getByRole('alert')).toContainText(
      'The Cert Manager page issuers-list.html did not load: it sent no plugin:ready within 5 seconds.',
    );
  });

  test('plugin pages are server-rendered with the sidebar and breadcrumbs', async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', '/');
    const response = await page.request.get(`${CERTS}/web-tls-cert?ns=default`);
    expect(response.status()).toBe(200);
    const html = await response.text();
    expect(html).toContain('data-plugin="acme-corp--cert-manager"');
    expect(html).toContain('aria-label="Breadcrumb"');
    expect(html).not.toContain('localhost:8082/clusters'); // the frame loads after hydration
    for (const missing of ['/plugin-resources/acme-corp--nope/certificates.cert-manager.io', '/plugin-resources/acme-corp--cert-manager/secrets.core.io']) {
      expect((await page.request.get(missing)).status(), missing).toBe(404);
    }
    await page.goto('/plugin-resources/acme-corp--cert-manager/clusterissuers.cert-manager.io');
    await hydrated(page);
    await frameReady(page);
    await expect(page.getByRole('navigation', { name: 'Sidebar' }).getByRole('link', { name: 'Cluster issuers' })).toHaveAttribute(
      'aria-current',
      'page',
    );
  });
});
