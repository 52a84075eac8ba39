// plugin-proxy as `fundament dev` runs it: the asset route's checks (black
// box), a real plugin page in a host page that plays the console, and the
// plugin CSP blocking an inline script in Chromium.
import { test, expect, request as playwrightRequest } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
const PLUGINS = 'http://localhost:8082';
const PROD = '019b4000-2000-7000-8000-000000000001';
const CERTS = `${PLUGINS}/clusters/${PROD}/plugins/acme-corp--cert-manager`;

function token(...args: string[]): string {
  return execFileSync(bin, ['token', ...args], { cwd: root, encoding: 'utf8' }).trim();
}

const alice = () => token('user', '--email', 'alice@acme-corp.com');

// The host page below is fulfilled by Playwright, so Chromium cannot tell it
// was served from loopback and its Local Network Access checks would block the
// iframe's request to localhost:8082. The real console, served from localhost,
// is not subject to that: switch the check off for these tests only.
test.use({
  launchOptions: {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-features=LocalNetworkAccessChecks',
    ],
  },
});

test('the asset route: headers, versions, methods, traversal, who may see', async () => {
  const api = await playwrightRequest.newContext();
  const cookie = { Cookie: `fundament_auth=${alice()}` };
  const ok = await api.get(`${CERTS}/v1.17.2/console/certificates-list.html`, { headers: cookie });
  expect(ok.status()).toBe(200);
  const h = ok.headers();
  expect(h['content-type']).toMatch(/^text\/html/);
  expect(h['cache-control']).toContain('private');
  expect(h['cache-control']).toContain('immutable');
  expect(h['x-content-type-options']).toBe('nosniff');
  for (const d of ["default-src 'self'", "script-src 'self'", 'frame-ancestors http://localhost:3000', "base-uri 'none'", "object-src 'none'"]) {
    expect(h['content-security-policy']).toContain(d);
  }
  expect(h['content-security-policy']).not.toContain('unsafe-inline');
  expect(await ok.text()).toContain('certificates-list.js');

  expect((await api.get(`${CERTS}/v9.9.9/console/certificates-list.html`, { headers: cookie })).status()).toBe(404);
  expect((await api.get(`${CERTS}/v1.17.2/console/missing.html`, { headers: cookie })).status()).toBe(404);
  expect((await api.get(`${CERTS}/v1.17.2/console/certificates-list.html`)).status()).toBe(404);
  const stranger = token('user', '--email', 'bob@acme-corp.com');
  expect((await api.get(`${PLUGINS}/clusters/019b4000-2000-7000-8000-000000000002/plugins/acme-corp--cert-manager/v1.17.2/console/certificates-list.html`,
    { headers: { Cookie: `fundament_auth=${stranger}` } })).status()).toBe(404);
  expect((await api.post(`${CERTS}/v1.17.2/console/certificates-list.html`, { headers: cookie })).status()).toBe(405);
  for (const bad of ['../../../etc/passwd', '%2e%2e/%2e%2e/etc/passwd', '']) {
    const r = await api.get(`${CERTS}/v1.17.2/console/${bad}`, { headers: cookie, maxRedirects: 0 });
    expect(r.status(), bad).toBeGreaterThanOrEqual(300);
    expect(r.status(), bad).toBeLessThan(500);
  }
  const sdk = await api.get(`${PLUGINS}/plugins/sdk/v1/plugin-sdk.js`);
  expect(sdk.status()).toBe(200);
  expect(sdk.headers()['content-type']).toMatch(/javascript/);
  await api.dispose();
});

test('a cert-manager page in a host that plays the console lists the certificates', async ({ page, context }) => {
  await context.addCookies([{ name: 'fundament_auth', value: alice(), domain: 'localhost', path: '/', httpOnly: true, sameSite: 'Strict' }]);
  const pluginToken = token('plugin', '--email', 'alice@acme-corp.com', '--cluster', PROD, '--installation', 'acme-corp--cert-manager');
  const src = `${CERTS}/v1.17.2/console/certificates-list.html`;
  // The host page lives on the console's origin (frame-ancestors allows only it).
  await page.route('http://localhost:3000/__plugin-host', (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><html><body>
        <iframe id="plugin" title="Certificates" sandbox="allow-scripts allow-same-origin allow-forms" src="${src}" style="width:900px;height:600px"></iframe>
        <script>
          window.received = [];
          window.addEventListener('message', (e) => {
            const frame = document.getElementById('plugin');
            if (e.source !== frame.contentWindow || e.origin !== '${PLUGINS}') return;
            window.received.push(e.data);
            if (e.data && e.data.type === 'plugin:ready') {
              frame.contentWindow.postMessage({
                type: 'fundament:init', protocolVersion: 1, theme: 'light', pluginName: 'acme-corp--cert-manager',
                crdKind: 'Certificate', view: 'list', kubeApiProxyUrl: 'http://localhost:8081', clusterId: '${PROD}',
                token: '${pluginToken}', tokenExpiresAt: Math.floor(Date.now() / 1000) + 900,
              }, '${PLUGINS}');
            }
          });
        </script></body></html>`,
    }),
  );
  await page.goto('http://localhost:3000/__plugin-host');
  const frame = page.frameLocator('#plugin');
  for (const name of ['web-tls-cert', 'api-tls', 'internal-cert']) {
    await expect(frame.getByRole('link', { name, exact: true })).toBeVisible();
  }
  const types = await page.evaluate(() => (window as unknown as { received: { type: string }[] }).received.map((m) => m.type));
  expect(types).toContain('plugin:ready');
});

test('the plugin CSP blocks an inline script', async ({ page, context }) => {
  const cookie = alice();
  await context.addCookies([{ name: 'fundament_auth', value: cookie, domain: 'localhost', path: '/', httpOnly: true, sameSite: 'Strict' }]);
  // The policy exactly as plugin-proxy sends it, on a page that carries an inline script.
  const api = await playwrightRequest.newContext();
  const real = await api.get(`${CERTS}/v1.17.2/console/certificates-list.html`, { headers: { Cookie: `fundament_auth=${cookie}` } });
  const csp = real.headers()['content-security-policy'];
  expect(csp).toBeTruthy();
  await api.dispose();
  const probe = `${CERTS}/v1.17.2/console/inline-probe.html`;
  await page.route(probe, (route) =>
    route.fulfill({
      contentType: 'text/html',
      headers: { 'content-security-policy': csp },
      body: '<!doctype html><html><body><p id="p">probe</p><script>document.title = "inline ran";</script></body></html>',
    }),
  );
  const violations: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/.test(m.text())) violations.push(m.text());
  });
  await page.goto(probe);
  await expect(page.locator('#p')).toHaveText('probe');
  expect(await page.title()).not.toBe('inline ran');
  await expect.poll(() => violations.length).toBeGreaterThan(0);
  expect(violations[0]).toContain("script-src 'self'");
});
