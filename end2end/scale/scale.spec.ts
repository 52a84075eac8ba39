// Scale-out without sticky state (scripts/scale-test starts the stack): every request goes
// through haproxy round-robin, which names the replica that answered in X-Fundament-Replica.
// The plugin page walk works with requests spread over both replicas of each service; the
// audit view's record is one for both gateways; a signing-key rotation while signed in needs
// no sign-out; a sign-out holds at every replica.
import { test, expect, type Page, type Response } from '@playwright/test';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { clickReplacingItsFrame, frameReady, signIn } from '../tests/fixtures';
import { GATEWAY } from '../tests/origins';

const dir = process.env.SCALE_DIR ?? '';
const PROD = '019b4000-2000-7000-8000-000000000001';
const CERTS = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';
// The replicas behind the balancer, as scripts/scale-test started them.
function replicas(name: string): string[] {
  const urls = (process.env[name] ?? '').split(' ').filter(Boolean);
  if (urls.length !== 2) throw new Error(`${name} names ${urls.length} replicas, not 2: run this suite with scripts/scale-test`);
  return urls;
}
const AUTHN = replicas('SCALE_AUTHNS');
const CONSOLES = replicas('SCALE_CONSOLES');
const GATEWAYS = replicas('SCALE_GATEWAYS');

/** Which replica answered each response, per service (by the port the browser used). */
function recordReplicas(page: Page) {
  const seen: Record<string, Set<string>> = { console: new Set(), 'kube-api-proxy': new Set(), 'plugin-proxy': new Set() };
  const failures: string[] = [];
  const record = async (r: Response) => {
    const replica = (await r.allHeaders().catch(() => ({}) as Record<string, string>))['x-fundament-replica'];
    if (!replica) return;
    const service = replica.replace(/-\d$/, '');
    seen[service]?.add(replica);
    if (r.status() >= 500) failures.push(`${r.status()} ${r.url()} from ${replica}`);
  };
  page.on('response', (r) => void record(r));
  return { seen, failures };
}

/** The walk: the list page in its frame, its data, a row to the detail page. */
async function walk(page: Page) {
  await page.goto(CERTS);
  await frameReady(page);
  const frame = page.frameLocator('[data-plugin-frame] iframe');
  await expect(frame.getByRole('link', { name: 'web-tls-cert' })).toBeVisible();
  clickReplacingItsFrame(frame.getByRole('link', { name: 'web-tls-cert' }));
  await expect(page).toHaveURL(`${CERTS}/web-tls-cert?ns=default`);
  await frameReady(page, 'certificates-detail.html');
  await expect(frame.getByText('web-tls', { exact: true }).first()).toBeVisible();
}

async function jwks(authn: string): Promise<string[]> {
  const res = await fetch(`${authn}/.well-known/jwks.json`);
  return ((await res.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
}

/** A fresh Ed25519 key as PKCS#8 PEM, as `openssl genpkey -algorithm ed25519` writes it. */
function newKeyPem(): string {
  return crypto.generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** What each console replica, gateway replica and authn replica says of this session. */
async function everywhere(token: string) {
  const consoleRoute = `/kube/clusters/${PROD}/apis/plugins.fundament.io/v1/plugininstallations`;
  const consoleHeaders = {
    cookie: `__Host-fundament_auth=${token}`,
    'sec-fetch-site': 'same-origin',
    'sec-fetch-mode': 'cors',
    'sec-fetch-dest': 'empty',
  };
  const codes: Record<string, number> = {};
  for (const [i, c] of CONSOLES.entries()) {
    codes[`console-${i + 1}`] = (await fetch(`${c}${consoleRoute}`, { headers: consoleHeaders })).status;
  }
  for (const [i, g] of GATEWAYS.entries()) {
    const res = await fetch(`${g}/clusters/${PROD}/api/v1/namespaces`, { headers: { authorization: `Bearer ${token}` } });
    codes[`kube-api-proxy-${i + 1}`] = res.status;
  }
  for (const [i, a] of AUTHN.entries()) {
    const res = await fetch(`${a}/authn.v1.AuthnService/GetUserInfo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    codes[`authn-${i + 1}`] = res.status;
  }
  return codes;
}

test('the plugin walk spreads over every replica, survives a key rotation, and sign-out holds everywhere', async ({ page, context }) => {
  expect(dir, 'run through scripts/scale-test').not.toBe('');
  const { seen, failures } = recordReplicas(page);
  // The plugin-path calls of the walks (a page's PluginToken to the gateway), by replica.
  const pluginCalls: Record<string, number> = {};
  page.on('response', async (r) => {
    if (!r.url().startsWith(`${GATEWAY}/clusters/`) || r.request().method() === 'OPTIONS') return;
    const replica = (await r.allHeaders().catch(() => ({}) as Record<string, string>))['x-fundament-replica'];
    if (replica) pluginCalls[replica] = (pluginCalls[replica] ?? 0) + 1;
  });
  await signIn(page, 'alice@acme-corp.com', CERTS);
  await walk(page);
  await walk(page);
  for (const service of ['console', 'kube-api-proxy', 'plugin-proxy']) {
    expect([...seen[service]].sort(), `${service} requests reached both replicas`).toEqual([`${service}-1`, `${service}-2`]);
  }

  const session = (await context.cookies()).find((c) => c.name === '__Host-fundament_auth')!.value;

  // The walk's calls were served by both gateways; each answers the audit view with all of
  // them (the record is in the shared Redis), not with the part it served.
  expect(Object.keys(pluginCalls).sort(), 'plugin calls reached both gateways').toEqual(['kube-api-proxy-1', 'kube-api-proxy-2']);
  const made = pluginCalls['kube-api-proxy-1'] + pluginCalls['kube-api-proxy-2'];
  const audited = async (gateway: string) => {
    const res = await fetch(`${gateway}/audit/v1/clusters/${PROD}/calls?limit=1000`, {
      headers: { authorization: `Bearer ${session}` },
    });
    expect(res.status, `the audit record at ${gateway}`).toBe(200);
    return ((await res.json()) as { items: { id: number }[] }).items.map((e) => e.id);
  };
  await expect
    .poll(async () => {
      const [one, two] = [await audited(GATEWAYS[0]), await audited(GATEWAYS[1])];
      return { all: one.length >= made, one, same: JSON.stringify(one) === JSON.stringify(two), two };
    }, { timeout: 5_000, message: `both gateways show the same calls, the walk's ${made} included` })
    .toMatchObject({ all: true, same: true });
  await page.goto('/audit');
  await expect(page.getByRole('table', { name: 'Plugin calls' }).locator('tbody tr[data-audit-id]').first()).toBeVisible();

  const oldKid = (await jwks(AUTHN[0]))[0];

  // Rotation, as an operator does it with the Secret: publish the next key, let verifiers
  // fetch it (their periodic refresh, 30 s), then make it the signing key.
  const keys = path.join(dir, 'keys');
  fs.writeFileSync(path.join(keys, 'next.pem'), newKeyPem());
  for (const authn of AUTHN) {
    await expect.poll(async () => (await jwks(authn)).length, { timeout: 10_000 }).toBe(2);
  }
  await page.waitForTimeout(31_000);
  fs.writeFileSync(path.join(keys, 'current'), 'next\n');
  let newKid = '';
  for (const authn of AUTHN) {
    await expect.poll(async () => (newKid = (await jwks(authn))[0]), { timeout: 10_000 }).not.toBe(oldKid);
  }
  expect((await jwks(AUTHN[1]))).toContain(oldKid);

  // Still signed in (the session's token is of the old key), and every new PluginToken and
  // frame ticket is of the new key: the walk works at every replica without signing out.
  const minted: string[] = [];
  page.on('request', (r) => {
    const auth = r.headers().authorization;
    if (auth?.startsWith('Bearer ') && r.url().startsWith(`${GATEWAY}/`)) minted.push(auth.slice(7));
  });
  await walk(page);
  await walk(page);
  const kids = new Set(minted.map((t) => JSON.parse(Buffer.from(t.split('.')[0], 'base64url').toString()).kid));
  expect([...kids], 'PluginTokens after the rotation are signed with the new key').toEqual([newKid]);
  await expect(page.getByRole('navigation', { name: 'Sidebar' })).toBeVisible();
  expect(failures, 'no 5xx anywhere').toEqual([]);

  // Sign-out at one replica is a sign-out at all of them.
  expect(await everywhere(session)).toEqual({
    'console-1': 200, 'console-2': 200, 'kube-api-proxy-1': 200, 'kube-api-proxy-2': 200, 'authn-1': 200, 'authn-2': 200,
  });
  await page.goto('/');
  await page.locator('summary').filter({ hasText: 'User menu:' }).click();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in to Fundament' })).toBeVisible();
  await expect.poll(() => everywhere(session), { timeout: 5_000 }).toEqual({
    'console-1': 401, 'console-2': 401, 'kube-api-proxy-1': 401, 'kube-api-proxy-2': 401, 'authn-1': 401, 'authn-2': 401,
  });

  // A new session, signed with the new key, works at once through every replica.
  await signIn(page, 'alice@acme-corp.com', CERTS);
  await walk(page);
  const fresh = (await context.cookies()).find((c) => c.name === '__Host-fundament_auth')!.value;
  expect(JSON.parse(Buffer.from(fresh.split('.')[0], 'base64url').toString()).kid).toBe(newKid);
  expect(await everywhere(fresh)).toEqual({
    'console-1': 200, 'console-2': 200, 'kube-api-proxy-1': 200, 'kube-api-proxy-2': 200, 'authn-1': 200, 'authn-2': 200,
  });
  expect(failures, 'no 5xx anywhere').toEqual([]);
});
