// The request lifecycle (plugin-sdk/README.md: "Request lifecycle") and the token messages: token wait, request timeout,
// 401 → refresh → retry, 403, other HTTP errors, transport errors, fundament:auth-failed.
import { test, expect, waitFor, sendJson, sendStatus, type Settled } from './harness';

const FAST = { tokenWaitMs: 400, requestTimeoutMs: 400 };
// For tests whose requests are answered: only the token wait is short, so a loaded machine's slow 401 is not
// taken for a request timeout.
const FAST_TOKEN_WAIT = { tokenWaitMs: 400 };
const demo = { group: 'demo.fundament.io', version: 'v1', resource: 'demoitems', namespace: 'web', name: 'one' };
const bearer = (r: { headers: Record<string, unknown> }) => r.headers.authorization;

test('a k8s call waits for the token of fundament:init', async ({ h }) => {
  const p = await h.open({ autoInit: false });
  const call = p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  await p.frame.evaluate(() => new Promise((r) => setTimeout(r, 100)));
  expect(h.kube.requests()).toHaveLength(0);
  await p.init();
  expect((await call).ok).toBe(true);
  expect(h.kube.requests().map(bearer)).toEqual(['Bearer token-1']);
});

test('token wait timeout: no fundament:init → k8s calls and getToken() reject with timeout after tokenWaitMs', async ({ h }) => {
  const p = await h.open({ autoInit: false, timings: FAST });
  const [k8s, token] = await p.frame.evaluate((a) => Promise.all([window.settle(window.fundament.k8s.get(a)), window.settle(window.fundament.getToken())]), demo);
  for (const r of [k8s, token] as Settled[]) {
    expect(r.ok).toBe(false);
    if (r.ok) continue;
    expect(r.error).toMatchObject({ name: 'SdkError', code: 'timeout', isSdkError: true });
    expect(r.elapsed).toBeGreaterThanOrEqual(390);
  }
  expect(k8s.ok || k8s.error.message).toBe('no fundament:init after 400 ms');
  expect(token.ok || token.error.message).toBe('no PluginToken after 400 ms');
  expect(h.kube.requests()).toHaveLength(0);
  // No refresh request can go anywhere before an origin is pinned.
  expect(await p.received('plugin:request-token-refresh')).toHaveLength(0);
});

test('token wait timeout: an init without token asks the pinned host once, then times out', async ({ h }) => {
  const p = await h.open({ onRefresh: 'none', init: { token: undefined, tokenExpiresAt: undefined }, timings: FAST });
  await p.frame.evaluate(() => window.fundament.init);
  const results = await p.frame.evaluate(() => Promise.all([window.settle(window.fundament.getToken()), window.settle(window.fundament.getToken())]));
  for (const r of results) expect(r.ok || r.error.code).toBe('timeout');
  const asks = await p.received('plugin:request-token-refresh');
  expect(asks).toHaveLength(1);
  expect(asks[0]).toMatchObject({ origin: h.servers.pluginOrigin, fromPlugin: true, data: { type: 'plugin:request-token-refresh' } });

  // The next call asks again (the host may recover), and a token-refreshed answer satisfies it.
  await p.setHost({ onRefresh: 'token' });
  expect(await p.frame.evaluate(() => window.fundament.getToken())).toBe('token-2');
  expect(await p.received('plugin:request-token-refresh')).toHaveLength(2);
});

test('request timeout: a request without an answer is aborted after requestTimeoutMs with SdkError timeout', async ({ h }) => {
  h.kube.handle(() => {}); // never answers
  const p = await h.open({ timings: FAST });
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.error).toMatchObject({ name: 'SdkError', code: 'timeout', message: 'request timed out after 400 ms', isSdkError: true });
  expect(r.elapsed).toBeGreaterThanOrEqual(390);
  expect(r.elapsed).toBeLessThan(3000);
  expect(h.kube.requests()).toHaveLength(1);
});

test('request timeout covers a body that stops half-way, and fundament.fetch times out too', async ({ h }) => {
  h.kube.handle((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"kind":"List","items":['); // and nothing more
  });
  const p = await h.open({ timings: FAST });
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.list(a)), demo);
  expect(r.ok || r.error.code).toBe('timeout');
  h.kube.handle(() => {});
  const f = await p.frame.evaluate((u) => window.settle(window.fundament.fetch(u + '/kube/x')), h.servers.kubeOrigin);
  expect(f.ok || f.error.code).toBe('timeout');
});

test('401 → the token is dropped, plugin:request-token-refresh goes to the host, the retry with the new token succeeds', async ({ h }) => {
  h.kube.handle((req, res) => {
    if (bearer(req) === 'Bearer token-1') return sendStatus(res, 401, 'Unauthorized', 'token expired');
    sendJson(res, 200, { kind: 'DemoItem', metadata: { name: 'one' } });
  });
  const p = await h.open();
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  expect(r).toMatchObject({ ok: true, value: { kind: 'DemoItem' } });
  expect(h.kube.requests().map(bearer)).toEqual(['Bearer token-1', 'Bearer token-2']);
  const asks = await p.received('plugin:request-token-refresh');
  expect(asks).toHaveLength(1);
  expect(asks[0]).toMatchObject({ origin: h.servers.pluginOrigin, fromPlugin: true });
  expect(await p.frame.evaluate(() => window.fundament.getToken())).toBe('token-2');
});

test('concurrent 401s share one refresh request', async ({ h }) => {
  h.kube.handle((req, res) => {
    if (bearer(req) === 'Bearer token-1') return sendStatus(res, 401, 'Unauthorized', 'expired');
    sendJson(res, 200, { ok: req.path });
  });
  const p = await h.open();
  const rs = await p.frame.evaluate((a) => Promise.all([1, 2, 3].map((i) => window.settle(window.fundament.k8s.get({ ...a, name: 'n' + i })))), demo);
  expect(rs.map((r) => r.ok)).toEqual([true, true, true]);
  expect(await p.received('plugin:request-token-refresh')).toHaveLength(1);
  expect(h.kube.requests().map(bearer).sort()).toEqual([...Array(3).fill('Bearer token-1'), ...Array(3).fill('Bearer token-2')]);
});

test('401 twice → SdkError unauthorized after exactly one retry', async ({ h }) => {
  h.kube.handle((req, res) => sendStatus(res, 401, 'Unauthorized', 'Unauthorized'));
  const p = await h.open();
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.error).toMatchObject({ code: 'unauthorized', status: 401, message: 'Unauthorized', isSdkError: true });
  expect(h.kube.requests().map(bearer)).toEqual(['Bearer token-1', 'Bearer token-2']);
  expect(await p.received('plugin:request-token-refresh')).toHaveLength(1);
});

test('401 and the host never answers the refresh → timeout after tokenWaitMs', async ({ h }) => {
  h.kube.handle((req, res) => sendStatus(res, 401, 'Unauthorized', 'Unauthorized'));
  const p = await h.open({ onRefresh: 'none', timings: FAST_TOKEN_WAIT });
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  expect(r.ok || r.error).toMatchObject({ code: 'timeout', message: 'no PluginToken after 400 ms' });
  expect(h.kube.requests()).toHaveLength(1);
});

test('403 → SdkError forbidden with the Status message, no refresh', async ({ h }) => {
  h.kube.handle((req, res) =>
    sendStatus(res, 403, 'Forbidden', 'demoitems.demo.fundament.io "one" is forbidden: User cannot get resource'));
  const p = await h.open();
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  expect(r.ok || r.error).toMatchObject({
    code: 'forbidden', status: 403, reason: 'Forbidden', isSdkError: true,
    message: 'demoitems.demo.fundament.io "one" is forbidden: User cannot get resource',
  });
  expect(h.kube.requests()).toHaveLength(1);
  expect(await p.received('plugin:request-token-refresh')).toHaveLength(0);
});

test('500 with a Status body → SdkError http carrying the message and code', async ({ h }) => {
  h.kube.handle((req, res) => sendStatus(res, 500, 'InternalError', 'etcdserver: request timed out'));
  const p = await h.open();
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  expect(r.ok || r.error).toMatchObject({ code: 'http', status: 500, reason: 'InternalError', message: 'etcdserver: request timed out' });
});

test('422 → SdkError http with the Status details (field causes) of a rejected write', async ({ h }) => {
  const details = { name: 'pool', kind: 'storagepools', causes: [{ reason: 'FieldValueRequired', field: 'spec.disks', message: 'must not be empty' }] };
  h.kube.handle((req, res) => sendStatus(res, 422, 'Invalid', 'spec.disks: must not be empty', details));
  const p = await h.open();
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.patch(a, { spec: { disks: [] } })), demo);
  expect(r.ok || r.error).toMatchObject({ code: 'http', status: 422, reason: 'Invalid', message: 'spec.disks: must not be empty', details });
});

test('an error without a Status body → SdkError http with the status text, or HTTP <code>', async ({ h }) => {
  h.kube.handle((req, res) => {
    if (req.path.endsWith('/one')) {
      res.writeHead(404, 'Not Found', { 'Content-Type': 'text/plain' });
      return res.end('404 page not found\n');
    }
    res.writeHead(502, '', { 'Content-Type': 'text/plain' });
    res.end('bad gateway');
  });
  const p = await h.open();
  const a = await p.frame.evaluate((d) => window.settle(window.fundament.k8s.get(d)), demo);
  expect(a.ok || a.error).toMatchObject({ code: 'http', status: 404, message: 'Not Found' });
  const b = await p.frame.evaluate((d) => window.settle(window.fundament.k8s.get({ ...d, name: 'two' })), demo);
  expect(b.ok || b.error).toMatchObject({ code: 'http', status: 502, message: 'HTTP 502' });
});

test('network failure → SdkError transport', async ({ h }) => {
  h.kube.handle((req, res) => void res.socket?.destroy());
  const p = await h.open();
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  expect(r.ok || r.error).toMatchObject({ code: 'transport', name: 'SdkError', isSdkError: true });
  // Connection refused (a closed port) too.
  const closed = await p.frame.evaluate(() => window.settle(window.fundament.fetch('http://127.0.0.3:9/kube')));
  expect(closed.ok || closed.error.code).toBe('transport');
});

test('fundament:auth-failed rejects waiting calls with its reason; a later call asks again and recovers (mint_failed)', async ({ h }) => {
  h.kube.handle((req, res) => {
    if (bearer(req) === 'Bearer token-1') return sendStatus(res, 401, 'Unauthorized', 'expired');
    sendJson(res, 200, { ok: true });
  });
  const p = await h.open({ onRefresh: 'mint_failed' });
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  expect(r.ok || r.error).toMatchObject({ code: 'unauthorized', reason: 'mint_failed', message: 'plugin auth failed: mint_failed', isSdkError: true });
  expect(h.kube.requests()).toHaveLength(1);

  // Upstream gap: after mint_failed every call failed until a reload. Here the next call asks the host again.
  await p.setHost({ onRefresh: 'token' });
  const again = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  expect(again).toMatchObject({ ok: true, value: { ok: true } });
  expect(await p.received('plugin:request-token-refresh')).toHaveLength(2);
  expect(h.kube.requests().map(bearer)).toEqual(['Bearer token-1', 'Bearer token-2']);
});

test('fundament:auth-failed revoked or unauthorized is final: calls reject at once without a request', async ({ h }) => {
  const p = await h.open({ onRefresh: 'none' });
  await p.frame.evaluate(() => window.fundament.init);
  for (const reason of ['revoked', 'unauthorized']) {
    await p.send({ type: 'fundament:auth-failed', reason });
    await expect
      .poll(async () => {
        const r = await p.frame.evaluate(() => window.settle(window.fundament.getToken()));
        return r.ok ? 'ok' : `${r.error.code}/${r.error.reason}`;
      })
      .toBe(`unauthorized/${reason}`);
    const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
    expect(r.ok || r.error).toMatchObject({ code: 'unauthorized', reason, message: `plugin auth failed: ${reason}` });
  }
  expect(h.kube.requests()).toHaveLength(0);
  expect(await p.received('plugin:request-token-refresh')).toHaveLength(0);
  // A token from the host ends the failure.
  await p.send({ type: 'fundament:token-refreshed', token: 'token-9', tokenExpiresAt: Math.floor(Date.now() / 1000) + 900 });
  await expect
    .poll(async () => {
      const r = await p.frame.evaluate(() => window.settle(window.fundament.getToken()));
      return r.ok ? r.value : r.error.code;
    })
    .toBe('token-9');
});

test('an expired token (tokenExpiresAt in unix seconds) is refreshed before the call instead of failing with 401', async ({ h }) => {
  const p = await h.open({ init: { tokenExpiresAt: Math.floor(Date.now() / 1000) - 60 } });
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  expect(r.ok).toBe(true);
  expect(h.kube.requests().map(bearer)).toEqual(['Bearer token-2']);
  expect(await p.received('plugin:request-token-refresh')).toHaveLength(1);
});

test('the refresh request goes to the pinned origin only, never to *', async ({ h }) => {
  // Pin another origin first (a synthetic init whose source is window.parent). A refresh request addressed to
  // '*' would reach the real host page; addressed to the pinned origin it cannot (the browser drops it).
  h.kube.handle((req, res) => sendStatus(res, 401, 'Unauthorized', 'Unauthorized'));
  const p = await h.open({ autoInit: false, timings: FAST_TOKEN_WAIT });
  await p.synthetic({ ...h.defaultInit(), type: 'fundament:init' }, 'http://127.0.0.9:9999');
  const r = await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  // The SDK took the refresh path (dropped the token, waited for a new one) ...
  expect(r.ok || r.error).toMatchObject({ code: 'timeout', message: 'no PluginToken after 400 ms' });
  expect(h.kube.requests()).toHaveLength(1);
  // ... and the host, whose origin differs from the pinned one, got nothing.
  expect(await p.received('plugin:request-token-refresh')).toHaveLength(0);
  expect((await p.received()).map((m) => m.type)).not.toContain('plugin:request-token-refresh');
});

test('fundament.fetch adds the Bearer token, keeps the caller headers and resolves with any status', async ({ h }) => {
  h.kube.handle((req, res) => {
    if (req.path === '/kube/needs-refresh' && bearer(req) === 'Bearer token-1') return sendStatus(res, 401, 'Unauthorized', 'x');
    sendJson(res, req.path === '/kube/missing' ? 404 : 200, { path: req.path });
  });
  const p = await h.open();
  const out = await p.frame.evaluate(async (base) => {
    const f = window.fundament.fetch;
    const a = await f(base + '/kube/missing', { headers: { 'X-Test': 'yes' } });
    const b = await f(new Request(base + '/kube/needs-refresh', { method: 'POST', body: '{"a":1}', headers: { 'Content-Type': 'application/json' } }));
    return [a.status, await a.json(), b.status, await b.json()];
  }, h.servers.kubeOrigin);
  expect(out).toEqual([404, { path: '/kube/missing' }, 200, { path: '/kube/needs-refresh' }]);
  const reqs = h.kube.requests();
  expect(reqs.map((r) => [r.method, r.path, bearer(r)])).toEqual([
    ['GET', '/kube/missing', 'Bearer token-1'],
    ['POST', '/kube/needs-refresh', 'Bearer token-1'],
    ['POST', '/kube/needs-refresh', 'Bearer token-2'],
  ]);
  expect(reqs[0].headers['x-test']).toBe('yes');
  expect(reqs[2].body).toBe('{"a":1}');
  expect(reqs[2].headers['content-type']).toBe('application/json');
  // No cookies travel with SDK requests: credentials are omitted.
  expect(reqs.every((r) => r.headers.cookie === undefined)).toBe(true);
});

test('a caller abort signal aborts fundament.fetch with the caller’s reason, not an SdkError', async ({ h }) => {
  h.kube.handle(() => {});
  const p = await h.open();
  const r = await p.frame.evaluate(async (base) => {
    const ac = new AbortController();
    const pr = window.settle(window.fundament.fetch(base + '/kube/slow', { signal: ac.signal }));
    setTimeout(() => ac.abort(), 50);
    return pr;
  }, h.servers.kubeOrigin);
  expect(r.ok || r.error).toMatchObject({ name: 'AbortError', isSdkError: false });
});

test('the token is never put in a URL or logged', async ({ h }) => {
  h.kube.handle((req, res) => {
    if (bearer(req) === 'Bearer token-1') return sendStatus(res, 401, 'Unauthorized', 'x');
    sendJson(res, 200, { items: [] });
  });
  const p = await h.open();
  await p.frame.evaluate((a) => window.fundament.k8s.list(a), demo);
  await p.frame.evaluate((a) => window.settle(window.fundament.k8s.get(a)), demo);
  const urls = h.kube.requests().map((r) => r.url);
  expect(urls.length).toBeGreaterThan(0);
  expect(urls.filter((u) => /token-\d/.test(u))).toEqual([]);
  expect(h.consoleMessages.filter((m) => /token-\d/.test(m))).toEqual([]);
  expect((await waitFor(p, 'plugin:request-token-refresh'))[0].data).toEqual({ type: 'plugin:request-token-refresh' });
});
