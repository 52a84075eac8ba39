// The hostile example plugin (end2end/hostile-plugin, installed by the config's
// `fundament dev --plugin end2end/hostile-plugin` as acme-corp--hostile) attacks
// the console, the gateway, authn, plugin-proxy and the other plugins from its
// own pages. The page records each attack with what it saw (`refused` computed
// from an exception, a status, a null, an opaque answer or a CSP violation);
// this spec checks that every one was refused, brings what the page cannot get
// by itself (bob's and cert-manager's tokens), and checks from outside what the
// page cannot see: side effects on the server, the console's URL and session.
import { test, expect, chromium, request as playwrightRequest, type Page, type Frame, type APIRequestContext } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { frameReady, hydrated, pluginFrame, signIn, userMenu } from './fixtures';
import { AUTHN, CONSOLE, GATEWAY, PROD, originOf, pluginToken, root, send, userToken } from './origins';
import { chromiumArgs, fullChromium } from '../chromium';

// Every attack here is refused in the browser users run, not only in the headless shell the other
// suites use (end2end/chromium.ts).
test.use({ launchOptions: { executablePath: fullChromium, args: chromiumArgs } });

const INSTALLATION = 'acme-corp--hostile';
const HOSTILE_ORIGIN = originOf(INSTALLATION);
const LOOTS = `/plugin-resources/${INSTALLATION}/loots.hostile.example.io`;
const CERTS = '/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';
/** metadata.version of a plugin folder's definition.yaml. */
const versionOf = (dir: string) => {
  const m = /^metadata:\n(?:  .*\n)*?  version: (\S+)$/m.exec(fs.readFileSync(path.join(root, dir, 'definition.yaml'), 'utf8'));
  if (!m) throw new Error(`no metadata.version in ${dir}/definition.yaml`);
  return m[1];
};
const HOSTILE_VERSION = versionOf('end2end/hostile-plugin');
/** The definition's displayName: markup that would close the page's <title> and redirect. */
const DISPLAY_NAME = 'Hostile</title><meta http-equiv="refresh" content="0;url=/sign-in?error=title-injection">';
const CERT_MANAGER_VERSION = versionOf('plugins/cert-manager');
const STEAL = `/api/v1/namespaces/plugin-${INSTALLATION}/services/http:plugin-${INSTALLATION}:8080/proxy/console/steal.html`;

/** Every attack the list page runs, and the ones the spec drives through it. */
const PAGE_ATTACKS = [
  'cookie-read',
  'other-plugin-storage',
  'gateway-cookie-cors',
  'gateway-cookie-no-cors',
  'gateway-subresource',
  'gateway-websocket',
  'authn-cors',
  'authn-no-cors',
  'dev-sign-in',
  'dev-fault-switch',
  'plugin-proxy-other-installation',
  'console-cluster-route',
  'frame-the-console',
  'gateway-navigation',
  'token-outside-allowed-resources',
  'token-watch-not-allowed',
  'token-verb-not-allowed',
  'token-post-named',
  'token-other-cluster',
  'token-at-authn',
  'token-as-user',
  'token-service-proxy',
  'token-encoded-path',
  'token-impersonate',
  'service-worker-scope',
  'parent-dom',
  'popup',
  'spoofed-messages',
  'resize-clamp',
  'refresh-flood',
  'console-form-post',
  'top-navigation',
];
const DRIVEN_ATTACKS = ['cookie-planted', 'token-from-other-origin', 'user-token-in-frame'];

type Outcome = { id: string; attack: string; refused: boolean; detail: string; status?: number | null; [k: string]: unknown };

/**
 * Waits until the hostile list page has run every attack, or the console has left the page
 * (an attack that moved it), or the frame is gone. Returns what happened.
 */
async function attacksDone(page: Page, url: string): Promise<string> {
  let outcome = '';
  await expect
    .poll(
      async () => {
        if (page.url() !== url) return (outcome = `the console moved to ${page.url()}`);
        const frame = page.frames().find((f) => f.url().includes('/console/loots-list.html'));
        if (!frame) return (outcome = `the hostile frame is gone: ${page.frames().map((f) => f.url()).join(', ')}`);
        const done = await frame.evaluate(() => document.body?.dataset.done ?? null).catch(() => null);
        return (outcome = done === 'true' ? 'done' : '');
      },
      { timeout: 60_000, message: 'the hostile page did not finish its attacks' },
    )
    .not.toBe('');
  return outcome;
}

async function outcomes(frame: Frame): Promise<Outcome[]> {
  return JSON.parse((await frame.locator('#results').textContent()) ?? '[]');
}

/** The console still shows alice, and its server still takes her session. */
async function stillAlice(page: Page, where = '/') {
  await page.goto(where);
  await hydrated(page);
  await expect(userMenu(page, 'Alice')).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Sidebar' })).toBeVisible();
  const session = await page.context().cookies(CONSOLE);
  expect(session.filter((c) => c.name === '__Host-fundament_auth'), 'exactly one session cookie').toHaveLength(1);
}

async function gatewayGet(api: APIRequestContext, token: string, p: string) {
  return api.get(`${GATEWAY}/clusters/${PROD}${p}`, { headers: { Authorization: `Bearer ${token}` } });
}

test.describe('a hostile plugin page', () => {
  test('every attack from the plugin page is refused, and alice stays signed in', async ({ page, context }) => {
    test.setTimeout(150_000);
    const popups: string[] = [];
    context.on('page', (p) => popups.push(p.url()));

    // cert-manager's page stores secrets of its own first: the hostile page looks for them. A
    // partitioned cookie always works in a frame; storage where the browser allows it there.
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);
    const planted = await pluginFrame(page, 'certificates-list.html').evaluate(async () => {
      document.cookie = 'secret=cert-manager; Path=/; Secure; SameSite=None; Partitioned';
      const stored: Record<string, string> = { cookie: String(document.cookie.includes('secret=cert-manager')) };
      const store = async (what: string, write: () => unknown) => {
        try {
          await write();
          stored[what] = 'true';
        } catch (err) {
          stored[what] = `denied (${(err as Error).name})`;
        }
      };
      await store('localStorage', () => localStorage.setItem('secret', 'cert-manager'));
      await store('sessionStorage', () => sessionStorage.setItem('secret', 'cert-manager'));
      await store('IndexedDB', () => new Promise((resolve, reject) => {
        const open = indexedDB.open('cert-manager-db');
        open.onsuccess = () => { open.result.close(); resolve(null); };
        open.onerror = () => reject(open.error);
      }));
      await store('CacheStorage', () => caches.open('cert-manager-cache'));
      return stored;
    });
    expect(planted.cookie, "cert-manager's frame stored its cookie").toBe('true');
    test.info().annotations.push({ type: "cert-manager's secrets", description: JSON.stringify(planted) });

    // Mints and tickets from the moment the hostile page mounts.
    const mints: string[] = [];
    const tickets: string[] = [];
    page.on('request', (r) => {
      const p = new URL(r.url()).pathname;
      if (r.method() === 'POST' && p === '/api/plugin-token') mints.push(r.url());
      if (r.method() === 'POST' && p === '/api/frame-ticket') tickets.push(r.url());
    });
    await page.goto(LOOTS);
    await hydrated(page);
    await frameReady(page);
    const url = page.url();
    expect(await attacksDone(page, url)).toBe('done');
    const frame = pluginFrame(page, 'loots-list.html');
    // The page's own channel works, so its refusals mean something.
    const controls: { name: string; ok: boolean; detail: string }[] = JSON.parse((await frame.locator('#controls').textContent()) ?? '[]');
    expect(controls.length).toBe(3);
    expect.soft(controls.filter((c) => !c.ok), "the page's own calls through the gateway (controls)").toEqual([]);
    expect(new URL(frame.url()).origin).toBe(HOSTILE_ORIGIN);

    // The attacks the spec brings material for.
    const bob = userToken('bob@acme-corp.com');
    const certToken = pluginToken('alice@acme-corp.com', 'acme-corp--cert-manager');
    const alice = userToken('alice@acme-corp.com');
    await frame.evaluate((t) => (window as any).hostile.plantCookies(t), bob);
    await frame.evaluate(([gw, c, t]) => (window as any).hostile.useForeignToken(gw, c, t), [GATEWAY, PROD, certToken]);
    await frame.evaluate(([gw, c, t]) => (window as any).hostile.useUserToken(gw, c, t), [GATEWAY, PROD, alice]);
    // The page's own PluginToken, for checks over HTTP below.
    const hostileToken: string = await frame.evaluate(() => (window as any).fundament.getToken());

    // The page attacks cert-manager's pinned version (a wrong one would be refused for nothing).
    expect(await frame.evaluate(() => (window as any).hostile.certManagerVersion)).toBe(CERT_MANAGER_VERSION);
    const results = await outcomes(frame);
    const outcomesFile = test.info().outputPath('outcomes.json');
    fs.writeFileSync(outcomesFile, JSON.stringify({ results, controls }, null, 1));
    await test.info().attach('outcomes', { path: outcomesFile, contentType: 'application/json' });
    const ids = new Set(results.map((r) => r.id));
    for (const id of [...PAGE_ATTACKS, ...DRIVEN_ATTACKS]) expect.soft(ids.has(id), `attack ${id} was run`).toBe(true);
    expect.soft(results.filter((r) => r.id === 'page-error'), 'no attack crashed').toEqual([]);
    const through = results.filter((r) => !r.refused);
    expect.soft(through, `attacks that were not refused:\n${through.map((r) => `  ${r.id}: ${r.attack} → ${r.detail}`).join('\n')}`).toEqual([]);
    // The PluginToken attacks must be refused by the gateway (an HTTP answer), not by a broken channel.
    const status = (id: string) => results.filter((r) => r.id === id).map((r) => r.status);
    for (const s of status('token-watch-not-allowed')) expect.soft(s, 'a watch outside allowedResources').toBe(403);
    for (const id of ['token-as-user', 'token-encoded-path', 'token-service-proxy']) {
      for (const s of status(id)) expect.soft(typeof s === 'number' && s >= 400 && s < 500, `${id}: the gateway answered (status ${s})`).toBe(true);
    }
    expect.soft(status('token-service-proxy'), 'the service proxy of its own runtime').toEqual([403]);
    expect.soft(status('token-post-named'), 'POST to a named object').toEqual([405]);
    expect.soft(status('token-other-cluster'), 'the token on another cluster').toEqual([403]);
    expect.soft(status('token-from-other-origin'), "cert-manager's token from the hostile origin").toEqual([403]);
    expect.soft(status('user-token-in-frame'), 'a UserToken from a plugin origin').toEqual([403]);
    expect(results.length).toBeGreaterThanOrEqual(25);

    // The console did not move, and the frame is no taller than the clamp, even when asked again.
    expect.soft(page.url(), 'the console URL').toBe(url);
    await frame.evaluate(() => window.parent.postMessage({ type: 'plugin:resize', height: 1e9 }, (window as any).fundament.parentOrigin));
    await page.waitForTimeout(500);
    const height = await page.locator('[data-plugin-frame] iframe').evaluate((f) => f.getBoundingClientRect().height);
    expect.soft(height, 'frame height').toBeLessThanOrEqual(20_000);
    expect.soft(popups, 'popups opened').toEqual([]);
    // 200 refresh requests (and the spoofed ones): at most three mints after the first.
    expect.soft(tickets.length, 'frame tickets').toBe(1);
    expect.soft(mints.length, `PluginToken mints after the first: ${mints.length - 1}`).toBeLessThanOrEqual(4);
    test.info().annotations.push({ type: 'mints', description: `${mints.length} PluginToken mints, ${tickets.length} frame tickets` });

    // Side effects the page could not see, checked over HTTP with real tokens.
    const api = await playwrightRequest.newContext();
    for (const name of ['hostile-no-cors', 'hostile-form']) {
      expect.soft((await gatewayGet(api, alice, `/api/v1/namespaces/default/configmaps/${name}`)).status(), `ConfigMap ${name}`).toBe(404);
    }
    const loots = `/apis/hostile.example.io/v1/namespaces/default/loots`;
    expect.soft((await gatewayGet(api, alice, `${loots}/hostile-created`)).status(), 'Loot hostile-created').toBe(404);
    const treasure = await gatewayGet(api, alice, `${loots}/treasure`);
    expect(treasure.status(), 'the control: alice reads loots').toBe(200);
    expect.soft((await treasure.json()).spec.value, 'treasure not patched').toBe(1000);
    expect.soft((await gatewayGet(api, alice, `${loots}/trinket`)).status(), 'trinket not deleted').toBe(200);
    const fault = await api.get(`${AUTHN}/dev/faults/mint-plugin-token`);
    expect.soft(await fault.json(), 'the mint fault switch').toEqual({ fail: false });
    // The page's PluginToken is no credential at authn (asked for its own installation, so that
    // only the caller can be wrong; alice's UserToken, the control, may ask the same).
    const installationId = JSON.parse(Buffer.from(hostileToken.split('.')[1], 'base64url').toString()).installation_id;
    const mint = { clusterId: PROD, installationId };
    for (const [procedure, data] of [['authn.v1.TokenService/MintPluginToken', mint], ['authn.v1.TokenService/MintFrameTicket', mint], ['authn.v1.AuthnService/GetUserInfo', {}]] as const) {
      const as = async (t: string) =>
        (await api.post(`${AUTHN}/${procedure}`, { headers: { Authorization: `Bearer ${t}`, 'Content-Type': 'application/json' }, data })).status();
      expect.soft(await as(hostileToken), `the PluginToken at authn ${procedure}`).toBe(401);
      expect(await as(alice), `the control: alice's UserToken at authn ${procedure}`).toBe(200);
    }
    // The controls: cert-manager's token works from no origin, and the page's token works for loots.
    const certs = await api.get(`${GATEWAY}/clusters/${PROD}/apis/cert-manager.io/v1/certificates`, { headers: { Authorization: `Bearer ${certToken}` } });
    expect(certs.status(), "the control: cert-manager's token outside a browser").toBe(200);
    expect((await gatewayGet(api, hostileToken, loots)).status(), "the control: the page's token lists loots").toBe(200);
    await api.dispose();

    // The single-use ticket: its URL is still in the console's DOM, and opens nothing again.
    const src = (await page.locator('[data-plugin-frame] iframe').getAttribute('src')) ?? '';
    expect(src).toContain('?fundament-ticket=');
    expect(src.startsWith(`${HOSTILE_ORIGIN}/clusters/${PROD}/plugins/${INSTALLATION}/`)).toBe(true);
    const replayed = await send(src);
    expect.soft(replayed.status, 'the ticket replayed over HTTP').toBe(404);
    expect.soft(replayed.headers['set-cookie'], 'no frame cookie for a replayed ticket').toBeUndefined();
    const fresh = await page.context().browser()!.newContext();
    try {
      const replay = await fresh.newPage();
      const response = await replay.goto(src);
      expect.soft(response?.status(), 'the ticket replayed in a fresh browser').toBe(404);
      expect.soft(await fresh.cookies(HOSTILE_ORIGIN), 'no frame cookie in the fresh browser').toEqual([]);
    } finally {
      await fresh.close();
    }

    // Signed in as alice still (not signed out, not bob), also on the path the planted cookies name.
    await stillAlice(page, '/');
    await stillAlice(page, '/projects/webshop');
    await expect(userMenu(page, 'Bob')).toHaveCount(0);
  });

  test("the control: the real frame's valid messages do move the console, and its detail page works", async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', LOOTS);
    await frameReady(page);
    expect(await attacksDone(page, page.url())).toBe('done');
    const list = pluginFrame(page, 'loots-list.html');
    // A valid height is taken as it is (so the spoofed 4321 px would have shown) … Posted again
    // on each poll: the SDK's own resize observer may post the content's height in between
    // while the page still lays out, and the latest message wins.
    await expect.poll(async () => {
      await list.evaluate(() => window.parent.postMessage({ type: 'plugin:resize', height: 4321 }, (window as any).fundament.parentOrigin));
      return page.locator('[data-plugin-frame] iframe').evaluate((f) => Math.round(f.getBoundingClientRect().height));
    }).toBe(4321);
    // … and a valid plugin:navigate from the frame itself opens the detail view (the spoofed one did not).
    await list.evaluate(() => window.parent.postMessage({ type: 'plugin:navigate', name: 'treasure', namespace: 'default' }, (window as any).fundament.parentOrigin));
    await expect(page).toHaveURL(`${CONSOLE}${LOOTS}/treasure?ns=default`);
    await frameReady(page);
    const detail = page.frameLocator('[data-plugin-frame] iframe');
    await expect(detail.locator('body')).toHaveAttribute('data-done', 'true');
    await expect(detail.getByRole('heading', { name: 'Loot · treasure' })).toBeVisible();
    await expect(detail.locator('#object')).toContainText('"value": 1000');
    await expect(detail.locator('#results')).toHaveText('[]');
  });

  test("the definition's names stay text: its display name cannot close the page's <title>", async ({ page }) => {
    await signIn(page, 'alice@acme-corp.com', '/');
    // A full load of one of its pages: the server writes the title into the document's head.
    const response = await page.goto(LOOTS);
    const html = await response!.text();
    const title = /<title>([\s\S]*?)<\/title>/.exec(html)?.[1] ?? '';
    expect(title, 'escaped in the title').toContain('Hostile&lt;/title&gt;&lt;meta http-equiv=&quot;refresh&quot;');
    expect(html).not.toContain('<meta http-equiv="refresh"');
    await hydrated(page);
    expect(await page.locator('meta[http-equiv]').count(), "no meta element of the plugin's").toBe(0);
    expect(await page.title(), 'the name is text in the title').toContain(DISPLAY_NAME);
    await page.waitForTimeout(1_500); // a refresh after 0 s would have left by now
    await expect(page).toHaveURL(`${CONSOLE}${LOOTS}`);
  });

  test('the plugin frame navigating itself to the gateway never loads it', async ({ page }) => {
    await page.addInitScript(() => {
      if (window.top !== window) return;
      const w = window as unknown as { __violations: { directive: string; blocked: string }[] };
      w.__violations = [];
      document.addEventListener('securitypolicyviolation', (e) =>
        w.__violations.push({ directive: e.effectiveDirective, blocked: e.blockedURI }),
      );
    });
    const toGateway: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(GATEWAY) && r.isNavigationRequest()) toGateway.push(r.url());
    });
    const messages: string[] = [];
    page.on('console', (m) => messages.push(m.text()));
    const secrets = `${GATEWAY}/clusters/${PROD}/api/v1/namespaces/default/secrets`;
    await signIn(page, 'alice@acme-corp.com', '/');
    for (const how of ['location.href', 'form GET target=_self'] as const) {
      // The detail page: a plugin page like the list, which runs no attacks of its own to wait for.
      await page.goto(`${LOOTS}/treasure?ns=default`);
      await frameReady(page, 'loots-detail.html');
      const url = page.url();
      await expect(pluginFrame(page, 'loots-detail.html').getByRole('heading', { name: 'Loot · treasure' })).toBeVisible();
      await page.evaluate(() => ((window as any).__violations = []));
      messages.length = 0;
      await pluginFrame(page, 'loots-detail.html').evaluate(
        ([to, how]) => {
          if (how === 'location.href') {
            location.href = to;
            return;
          }
          const form = document.createElement('form');
          form.action = to;
          form.method = 'GET';
          document.body.append(form);
          form.submit();
        },
        [secrets, how],
      );
      // The frame leaves its page (Chromium shows an error page where CSP blocked a navigation) …
      await expect.poll(() => page.frames().some((f) => f.url().includes('/console/loots-detail.html')), { message: how }).toBe(false);
      // … but never for the gateway: the console's frame-src (a navigation of the frame) or the
      // page's form-action (a form of the page) stopped it before any request.
      for (const f of page.frames()) expect.soft(f.url().startsWith(GATEWAY), `${how}: a frame at ${f.url()}`).toBe(false);
      if (how === 'location.href') {
        const violations: { directive: string; blocked: string }[] = await page.evaluate(() => (window as any).__violations);
        expect.soft(violations.filter((v) => v.directive === 'frame-src' && v.blocked.startsWith(GATEWAY)), `${how}: the console's frame-src`).not.toHaveLength(0);
      } else {
        expect.soft(messages.filter((m) => m.includes("form-action 'self'") && m.includes(GATEWAY)), `${how}: the page's form-action`).not.toHaveLength(0);
      }
      expect.soft(page.url(), how).toBe(url);
    }
    expect(toGateway, 'navigation requests that reached the gateway').toEqual([]);
    await stillAlice(page);
  });

  test("the plugin's own page at top level on the gateway's and the console's origin runs nothing", async ({ page, context }) => {
    await signIn(page, 'alice@acme-corp.com', '/');
    const api = await playwrightRequest.newContext();
    const alice = userToken('alice@acme-corp.com');

    // The file is there: through plugin-proxy's own path it is served (the control).
    const viaRuntime = await gatewayGet(api, alice, STEAL);
    // An admin's bearer token reaches it through the service proxy, but never as a runnable document.
    if (viaRuntime.status() === 200) {
      expect(viaRuntime.headers()['content-security-policy']).toContain('sandbox');
      expect(viaRuntime.headers()['set-cookie']).toBeUndefined();
    }
    expect((await gatewayGet(api, pluginToken('alice@acme-corp.com', INSTALLATION), STEAL)).status(), "the plugin's token on its own service proxy").toBe(403);
    await api.dispose();

    // console-cluster-route from outside: only the console's own fetches pass, with its cookie.
    const route = `${CONSOLE}/kube/clusters/${PROD}/api/v1/namespaces`;
    const own = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' };
    const cookie = { cookie: `__Host-fundament_auth=${alice}` };
    expect((await send(route, { headers: { ...cookie, ...own } })).status, "the control: the console's own fetch").toBe(200);
    for (const [what, headers] of [
      ['from a plugin origin (cross-site)', { ...own, 'sec-fetch-site': 'cross-site' }],
      ['from a sibling (same-site)', { ...own, 'sec-fetch-site': 'same-site' }],
      ['as a no-cors request', { ...own, 'sec-fetch-mode': 'no-cors' }],
      ['as a frame', { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' }],
      ['without fetch metadata', {}],
    ] as const) {
      expect.soft((await send(route, { headers: { ...cookie, ...headers } })).status, `the /kube route ${what}`).toBe(403);
    }
    const proxied = await send(`${CONSOLE}/kube/clusters/${PROD}${STEAL}`, { headers: { ...cookie, ...own } });
    expect.soft(proxied.status, "the /kube route to a service proxy, even as the console's own fetch").toBe(403);
    expect.soft(proxied.body).not.toContain('steal.js');

    for (const [where, expected] of [
      [`${GATEWAY}/clusters/${PROD}${STEAL}`, 401],
      [`${CONSOLE}/kube/clusters/${PROD}${STEAL}`, 403],
    ] as const) {
      const top = await context.newPage();
      const ran = top.waitForRequest((r) => r.url().endsWith('/steal.js'), { timeout: 1_000 }).catch(() => null);
      const response = await top.goto(where);
      expect.soft(response?.status(), where).toBe(expected);
      expect.soft(await response?.text(), where).not.toContain('steal.js');
      expect.soft(await top.title(), `${where}: no script ran`).not.toBe('pwned');
      expect.soft(await top.evaluate(() => (window as any).__stealRan ?? false), where).toBe(false);
      expect.soft(await ran, `${where}: steal.js was not even fetched`).toBeNull();
      await top.close();
    }
    await stillAlice(page);
  });

  test("a frame ticket and a frame cookie open their own installation's pages only", async () => {
    const alice = userToken('alice@acme-corp.com');
    const api = await playwrightRequest.newContext();
    const hostileToken = pluginToken('alice@acme-corp.com', INSTALLATION);
    const installationId = JSON.parse(Buffer.from(hostileToken.split('.')[1], 'base64url').toString()).installation_id;
    const frameTicket = async (installation: string) => {
      const id = installation === INSTALLATION ? installationId : JSON.parse(Buffer.from(pluginToken('alice@acme-corp.com', installation).split('.')[1], 'base64url').toString()).installation_id;
      const minted = await api.post(`${AUTHN}/authn.v1.TokenService/MintFrameTicket`, {
        headers: { Authorization: `Bearer ${alice}` },
        data: { clusterId: PROD, installationId: id },
      });
      expect(minted.status()).toBe(200);
      return (await minted.json()).ticket as string;
    };
    const ticket = await frameTicket(INSTALLATION);
    const certTicket = await frameTicket('acme-corp--cert-manager');
    await api.dispose();
    const certOrigin = 'http://acme-corp--cert-manager.localhost:8082';
    const hostilePage = `/clusters/${PROD}/plugins/${INSTALLATION}/${HOSTILE_VERSION}/console/loots-list.html`;
    const certPage = `/clusters/${PROD}/plugins/acme-corp--cert-manager/${CERT_MANAGER_VERSION}/console/certificates-list.html`;
    const withTicket = (p: string) => `${p}?fundament-ticket=${encodeURIComponent(ticket)}`;

    // ticket-other-installation: the hostile installation's ticket on cert-manager's origin and path,
    // or on its own origin with cert-manager's path, opens nothing (and is not spent by it).
    for (const where of [`${certOrigin}${withTicket(certPage)}`, `${HOSTILE_ORIGIN}${withTicket(certPage)}`, `${certOrigin}${withTicket(hostilePage)}`]) {
      const r = await send(where);
      expect.soft(r.status, `ticket at ${where.replace(ticket, '<ticket>')}`).toBe(404);
      expect.soft(r.headers['set-cookie'], where.replace(ticket, '<ticket>')).toBeUndefined();
    }
    // The control: on its own origin and path it is exchanged for the frame cookie, once.
    const exchanged = await send(`${HOSTILE_ORIGIN}${withTicket(hostilePage)}`);
    expect(exchanged.status).toBe(303);
    expect(exchanged.headers.location).toBe(hostilePage);
    const setCookie = String(exchanged.headers['set-cookie'] ?? '');
    expect(setCookie).toMatch(new RegExp(`^__Host-fundament_frame-${PROD}=[^;]+;`));
    for (const attribute of ['Path=/', 'Secure', 'HttpOnly', 'SameSite=None', 'Partitioned']) expect(setCookie).toContain(attribute);
    expect(setCookie).not.toMatch(/domain=/i);
    expect((await send(`${HOSTILE_ORIGIN}${withTicket(hostilePage)}`)).status, 'the ticket a second time').toBe(404);

    // frame-cookie-other-installation: the hostile frame's cookie is a key to its own pages only.
    const cookie = { cookie: setCookie.split(';')[0] };
    expect((await send(`${HOSTILE_ORIGIN}${hostilePage}`, { headers: cookie })).status, 'the control: its own page').toBe(200);
    // The control for the other side: cert-manager's own ticket and cookie open cert-manager's page.
    const certExchange = await send(`${certOrigin}${certPage}?fundament-ticket=${encodeURIComponent(certTicket)}`);
    expect(certExchange.status, "the control: cert-manager's ticket").toBe(303);
    const certCookie = { cookie: String(certExchange.headers['set-cookie']).split(';')[0] };
    expect((await send(`${certOrigin}${certPage}`, { headers: certCookie })).status, "the control: cert-manager's page").toBe(200);
    expect.soft((await send(`${HOSTILE_ORIGIN}${hostilePage}`, { headers: certCookie })).status, "cert-manager's cookie on the hostile page").toBe(404);
    for (const where of [`${certOrigin}${certPage}`, `${HOSTILE_ORIGIN}${certPage}`, `${certOrigin}${hostilePage}`, `http://localhost:8082${hostilePage}`]) {
      expect.soft((await send(where, { headers: cookie })).status, `the hostile frame cookie at ${where}`).toBe(404);
    }
    // Two frame cookies (one planted next to the real one) are refused, not resolved to one.
    const doubled = { cookie: `${cookie.cookie}; __Host-fundament_frame-${PROD}=planted` };
    expect.soft((await send(`${HOSTILE_ORIGIN}${hostilePage}`, { headers: doubled })).status, 'two frame cookies').toBe(404);
  });

  test("in a regular browser profile, where frames have storage, a plugin never sees another plugin's", async ({}, testInfo) => {
    // Chromium 156 phases third-party cookies out by default and then denies third-party frames
    // all storage, which refuses the attack before per-installation origins are even tested. A
    // regular profile with third-party cookies allowed (as many users' browsers are) gives
    // frames their storage, partitioned by the console's site: the case origins must decide.
    const context = await chromium.launchPersistentContext(testInfo.outputPath('profile'), {
      executablePath: fullChromium,
      args: [...chromiumArgs, '--disable-features=TrackingProtection3pcd'],
      baseURL: CONSOLE,
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      await signIn(page, 'alice@acme-corp.com', CERTS);
      await frameReady(page);
      const stored = await pluginFrame(page, 'certificates-list.html').evaluate(async () => {
        localStorage.setItem('secret', 'cert-manager');
        await new Promise((resolve, reject) => {
          const open = indexedDB.open('cert-manager-db');
          open.onsuccess = () => { open.result.close(); resolve(null); };
          open.onerror = () => reject(open.error);
        });
        await (await caches.open('cert-manager-cache')).put('/secret', new Response('cert-manager'));
        return localStorage.getItem('secret');
      });
      expect(stored, 'the control: a frame keeps its own storage in this profile').toBe('cert-manager');
      await page.goto(LOOTS);
      await frameReady(page);
      const seen = await pluginFrame(page, 'loots-list.html').evaluate(async () => ({
        localStorage: localStorage.getItem('secret'),
        keys: Object.keys(localStorage),
        databases: (await indexedDB.databases()).map((d) => d.name),
        caches: await caches.keys(),
      }));
      expect(seen).toEqual({ localStorage: null, keys: [], databases: [], caches: [] });
      // And cert-manager's storage is still there for cert-manager.
      await page.goto(CERTS);
      await frameReady(page);
      expect(await pluginFrame(page, 'certificates-list.html').evaluate(() => localStorage.getItem('secret'))).toBe('cert-manager');
    } finally {
      await context.close();
    }
  });

  test('sign-in never sends alice off the console, and nothing may frame the console', async ({ page }) => {
    const csp = (await page.request.get('/sign-in')).headers()['content-security-policy'] ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self'");
    for (const next of ['/%09/example.org', '//example.org', '/%5Cexample.org', 'https://example.org/', 'javascript:alert(1)']) {
      await page.context().clearCookies();
      await page.goto(`/sign-in?next=${next}`);
      await hydrated(page);
      await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
      await expect(page.getByRole('navigation', { name: 'Sidebar' })).toBeVisible();
      expect.soft(page.url(), `next=${next}`).toBe(`${CONSOLE}/`);
    }
  });
});
