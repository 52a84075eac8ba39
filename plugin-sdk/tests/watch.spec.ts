// fundament.k8s.watch: fetch streaming of the watch endpoint, resume from the last resourceVersion,
// 410 → onError('gone') → fresh list → resume, error handling and stop().
import type http from 'node:http';
import { test, expect, sendJson, sendStatus, type Harness, type Plugin } from './harness';

const ref = { group: 'demo.fundament.io', version: 'v1', resource: 'demoitems', namespace: 'web' };
const PATH = '/kube/clusters/cluster-1/apis/demo.fundament.io/v1/namespaces/web/demoitems';
const item = (name: string, rv: string) => ({ apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name, namespace: 'web', resourceVersion: rv } });
const line = (type: string, object: unknown) => JSON.stringify({ type, object }) + '\n';

/** A kube handler whose watch requests stay open as streams the test writes to; lists answer at resourceVersion 50. */
function streaming(h: Harness, watchAnswer?: (n: number, res: http.ServerResponse) => boolean) {
  const streams: http.ServerResponse[] = [];
  let watches = 0;
  h.kube.handle((req, res) => {
    if (!req.query.get('watch')) return sendJson(res, 200, { kind: 'DemoItemList', metadata: { resourceVersion: '50' }, items: [item('a', '48'), item('b', '49')] });
    if (watchAnswer?.(watches++, res)) return;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
    streams.push(res);
  });
  return streams;
}

async function startWatch(p: Plugin, r: Record<string, unknown>, resourceVersion?: string) {
  await p.frame.evaluate(
    ([r, rv]) => {
      const w = window as unknown as Record<string, unknown>;
      const events: unknown[] = (w.events = []);
      const errors: unknown[] = (w.errors = []);
      w.watch = window.fundament.k8s.watch(r as never, {
        resourceVersion: rv,
        onEvent: (e) => events.push(e),
        onError: (e) => errors.push({ code: e.code, status: e.status, message: e.message }),
      });
    },
    [r, resourceVersion] as const,
  );
}
const events = (p: Plugin) => p.frame.evaluate(() => (window as unknown as { events: { type: string; object: { metadata: { name: string } } }[] }).events);
const errors = (p: Plugin) => p.frame.evaluate(() => (window as unknown as { errors: { code: string; status?: number; message: string }[] }).errors);
const stop = (p: Plugin) => p.frame.evaluate(() => (window as unknown as { watch: { stop(): void } }).watch.stop());
const watchRequests = (h: Harness) => h.kube.requests().filter((r) => r.query.get('watch'));
const summary = (es: { type: string; object: { metadata: { name: string } } }[]) => es.map((e) => `${e.type} ${e.object.metadata.name}`);

test('watch streams events (split across chunks) and resumes from the last resourceVersion', async ({ h }) => {
  const streams = streaming(h);
  const p = await h.open({ timings: { watchRetryMs: 50 } });
  await startWatch(p, ref, '100');
  await expect.poll(() => streams.length).toBe(1);
  const [first] = watchRequests(h);
  expect(first.path).toBe(PATH);
  expect(Object.fromEntries(first.query)).toEqual({ watch: '1', allowWatchBookmarks: 'true', resourceVersion: '100' });
  expect(first.headers.authorization).toBe('Bearer token-1');

  const added = line('ADDED', item('x', '101'));
  streams[0].write(added.slice(0, 20));
  streams[0].write(added.slice(20) + line('MODIFIED', item('x', '102')).slice(0, 5));
  streams[0].write(line('MODIFIED', item('x', '102')).slice(5) + '\n' + line('DELETED', item('y', '103')));
  streams[0].write(line('BOOKMARK', { kind: 'DemoItem', metadata: { resourceVersion: '105' } }));
  await expect.poll(async () => summary(await events(p))).toEqual(['ADDED x', 'MODIFIED x', 'DELETED y']);
  expect((await events(p))[0]).toEqual({ type: 'ADDED', object: item('x', '101') });

  // The server ends the stream (as on its timeout): the SDK reconnects after the bookmark's version.
  streams[0].end();
  await expect.poll(() => streams.length).toBe(2);
  expect(watchRequests(h)[1].query.get('resourceVersion')).toBe('105');
  streams[1].write(line('ADDED', item('z', '106')));
  await expect.poll(async () => (await events(p)).length).toBe(4);
  expect(await errors(p)).toEqual([]);

  // stop() closes the stream and nothing reconnects.
  const closed = new Promise((r) => streams[1].on('close', r));
  await stop(p);
  await closed;
  await p.frame.evaluate(() => new Promise((r) => setTimeout(r, 200)));
  expect(watchRequests(h)).toHaveLength(2);
  expect(h.kube.requests().every((r) => !r.url.includes('token'))).toBe(true);
});

test('watch without a resourceVersion lists first, reports the items as ADDED, then watches from the list version', async ({ h }) => {
  const streams = streaming(h);
  const p = await h.open();
  await startWatch(p, { ...ref, name: 'a', labelSelector: 'app=demo' });
  await expect.poll(() => streams.length).toBe(1);
  const [list, watch] = h.kube.requests();
  expect(list.path).toBe(PATH);
  expect(Object.fromEntries(list.query)).toEqual({ labelSelector: 'app=demo', fieldSelector: 'metadata.name=a' });
  expect(Object.fromEntries(watch.query)).toEqual({
    labelSelector: 'app=demo', fieldSelector: 'metadata.name=a', watch: '1', allowWatchBookmarks: 'true', resourceVersion: '50',
  });
  expect(summary(await events(p))).toEqual(['ADDED a', 'ADDED b']);
  await stop(p);
});

test('410 Gone on connect → onError gone, a fresh list, and the watch resumes from its version', async ({ h }) => {
  const streams = streaming(h, (n, res) => {
    if (n > 0) return false;
    sendStatus(res, 410, 'Expired', 'too old resource version: 10 (40)');
    return true;
  });
  const p = await h.open({ timings: { watchRetryMs: 50 } });
  await startWatch(p, ref, '10');
  await expect.poll(() => streams.length).toBe(1);
  expect(await errors(p)).toEqual([{ code: 'gone', status: 410, message: 'too old resource version: 10 (40)' }]);
  expect(h.kube.requests().map((r) => r.query.get('resourceVersion') ?? 'list')).toEqual(['10', 'list', '50']);
  expect(summary(await events(p))).toEqual(['ADDED a', 'ADDED b']);
  await stop(p);
});

test('an ERROR event with code 410 in the stream → onError gone, relist, resume', async ({ h }) => {
  const streams = streaming(h);
  const p = await h.open({ timings: { watchRetryMs: 50 } });
  await startWatch(p, ref, '20');
  await expect.poll(() => streams.length).toBe(1);
  streams[0].write(line('MODIFIED', item('a', '21')));
  streams[0].write(line('ERROR', { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too old resource version: 21 (45)', reason: 'Expired', code: 410 }));
  await expect.poll(() => streams.length).toBe(2);
  expect(await errors(p)).toEqual([{ code: 'gone', status: 410, message: 'too old resource version: 21 (45)' }]);
  expect(summary(await events(p))).toEqual(['MODIFIED a', 'ADDED a', 'ADDED b']);
  expect(watchRequests(h).map((r) => r.query.get('resourceVersion'))).toEqual(['20', '50']);
  await stop(p);
});

test('server errors, 429 and broken connections → onError, then reconnect (with backoff) from the same resourceVersion', async ({ h }) => {
  const streams = streaming(h, (n, res) => {
    if (n === 0) return sendStatus(res, 503, 'ServiceUnavailable', 'service account sync pending'), true;
    if (n === 1) return sendStatus(res, 429, 'TooManyRequests', 'slow down'), true;
    return false;
  });
  const p = await h.open({ timings: { watchRetryMs: 50 } });
  await startWatch(p, ref, '30');
  await expect.poll(() => streams.length).toBe(1);
  streams[0].write(line('ADDED', item('c', '31')));
  await expect.poll(async () => (await events(p)).length).toBe(1);
  streams[0].destroy(); // the connection breaks mid-stream
  await expect.poll(() => streams.length).toBe(2);
  const errs = await errors(p);
  expect(errs[0]).toEqual({ code: 'http', status: 503, message: 'service account sync pending' });
  expect(errs[1]).toEqual({ code: 'http', status: 429, message: 'slow down' });
  expect(errs[2].code).toBe('transport');
  expect(watchRequests(h).map((r) => r.query.get('resourceVersion'))).toEqual(['30', '30', '30', '31']);
  await stop(p);
});

test('403 on a watch → onError forbidden and the watch stops', async ({ h }) => {
  streaming(h, (n, res) => (sendStatus(res, 403, 'Forbidden', 'demoitems is forbidden'), true));
  const p = await h.open({ timings: { watchRetryMs: 20 } });
  await startWatch(p, ref, '1');
  await expect.poll(() => errors(p)).toEqual([{ code: 'forbidden', status: 403, message: 'demoitems is forbidden' }]);
  await p.frame.evaluate(() => new Promise((r) => setTimeout(r, 200)));
  expect(watchRequests(h)).toHaveLength(1);
});

test('401 on a watch refreshes the token and reconnects with it', async ({ h }) => {
  const streams = streaming(h, (n, res) => n === 0 && (sendStatus(res, 401, 'Unauthorized', 'expired'), true));
  const p = await h.open();
  await startWatch(p, ref, '5');
  await expect.poll(() => streams.length).toBe(1);
  expect(watchRequests(h).map((r) => r.headers.authorization)).toEqual(['Bearer token-1', 'Bearer token-2']);
  expect(await p.received('plugin:request-token-refresh')).toHaveLength(1);
  expect(await errors(p)).toEqual([]);
  await stop(p);
});

test('stop() right away makes no request', async ({ h }) => {
  streaming(h);
  const p = await h.open();
  await p.frame.evaluate(async () => {
    await window.fundament.init;
    window.fundament.k8s.watch({ version: 'v1', resource: 'pods' }).stop();
    await new Promise((r) => setTimeout(r, 100));
  });
  expect(h.kube.requests()).toHaveLength(0);
});
