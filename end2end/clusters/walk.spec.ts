// The seed's "Verifying the integration end-to-end" walk on real clusters: in sandbox mode
// against a real kube-apiserver (playwright.sandbox.config.ts), and in real mode against
// both Shoots of a simulated Gardener (playwright.real.config.ts), each through its project. The frame and its CSP, plugin:ready → fundament:init, Bearer data calls,
// navigation to the detail view, an audit line per call, and the authorization spot-check
// the upstream's sandbox failed — a call the plugin's RBAC does not allow is refused by the
// cluster although the gateway's own (admin certificate) identity could read it. Then the
// generated views on the cluster's Table answers.
import { test, expect, type Frame } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { clickReplacingItsFrame, frameReady, messages, pluginFrame, recordMessages, signIn } from '../tests/fixtures';
import { CONSOLE, GATEWAY as KUBE_API_PROXY, originOf } from '../tests/origins';
import { auditLog, clusterKubeconfig, walkClusters, type WalkCluster } from './cluster';

const CERT_MANAGER_ORIGIN = originOf('acme-corp--cert-manager');
const SCOPE_ROLE = 'plugin-acme-corp--cert-manager-scope';

/** kubectl on a cluster behind the walk, as its admin. */
const kubectlOn = (c: WalkCluster) => (...args: string[]) =>
  execFileSync('kubectl', ['--kubeconfig', clusterKubeconfig(c.name), ...args], { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });

/** The gateway's audit lines about `cluster` since `since`. */
function auditLines(since: number, cluster: WalkCluster): Record<string, unknown>[] {
  if (!fs.existsSync(auditLog())) return [];
  return fs.readFileSync(auditLog(), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    .filter((l) => Date.parse(l.time) >= since - 1000 && l.cluster_id === cluster.id);
}


/** What the SDK in `frame` answers for a list of `resource`: 'allowed' or the SdkError. */
const sdkList = (frame: Frame, target: { group?: string; version: string; resource: string; namespace: string }) =>
  frame.evaluate(async (t) => {
    try {
      await (window as any).fundament.k8s.list(t);
      return 'allowed';
    } catch (err: any) {
      return `${err.name}:${err.code}:${err.status}`;
    }
  }, target);

for (const cluster of walkClusters()) test.describe(`the plugin walk in ${process.env.WALK_MODE} mode on ${cluster.name}`, () => {
  const PROD = cluster.id;
  const CERTS = `/projects/${cluster.project}/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io`;
  const DEMO = `/projects/${cluster.project}/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io`;
  const kubectl = kubectlOn(cluster);

  test("the seed's end-to-end walk, and the cluster refuses what the plugin's RBAC does not allow", async ({ page }) => {
    const started = Date.now();
    await recordMessages(page);
    const pageResponse = page.waitForResponse((r) => r.url().endsWith('/console/certificates-list.html'));
    const dataRequest = page.waitForRequest((r) => r.url().startsWith(`${KUBE_API_PROXY}/clusters/${PROD}/apis/cert-manager.io/`));
    await signIn(page, 'alice@acme-corp.com', CERTS);
    await frameReady(page);

    const iframe = page.locator('[data-plugin-frame] iframe');
    await expect(iframe).toHaveAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
    const src = new URL((await iframe.getAttribute('src'))!);
    expect(`${src.origin}${src.pathname}`).toBe(
      `${CERT_MANAGER_ORIGIN}/clusters/${PROD}/plugins/acme-corp--cert-manager/v1.17.2/console/certificates-list.html`,
    );
    const csp = (await (await pageResponse).allHeaders())['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`frame-ancestors ${CONSOLE}`);

    const list = pluginFrame(page, 'certificates-list.html');
    await expect.poll(async () => (await messages(page)).some((m) => m.type === 'plugin:ready')).toBe(true);
    expect((await messages(list)).find((m) => m.type === 'fundament:init')).toMatchObject({
      origin: CONSOLE, pluginName: 'acme-corp--cert-manager', view: 'list', clusterId: PROD, token: '<token>',
    });
    const headers = await (await dataRequest).allHeaders();
    expect(headers.authorization).toMatch(/^Bearer ey/);
    expect(headers.cookie).toBeUndefined();

    // The fixtures were installed into the real cluster: the page lists them from it.
    const frame = page.frameLocator('[data-plugin-frame] iframe');
    clickReplacingItsFrame(frame.getByRole('link', { name: 'web-tls-cert' }));
    await expect(page).toHaveURL(`${CERTS}/web-tls-cert?ns=default`);
    await frameReady(page, 'certificates-detail.html');
    const detail = pluginFrame(page, 'certificates-detail.html');
    expect((await messages(detail)).find((m) => m.type === 'fundament:init')).toMatchObject({
      view: 'detail', resource: { name: 'web-tls-cert', namespace: 'default' },
    });

    // The spot-check. allowedResources admits certificaterequests; take them out of the
    // plugin's ClusterRole on the real cluster. The kubeconfig's admin certificate can still
    // read them — so a 403 proves the forwarded call did not carry that certificate.
    const role = JSON.parse(kubectl('get', 'clusterrole', SCOPE_ROLE, '-o', 'json'));
    const narrowed = role.rules.map((r: { resources: string[] }) => ({ ...r, resources: r.resources.filter((x) => x !== 'certificaterequests') }));
    kubectl('patch', 'clusterrole', SCOPE_ROLE, '--type', 'json', '-p', JSON.stringify([{ op: 'replace', path: '/rules', value: narrowed }]));
    try {
      expect(kubectl('get', 'certificaterequests', '-n', 'default', '-o', 'name')).toContain('certificaterequest');
      const requests = { group: 'cert-manager.io', version: 'v1', resource: 'certificaterequests', namespace: 'default' };
      await expect.poll(() => sdkList(detail, requests)).toBe('SdkError:forbidden:403');
      // What the plugin's RBAC allows still works, and secrets stay refused by allowedResources.
      expect(await sdkList(detail, { group: 'cert-manager.io', version: 'v1', resource: 'certificates', namespace: 'default' })).toBe('allowed');
      expect(await sdkList(detail, { version: 'v1', resource: 'secrets', namespace: 'default' })).toBe('SdkError:forbidden:403');
    } finally {
      kubectl('patch', 'clusterrole', SCOPE_ROLE, '--type', 'json', '-p', JSON.stringify([{ op: 'replace', path: '/rules', value: role.rules }]));
    }

    // An audit line per call, with its decision; the cluster's own refusal is an allowed call that got 403.
    await expect.poll(() => auditLines(started, cluster).filter((l) => l.installation_name === 'acme-corp--cert-manager').length).toBeGreaterThanOrEqual(5);
    const lines = auditLines(started, cluster).filter((l) => l.installation_name === 'acme-corp--cert-manager');
    expect(lines.find((l) => l.resource === 'certificates' && l.verb === 'list')).toMatchObject({ decision: 'allowed', status: 200 });
    expect(lines.find((l) => l.resource === 'certificates' && l.verb === 'get' && l.name === 'web-tls-cert')).toMatchObject({ decision: 'allowed' });
    expect(lines.filter((l) => l.resource === 'certificaterequests').some((l) => l.decision === 'allowed' && l.status === 403)).toBe(true);
    expect(lines.find((l) => l.resource === 'secrets')?.decision).toBe('denied:allowed-resources');
  });

  test("the cluster list and the generated views show the cluster's own answers", async ({ page }) => {
    // /clusters asks the cluster itself, through the gateway: it answers with its version.
    await signIn(page, 'alice@acme-corp.com', '/clusters');
    const version = JSON.parse(kubectl('version', '-o', 'json')).serverVersion.gitVersion;
    const escaped = version.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const row = page.getByRole('row').filter({ hasText: cluster.name });
    await expect(row).toContainText(new RegExp(`Reachable\\s*${escaped}`));
    // In real mode the cluster is a Shoot, and its status is the garden's.
    if (process.env.WALK_MODE === 'real') await expect(row).toContainText(`Shoot garden-acme-corp/${cluster.name}: healthy · Reconcile Succeeded (100 %)`);
    else await expect(row).not.toContainText('Shoot');
    await page.goto(DEMO);
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    const names = kubectl('get', 'demoitems', '-A', '-o', 'jsonpath={.items[*].metadata.name}').split(' ').filter(Boolean);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) await expect(page.getByRole('link', { name, exact: true }).first()).toBeVisible();
    // The columns are those of the cluster's own Table answer, as kubectl prints them.
    const serverColumns = kubectl('get', 'demoitems', '-A').split('\n')[0].trim().split(/\s{2,}/);
    expect(serverColumns).toContain('NAME');
    const shown = (await page.locator('main table thead th:visible').allInnerTexts()).map((x) => x.replace(/[▲▼]/g, '').trim().toUpperCase());
    for (const column of serverColumns) expect(shown).toContain(column);
    await page.getByRole('link', { name: names[0], exact: true }).first().click();
    await expect(page.getByRole('region', { name: 'Metadata' })).toContainText(names[0]);
    await expect(page.getByRole('region', { name: 'Spec' })).toBeVisible();
  });
});
