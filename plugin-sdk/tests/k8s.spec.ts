// fundament.k8s: URLs for core and group, namespaced and cluster-scoped refs; methods, headers and bodies.
import { test, expect, sendJson } from './harness';

test('URL building: core and group, namespaced and cluster-scoped, object and collection', async ({ h }) => {
  const p = await h.open({ init: { kubeApiProxyUrl: h.servers.kubeOrigin + '/kube/', clusterId: 'cluster 1/a' } });
  await p.frame.evaluate(async () => {
    const k = window.fundament.k8s;
    await k.list({ version: 'v1', resource: 'configmaps', namespace: 'team a' });
    await k.list({ group: '', version: 'v1', resource: 'namespaces' });
    await k.get({ version: 'v1', resource: 'namespaces', name: 'default' });
    await k.get({ group: 'cert-manager.io', version: 'v1', resource: 'certificates', namespace: 'web', name: 'www/tls?x' });
    await k.list({ group: 'cert-manager.io', version: 'v1', resource: 'clusterissuers' });
    await k.get({ group: 'cert-manager.io', version: 'v1', resource: 'clusterissuers', name: 'letsencrypt' });
    await k.list({ group: 'cert-manager.io', version: 'v1', resource: 'certificates' }); // all namespaces
  });
  const base = '/kube/clusters/cluster%201%2Fa';
  expect(h.kube.requests().map((r) => r.url)).toEqual([
    `${base}/api/v1/namespaces/team%20a/configmaps`,
    `${base}/api/v1/namespaces`,
    `${base}/api/v1/namespaces/default`,
    `${base}/apis/cert-manager.io/v1/namespaces/web/certificates/www%2Ftls%3Fx`,
    `${base}/apis/cert-manager.io/v1/clusterissuers`,
    `${base}/apis/cert-manager.io/v1/clusterissuers/letsencrypt`,
    `${base}/apis/cert-manager.io/v1/certificates`,
  ]);
});

test('the reference example URL of a merge patch (kubeApiProxyUrl with a path, no trailing slash)', async ({ h }) => {
  const p = await h.open({ init: { kubeApiProxyUrl: h.servers.kubeOrigin + '/kube', clusterId: 'cluster-1' } });
  await p.frame.evaluate(() =>
    window.fundament.k8s.patch(
      { group: 'storage.fundament.io', version: 'v1alpha1', resource: 'storagepools', name: 'test-pool' },
      { spec: { replication: '2' } },
    ));
  const [r] = h.kube.requests();
  expect(r.url).toBe('/kube/clusters/cluster-1/apis/storage.fundament.io/v1alpha1/storagepools/test-pool');
  expect(r.method).toBe('PATCH');
  expect(r.headers['content-type']).toBe('application/merge-patch+json');
  expect(r.body).toBe('{"spec":{"replication":"2"}}');
});

test('list: label and field selectors, limit and continue; the result keeps items and list metadata', async ({ h }) => {
  h.kube.handle((req, res) =>
    sendJson(res, 200, { kind: 'CertificateList', metadata: { resourceVersion: '42', continue: 'next' }, items: [{ metadata: { name: 'a' } }] }));
  const p = await h.open();
  const result = await p.frame.evaluate(() =>
    window.fundament.k8s.list({
      group: 'cert-manager.io', version: 'v1', resource: 'certificates', namespace: 'web',
      labelSelector: 'app=web,tier in (a,b)', fieldSelector: 'metadata.name!=x', limit: 10, continue: 'abc',
    }));
  expect(result).toEqual({ items: [{ metadata: { name: 'a' } }], metadata: { resourceVersion: '42', continue: 'next' } });
  const [r] = h.kube.requests();
  expect(r.path).toBe('/kube/clusters/cluster-1/apis/cert-manager.io/v1/namespaces/web/certificates');
  expect(Object.fromEntries(r.query)).toEqual({ labelSelector: 'app=web,tier in (a,b)', fieldSelector: 'metadata.name!=x', limit: '10', continue: 'abc' });
});

test('list of a body without items gives an empty list', async ({ h }) => {
  h.kube.handle((req, res) => sendJson(res, 200, { kind: 'List', metadata: {} }));
  const p = await h.open();
  expect(await p.frame.evaluate(() => window.fundament.k8s.list({ version: 'v1', resource: 'pods' }))).toEqual({ items: [], metadata: {} });
});

test('get, create, patch and delete: methods, Accept, Content-Type, body, Authorization', async ({ h }) => {
  const p = await h.open();
  const results = await p.frame.evaluate(async () => {
    const k = window.fundament.k8s;
    const ref = { group: 'demo.fundament.io', version: 'v1', resource: 'demoitems', namespace: 'web' };
    const body = { apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name: 'one' }, spec: { size: 1 } };
    return [
      await k.get({ ...ref, name: 'one' }),
      await k.create(ref, body),
      await k.patch({ ...ref, name: 'one' }, { spec: { size: null } }),
      await k.delete({ ...ref, name: 'one' }),
    ];
  });
  expect(results[1]).toMatchObject({ kind: 'DemoItem', spec: { size: 1 } });
  expect(results[3]).toMatchObject({ kind: 'Status', status: 'Success' });
  const reqs = h.kube.requests();
  const path = '/kube/clusters/cluster-1/apis/demo.fundament.io/v1/namespaces/web/demoitems';
  expect(reqs.map((r) => [r.method, r.url, r.headers['content-type'] ?? null, r.body])).toEqual([
    ['GET', `${path}/one`, null, ''],
    ['POST', path, 'application/json', '{"apiVersion":"demo.fundament.io/v1","kind":"DemoItem","metadata":{"name":"one"},"spec":{"size":1}}'],
    ['PATCH', `${path}/one`, 'application/merge-patch+json', '{"spec":{"size":null}}'],
    ['DELETE', `${path}/one`, null, ''],
  ]);
  for (const r of reqs) {
    expect(r.headers.authorization).toBe('Bearer token-1');
    expect(r.headers.accept).toBe('application/json');
    expect(r.url).not.toContain('token');
  }
});

test('create ignores a name in the ref (POST goes to the collection)', async ({ h }) => {
  const p = await h.open();
  await p.frame.evaluate(() => window.fundament.k8s.create({ version: 'v1', resource: 'configmaps', namespace: 'a', name: 'x' } as never, { metadata: { name: 'x' } }));
  expect(h.kube.requests().map((r) => [r.method, r.url])).toEqual([['POST', '/kube/clusters/cluster-1/api/v1/namespaces/a/configmaps']]);
});

test('a ref without version, resource or (for object calls) name is rejected with a TypeError and no request', async ({ h }) => {
  const p = await h.open();
  const errors = await p.frame.evaluate(async () => {
    const k = window.fundament.k8s as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    const refs: [string, unknown][] = [
      ['get', { version: 'v1', resource: 'pods', namespace: 'a' }],
      ['patch', { version: 'v1', resource: 'pods' }],
      ['delete', { version: 'v1', resource: 'pods', name: '' }],
      ['list', { version: 'v1' }],
      ['list', { resource: 'pods' }],
    ];
    return Promise.all(refs.map(async ([m, a]) => {
      const r = await window.settle(k[m](a, {}));
      return r.ok ? 'resolved' : r.error.name;
    }));
  });
  expect(errors).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError', 'TypeError']);
  expect(h.kube.requests()).toHaveLength(0);
});

test('a 2xx answer that is not JSON is an http error', async ({ h }) => {
  h.kube.handle((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<html>login</html>');
  });
  const p = await h.open();
  const r = await p.frame.evaluate(() => window.settle(window.fundament.k8s.get({ version: 'v1', resource: 'pods', name: 'a' })));
  expect(r.ok || r.error).toMatchObject({ code: 'http', status: 200, message: 'response is not JSON' });
});

test('k8s calls made before fundament:init are sent once it arrives, against its kubeApiProxyUrl', async ({ h }) => {
  const p = await h.open({ autoInit: false });
  const call = p.frame.evaluate(() => window.fundament.k8s.list({ version: 'v1', resource: 'pods' }));
  await p.init({ clusterId: 'late' });
  await call;
  expect(h.kube.requests().map((r) => r.url)).toEqual(['/kube/clusters/late/api/v1/pods']);
});
