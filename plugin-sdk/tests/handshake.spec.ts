// The handshake and the SDK's inbound acceptance rules (plugin-sdk/README.md: "The protocol").
import { test, expect, waitFor } from './harness';

const pending = `Promise.race([fundament.init.then(() => 'resolved'), new Promise((r) => setTimeout(() => r('pending'), 100))])`;

test('plugin:ready carries protocolVersion 1 and the host answer with fundament:init resolves fundament.init', async ({ h }) => {
  const p = await h.open();
  const [ready] = await waitFor(p, 'plugin:ready');
  expect(ready).toMatchObject({ data: { type: 'plugin:ready', protocolVersion: 1 }, origin: h.servers.pluginOrigin, fromPlugin: true });
  expect(await p.received('plugin:ready')).toHaveLength(1);

  const ctx = await p.frame.evaluate(() => window.fundament.init);
  const { token, tokenExpiresAt, protocolVersion, ...expected } = h.defaultInit();
  expect(ctx).toEqual(expected);
  expect(ctx).not.toHaveProperty('token');
  expect(ctx).not.toHaveProperty('type');
  expect(await p.frame.evaluate(async () => Object.isFrozen(await window.fundament.init))).toBe(true);
  expect(await p.frame.evaluate(() => window.fundament.parentOrigin)).toBe(h.servers.hostOrigin);
  expect(await p.frame.evaluate(() => window.fundament.getToken())).toBe(token);

  // The init payload is what k8s calls use: kubeApiProxyUrl (one trailing slash dropped) and clusterId.
  await p.frame.evaluate(() => window.fundament.k8s.list({ group: 'demo.fundament.io', version: 'v1', resource: 'demoitems' }));
  expect(h.kube.requests().map((r) => r.url)).toEqual(['/kube/clusters/cluster-1/apis/demo.fundament.io/v1/demoitems']);
  expect(protocolVersion).toBe(1);
  expect(tokenExpiresAt).toBeGreaterThan(Date.now() / 1000);
});

test('every init payload field of a detail and a create view reaches fundament.init', async ({ h }) => {
  const detail = { view: 'detail', crdKind: 'Certificate', pluginName: 'acme-corp--cert-manager', resource: { name: 'www', namespace: 'web' } };
  let p = await h.open({ init: detail });
  expect(await p.frame.evaluate(() => window.fundament.init)).toEqual({
    ...detail, theme: 'light', kubeApiProxyUrl: h.servers.kubeOrigin + '/kube/', clusterId: 'cluster-1',
  });
  const create = { view: 'create', crdKind: 'FSCInstallation', theme: 'dark', namespaces: ['web', 'shop'] };
  p = await h.open({ init: create });
  expect(await p.frame.evaluate(() => window.fundament.init)).toMatchObject(create);
  expect(await p.frame.evaluate(() => document.body.className)).toBe('dark');
});

test('fundament.init waits for the host; parentOrigin is null until then', async ({ h }) => {
  const p = await h.open({ autoInit: false });
  await waitFor(p, 'plugin:ready');
  expect(await p.frame.evaluate(() => window.fundament.parentOrigin)).toBeNull();
  expect(await p.frame.evaluate(pending)).toBe('pending');
  await p.init();
  expect(await p.frame.evaluate(pending)).toBe('resolved');
});

test('an init with another protocolVersion is ignored and pins nothing', async ({ h }) => {
  const p = await h.open({ autoInit: false });
  await p.init({ protocolVersion: 2, theme: 'dark' });
  await p.init({ protocolVersion: '1' });
  expect(await p.frame.evaluate(pending)).toBe('pending');
  expect(await p.frame.evaluate(() => window.fundament.parentOrigin)).toBeNull();
  expect(await p.frame.evaluate(() => document.body.className)).toBe('light');
  await p.init();
  expect(await p.frame.evaluate(pending)).toBe('resolved');
  expect(await p.frame.evaluate(() => window.fundament.parentOrigin)).toBe(h.servers.hostOrigin);
});

test('before init, every other host message is ignored', async ({ h }) => {
  const p = await h.open({ autoInit: false });
  await p.send({ type: 'fundament:theme-changed', theme: 'dark' });
  await p.send({ type: 'fundament:token-refreshed', token: 'early-token', tokenExpiresAt: 9e9 });
  await p.send({ type: 'fundament:auth-failed', reason: 'revoked' });
  await p.seen(3);
  expect(await p.frame.evaluate(() => document.body.className)).toBe('light');
  expect(await p.frame.evaluate(() => window.fundament.parentOrigin)).toBeNull();
  await p.init();
  // Neither the early token nor the early auth-failed took effect.
  expect(await p.frame.evaluate(() => window.fundament.getToken())).toBe('token-1');
});

test('messages from a sibling frame (console origin, plugin origin or a third origin) are ignored', async ({ h }) => {
  const p = await h.open({ autoInit: false, siblings: ['host', 'plugin', 'kube'] });
  const evil = { ...h.defaultInit(), type: 'fundament:init', theme: 'dark', token: 'evil-token' };
  for (const sibling of p.siblingFrames()) {
    await sibling.evaluate((m) => window.parent.frames[0].postMessage(m, '*'), evil);
  }
  // The plugin's own window is not its parent either.
  await p.frame.evaluate((m) => window.postMessage(m, '*'), evil);
  await p.seen(4);
  expect(await p.frame.evaluate(() => window.seen.map((m) => m.fromParent))).toEqual([false, false, false, false]);
  expect(await p.frame.evaluate(() => window.fundament.parentOrigin)).toBeNull();
  expect(await p.frame.evaluate(() => document.body.className)).toBe('light');
  expect(await p.frame.evaluate(pending)).toBe('pending');

  await p.init();
  expect(await p.frame.evaluate(() => window.fundament.parentOrigin)).toBe(h.servers.hostOrigin);
  expect(await p.frame.evaluate(() => window.fundament.getToken())).toBe('token-1');
});

test('after pinning, messages from the parent window with another origin are ignored, including a second init', async ({ h }) => {
  const p = await h.open();
  await p.frame.evaluate(() => window.fundament.init);
  const other = 'http://127.0.0.9:9999';
  await p.synthetic({ ...h.defaultInit(), type: 'fundament:init', theme: 'dark', token: 'other-token', clusterId: 'other' }, other);
  await p.synthetic({ type: 'fundament:theme-changed', theme: 'dark' }, other);
  await p.synthetic({ type: 'fundament:token-refreshed', token: 'other-token', tokenExpiresAt: 9e9 }, other);
  await p.synthetic({ type: 'fundament:auth-failed', reason: 'revoked' }, other);
  expect(await p.frame.evaluate(() => window.fundament.parentOrigin)).toBe(h.servers.hostOrigin);
  expect(await p.frame.evaluate(() => document.body.className)).toBe('light');
  expect(await p.frame.evaluate(() => window.fundament.getToken())).toBe('token-1');

  // The right origin but another source window is ignored too.
  await p.frame.evaluate(
    (o) => void window.dispatchEvent(new MessageEvent('message', { data: { type: 'fundament:theme-changed', theme: 'dark' }, origin: o, source: window })),
    h.servers.hostOrigin,
  );
  expect(await p.frame.evaluate(() => document.body.className)).toBe('light');

  // The pinned host still gets through.
  await p.send({ type: 'fundament:theme-changed', theme: 'dark' });
  await expect.poll(() => p.frame.evaluate(() => document.body.className)).toBe('dark');
});

test('the first valid init pins its origin: a later init from the real host is then ignored', async ({ h }) => {
  const p = await h.open({ autoInit: false });
  const other = 'http://127.0.0.9:9999';
  await p.synthetic({ ...h.defaultInit(), type: 'fundament:init', token: 'other-token' }, other);
  expect(await p.frame.evaluate(() => window.fundament.parentOrigin)).toBe(other);
  await p.init({ theme: 'dark', token: 'host-token' });
  await p.seen(2);
  expect(await p.frame.evaluate(() => document.body.className)).toBe('light');
  expect(await p.frame.evaluate(() => window.fundament.getToken())).toBe('other-token');
});

test('a repeated init from the pinned origin updates the token and theme but not the context', async ({ h }) => {
  const p = await h.open();
  await p.frame.evaluate(() => window.fundament.init);
  await p.init({ token: 'token-again', theme: 'dark', clusterId: 'cluster-2' });
  await expect.poll(() => p.frame.evaluate(() => document.body.className)).toBe('dark');
  expect(await p.frame.evaluate(() => window.fundament.getToken())).toBe('token-again');
  expect(await p.frame.evaluate(async () => (await window.fundament.init).clusterId)).toBe('cluster-1');
});

test('malformed messages from the host are ignored', async ({ h }) => {
  const p = await h.open();
  await p.frame.evaluate(() => window.fundament.init);
  for (const m of [null, 'fundament:theme-changed', 42, { type: 7 }, { type: 'fundament:unknown' }, { type: 'fundament:theme-changed', theme: 'blue' }]) {
    await p.page.evaluate((msg) => window.host.frame.contentWindow.postMessage(msg, window.host.pluginOrigin), m);
  }
  await p.send({ type: 'fundament:token-refreshed', token: '' });
  await p.send({ type: 'fundament:token-refreshed', token: 5 });
  await p.seen(9); // init + 8
  expect(await p.frame.evaluate(() => document.body.className)).toBe('light');
  expect(await p.frame.evaluate(() => window.fundament.getToken())).toBe('token-1');
});

test('the SDK script is idempotent and exposes a frozen surface', async ({ h }) => {
  const p = await h.open();
  await p.frame.evaluate(() => window.fundament.init);
  const surface = await p.frame.evaluate(async () => {
    const before = window.fundament;
    await new Promise((resolve) => {
      const s = document.createElement('script');
      s.src = '/plugins/sdk/v1/plugin-sdk.js';
      s.onload = resolve;
      document.head.appendChild(s);
    });
    return {
      same: before === window.fundament,
      frozen: Object.isFrozen(window.fundament),
      keys: Object.keys(window.fundament).sort(),
      k8s: Object.keys(window.fundament.k8s).sort(),
    };
  });
  expect(surface).toEqual({
    same: true,
    frozen: true,
    keys: ['SdkError', 'back', 'create', 'fetch', 'getToken', 'init', 'k8s', 'navigate', 'onThemeChange', 'parentOrigin'],
    k8s: ['create', 'delete', 'get', 'list', 'patch', 'watch'],
  });
  expect(await p.received('plugin:ready')).toHaveLength(1);
});
