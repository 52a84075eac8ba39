// Black-box checks of kube-api-proxy as `fundament dev` runs it: tokens from
// `fundament token`, calls over HTTP, and what a browser page of another
// origin can and cannot do.
import { test, expect, request as playwrightRequest } from '@playwright/test';
import { GATEWAY as PROXY, PROD, RESTRICTED, pluginToken, token } from './origins';

test.describe('kube-api-proxy against fundament dev', () => {
  test('the PluginToken path: plugin RBAC, allowedResources, the user review', async () => {
    const api = await playwrightRequest.newContext();
    const alice = { Authorization: `Bearer ${pluginToken('alice@acme-corp.com', 'acme-corp--cert-manager')}` };
    const certs = `${PROXY}/clusters/${PROD}/apis/cert-manager.io/v1/certificates`;

    const list = await api.get(certs, { headers: alice });
    expect(list.status()).toBe(200);
    expect((await list.json()).items.length).toBeGreaterThanOrEqual(3);

    const other = await api.get(certs.replace(PROD, RESTRICTED), { headers: alice });
    expect(other.status()).toBe(403);
    expect((await other.json()).message).toContain('cluster_id mismatch');

    for (const p of ['/api/v1/namespaces/default/secrets', '/apis/postgresql.cnpg.io/v1/databases', '/api/v1/events']) {
      const refused = await api.get(`${PROXY}/clusters/${PROD}${p}`, { headers: alice });
      expect(refused.status(), p).toBe(403);
      const status = await refused.json();
      expect(status.kind).toBe('Status');
      expect(status.message).toMatch(/^allowedResources:/);
    }

    const demo = { Authorization: `Bearer ${pluginToken('alice@acme-corp.com', 'acme-corp--demo')}` };
    const create = await api.post(`${PROXY}/clusters/${PROD}/apis/demo.fundament.io/v1/namespaces/default/demoitems`, {
      headers: demo,
      data: { apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name: 'via-gateway' }, spec: { message: 'x' } },
    });
    expect(create.status()).toBe(403);
    expect((await create.json()).message).toContain('system:serviceaccount:plugin-acme-corp--demo:plugin');

    const bob = { Authorization: `Bearer ${pluginToken('bob@acme-corp.com', 'acme-corp--cert-manager')}` };
    const cert = await api.post(`${PROXY}/clusters/${PROD}/apis/cert-manager.io/v1/namespaces/default/certificates`, {
      headers: bob,
      data: { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'by-bob' },
              spec: { secretName: 'by-bob', issuerRef: { name: 'ca-issuer' } } },
    });
    expect(cert.status()).toBe(403);
    expect((await cert.json()).message).toContain('SubjectAccessReview');

    const expired = await api.get(certs, {
      headers: { Authorization: `Bearer ${pluginToken('alice@acme-corp.com', 'acme-corp--cert-manager', '-1m')}` },
    });
    expect(expired.status()).toBe(401);
    await api.dispose();
  });

  test('no cookie is a credential; CORS for plugin origins only, never with credentials; never a document', async () => {
    const api = await playwrightRequest.newContext();
    const user = token('user', '--email', 'alice@acme-corp.com');
    const ns = `${PROXY}/clusters/${PROD}/api/v1/namespaces`;
    // The session cookie authorizes nothing here, from any origin or none.
    for (const cookie of [`__Host-fundament_auth=${user}`, `fundament_auth=${user}`]) {
      for (const origin of [undefined, 'http://localhost:3000', 'http://acme-corp--cert-manager.localhost:8082']) {
        const headers: Record<string, string> = { Cookie: cookie };
        if (origin) headers.Origin = origin;
        const answer = await api.get(ns, { headers });
        expect([401, 403], `${cookie.split('=')[0]} from ${origin}`).toContain(answer.status());
        expect(answer.headers()['content-security-policy']).toBe("sandbox; default-src 'none'");
      }
    }
    // The bearer token works, and the answer is no document.
    const ok = await api.get(ns, { headers: { Authorization: `Bearer ${user}` } });
    expect(ok.status()).toBe(200);
    expect(ok.headers()['content-security-policy']).toBe("sandbox; default-src 'none'");
    expect(ok.headers()['x-content-type-options']).toBe('nosniff');
    const plugin = pluginToken('alice@acme-corp.com', 'acme-corp--cert-manager');
    expect((await api.get(ns, { headers: { Cookie: `__Host-fundament_auth=${plugin}` } })).status()).toBe(401);
    const preflight = (origin: string) =>
      api.fetch(ns, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' },
      });
    const own = await preflight('http://acme-corp--cert-manager.localhost:8082');
    expect(own.status()).toBe(204);
    expect(own.headers()['access-control-allow-origin']).toBe('http://acme-corp--cert-manager.localhost:8082');
    expect(own.headers()['access-control-allow-credentials']).toBeUndefined();
    expect(own.headers()['access-control-allow-headers']).toContain('Authorization');
    for (const origin of ['http://localhost:3000', 'http://localhost:8082', 'https://evil.example']) {
      expect((await preflight(origin)).status(), origin).toBe(403);
    }
    await api.dispose();
  });

  test('in the browser, a credentialed call from a foreign origin is refused', async ({ page }) => {
    // A page served from authn's origin (not the console's, not plugin-proxy's).
    await page.goto('http://localhost:8083/livez');
    const status = await page.evaluate(async (url) => {
      try {
        const r = await fetch(url, { credentials: 'include' });
        return r.status;
      } catch {
        return 'blocked';
      }
    }, `${PROXY}/clusters/${PROD}/api/v1/namespaces`);
    expect(status).toBe('blocked');
  });
});
