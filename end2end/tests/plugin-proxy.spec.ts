// plugin-proxy as `fundament dev` runs it: each installation's pages on an
// origin of their own, opened with a single-use frame ticket (black box), a
// real plugin page in a host page that plays the console, and the plugin CSP
// blocking an inline script in Chromium.
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '@playwright/test';
import { chromiumArgs, fullChromium } from '../chromium';
import { CONSOLE, PROD, frameCookie, frameTicket, originOf, pluginToken, send, userToken } from './origins';

const INSTALLATION = 'acme-corp--cert-manager';
const ORIGIN = originOf(INSTALLATION);
const PAGE = `/clusters/${PROD}/plugins/${INSTALLATION}/v1.17.2/console/certificates-list.html`;
const page = (version: string, file: string) => `/clusters/${PROD}/plugins/${INSTALLATION}/${version}/console/${file}`;

// The host page below is fulfilled by Playwright, so Chromium cannot tell it
// was served from loopback and its Local Network Access checks would block the
// iframe's request to localhost:8082. The real console, served from localhost,
// is not subject to that: switch the check off for these tests only.
test.use({ launchOptions: { executablePath: fullChromium, args: [...chromiumArgs, '--disable-features=LocalNetworkAccessChecks'] } });

test('the asset route: a ticket once, then the cookie of that origin; headers, versions, methods, traversal', async () => {
  const ticket = await frameTicket(userToken('alice@acme-corp.com'), INSTALLATION);
  const exchange = await send(`${ORIGIN}${PAGE}?fundament-ticket=${ticket}`);
  expect(exchange.status).toBe(303);
  expect(exchange.headers.location).toBe(PAGE);
  expect((await send(`${ORIGIN}${PAGE}?fundament-ticket=${ticket}`)).status, 'a ticket works once').toBe(404);
  const cookie = { Cookie: [exchange.headers['set-cookie'] ?? []].flat()[0].split(';')[0] };
  const ok = await send(`${ORIGIN}${PAGE}`, { headers: cookie });
  expect(ok.status).toBe(200);
  const h = ok.headers;
  expect(h['content-type']).toMatch(/^text\/html/);
  expect(h['cache-control']).toContain('private');
  expect(h['cache-control']).toContain('immutable');
  expect(h['x-content-type-options']).toBe('nosniff');
  for (const d of ["default-src 'self'", "script-src 'self'", "connect-src 'self' http://localhost:8081", "form-action 'self'",
                   "worker-src 'self'", 'frame-ancestors http://localhost:3000', "base-uri 'none'", "object-src 'none'"]) {
    expect(h['content-security-policy']).toContain(d);
  }
  expect(h['content-security-policy']).not.toContain('unsafe-inline');
  expect(ok.body).toContain('certificates-list.js');

  expect((await send(`${ORIGIN}${page('v9.9.9', 'certificates-list.html')}`, { headers: cookie })).status).toBe(404);
  expect((await send(`${ORIGIN}${page('v1.17.2', 'missing.html')}`, { headers: cookie })).status).toBe(404);
  expect((await send(`${ORIGIN}${PAGE}`)).status).toBe(404);
  // The console's own session cookie is nothing here (and a browser never sends it to this origin).
  const session = { Cookie: `__Host-fundament_auth=${userToken('alice@acme-corp.com')}` };
  expect((await send(`${ORIGIN}${PAGE}`, { headers: session })).status).toBe(404);
  // Never on plugin-proxy's own host, nor on another installation's origin, nor on a foreign host.
  expect((await send(`http://localhost:8082${PAGE}`, { headers: cookie })).status).toBe(404);
  expect((await send(`${originOf('acme-corp--demo')}${PAGE}`, { headers: cookie })).status).toBe(404);
  expect((await send(`http://rebound.example:8082${PAGE}`, { headers: cookie })).status).toBe(404);
  expect((await send(`${ORIGIN}${PAGE}`, { method: 'POST', headers: cookie })).status).toBe(405);
  for (const bad of ['../../../etc/passwd', '%2e%2e/%2e%2e/etc/passwd', '']) {
    const r = await send(`${ORIGIN}${page('v1.17.2', bad)}`, { headers: cookie });
    expect(r.status, bad).toBeGreaterThanOrEqual(300);
    expect(r.status, bad).toBeLessThan(500);
  }
  // The SDK as served is the minified file (plugin-sdk/minify.mjs), on plugin-proxy and on the console.
  const minified = fs.readFileSync(path.join(__dirname, '../../plugin-sdk/plugin-sdk.min.js'), 'utf8');
  for (const url of ['http://localhost:8082/plugins/sdk/v1/plugin-sdk.js', `${ORIGIN}/plugins/sdk/v1/plugin-sdk.js`,
                     `${CONSOLE}/plugin-ui/plugin-sdk.js`]) {
    const sdk = await send(url);
    expect(sdk.status, url).toBe(200);
    expect(sdk.headers['content-type']).toMatch(/javascript/);
    expect(sdk.body, url).toBe(minified);
  }
});

test('a cert-manager page in a host that plays the console lists the certificates', async ({ page: browser }) => {
  const pluginTokenValue = pluginToken('alice@acme-corp.com', INSTALLATION);
  const ticket = await frameTicket(userToken('alice@acme-corp.com'), INSTALLATION);
  const src = `${ORIGIN}${PAGE}?fundament-ticket=${ticket}`;
  // The host page lives on the console's origin (frame-ancestors allows only it).
  await browser.route(`${CONSOLE}/__plugin-host`, (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><html><body>
        <iframe id="plugin" title="Certificates" sandbox="allow-scripts allow-same-origin allow-forms" src="${src}" style="width:900px;height:600px"></iframe>
        <script>
          window.received = [];
          window.addEventListener('message', (e) => {
            const frame = document.getElementById('plugin');
            if (e.source !== frame.contentWindow || e.origin !== '${ORIGIN}') return;
            window.received.push(e.data);
            if (e.data && e.data.type === 'plugin:ready') {
              frame.contentWindow.postMessage({
                type: 'fundament:init', protocolVersion: 1, theme: 'light', pluginName: '${INSTALLATION}',
                crdKind: 'Certificate', view: 'list', kubeApiProxyUrl: 'http://localhost:8081', clusterId: '${PROD}',
                token: '${pluginTokenValue}', tokenExpiresAt: Math.floor(Date.now() / 1000) + 900,
              }, '${ORIGIN}');
            }
          });
        </script></body></html>`,
    }),
  );
  await browser.goto(`${CONSOLE}/__plugin-host`);
  const frame = browser.frameLocator('#plugin');
  for (const name of ['web-tls-cert', 'api-tls', 'internal-cert']) {
    await expect(frame.getByRole('link', { name, exact: true })).toBeVisible();
  }
  const types = await browser.evaluate(() => (window as unknown as { received: { type: string }[] }).received.map((m) => m.type));
  expect(types).toContain('plugin:ready');
});

test('the plugin CSP blocks an inline script', async ({ page: browser }) => {
  // The policy exactly as plugin-proxy sends it, on a page that carries an inline script.
  const cookie = await frameCookie('alice@acme-corp.com', INSTALLATION, PAGE);
  const real = await send(`${ORIGIN}${PAGE}`, { headers: { Cookie: cookie } });
  const csp = real.headers['content-security-policy'] as string;
  expect(csp).toBeTruthy();
  const probe = `${ORIGIN}${page('v1.17.2', 'inline-probe.html')}`;
  await browser.route(probe, (route) =>
    route.fulfill({
      contentType: 'text/html',
      headers: { 'content-security-policy': csp },
      body: '<!doctype html><html><body><p id="p">probe</p><script>document.title = "inline ran";</script></body></html>',
    }),
  );
  const violations: string[] = [];
  browser.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/.test(m.text())) violations.push(m.text());
  });
  await browser.goto(probe);
  await expect(browser.locator('#p')).toHaveText('probe');
  expect(await browser.title()).not.toBe('inline ran');
  await expect.poll(() => violations.length).toBeGreaterThan(0);
  expect(violations[0]).toContain("script-src 'self'");
});
