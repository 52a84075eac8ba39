// The tab's shared watches: a generated list, an object's page and the plugin registry hold
// one watch per kind between them; a watch that ends is resumed from the last
// resourceVersion it saw (no list), and a 410 Gone costs one list of the kind.
//
// "The server ends the watch" is played inside the page: an init script wraps window.fetch
// so that the test can end a watch's response body as a server does when it closes the
// stream, or answer the next watch with the ERROR event a too-old version gets (what the
// embedded cluster sends). Everything else is the real stack.
import { test, expect, type Page } from '@playwright/test';
import { hydrated, signIn } from './fixtures';
import { GATEWAY, PROD, send, userToken } from './origins';

const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';
const ITEMS = `${GATEWAY}/clusters/${PROD}/apis/demo.fundament.io/v1/namespaces/default/demoitems`;

type Watches = { end(plural: string): number; goneNext: number };
declare global {
  interface Window {
    __watches: Watches;
  }
}

function wrapWatches() {
  const real = window.fetch.bind(window);
  const open: { plural: string; end: () => void }[] = [];
  const w = {
    goneNext: 0,
    /** Ends the open watches of `plural` as a server closing them would; how many. */
    end(plural: string) {
      const ending = open.filter((o) => o.plural === plural);
      ending.forEach((o) => o.end());
      return ending.length;
    },
  };
  (window as unknown as { __watches: typeof w }).__watches = w;
  window.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, location.href);
    if (url.searchParams.get('watch') !== '1') return real(input, init);
    const plural = url.pathname.split('/').pop() ?? '';
    if (w.goneNext > 0) {
      w.goneNext -= 1;
      const gone = { type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 } };
      return new Response(JSON.stringify(gone) + '\n', { status: 200, headers: { 'Content-Type': 'application/json' } });
    }
    const response = await real(input, init);
    if (!response.body) return response;
    const reader = response.body.getReader();
    let ended = false;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const entry = {
      plural,
      end() {
        if (ended) return;
        ended = true;
        controller.close();
        reader.cancel().catch(() => {});
        open.splice(open.indexOf(entry), 1);
      },
    };
    open.push(entry);
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
      async pull(c) {
        const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (ended) return;
        if (next.done) {
          ended = true;
          open.splice(open.indexOf(entry), 1);
          c.close();
        } else c.enqueue(next.value);
      },
      cancel() {
        ended = true;
        reader.cancel().catch(() => {});
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** Every request the page makes to the console's cluster route. */
function clusterRoute(page: Page) {
  const urls: URL[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/kube/clusters/')) urls.push(url);
  });
  const of = (plural: string) => urls.filter((u) => u.pathname.endsWith(`/${plural}`));
  return {
    watches: (plural: string) => of(plural).filter((u) => u.searchParams.get('watch') === '1'),
    lists: (plural: string) => of(plural).filter((u) => u.searchParams.get('watch') !== '1'),
  };
}

async function createItem(name: string, message: string): Promise<string> {
  const answer = await send(ITEMS, {
    method: 'POST',
    headers: { Authorization: `Bearer ${userToken('alice@acme-corp.com')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'demo.fundament.io/v1', kind: 'DemoItem', metadata: { name, namespace: 'default' }, spec: { message } }),
  });
  expect(answer.status, answer.body).toBe(201);
  return JSON.parse(answer.body).metadata.resourceVersion;
}

async function deleteItem(name: string) {
  await send(`${ITEMS}/${name}`, { method: 'DELETE', headers: { Authorization: `Bearer ${userToken('alice@acme-corp.com')}` } });
}

test('a list, an object page and the registry hold one watch per kind; an ended watch resumes from its version; 410 costs one list', async ({ page }) => {
  const stamp = Date.now();
  const names = [`watch-a-${stamp}`, `watch-b-${stamp}`, `watch-c-${stamp}`];
  await page.addInitScript(wrapWatches);
  const route = clusterRoute(page);
  try {
    await signIn(page, 'alice@acme-corp.com', DEMO);
    await hydrated(page);
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    await expect.poll(() => route.watches('demoitems').length).toBe(1);
    await expect.poll(() => route.watches('plugininstallations').length).toBe(1);

    // An object's page and back: the same watch of the kind serves all three views.
    await page.getByRole('link', { name: 'hello-world' }).click();
    await expect(page.getByRole('region', { name: 'Spec' })).toContainText('Hello, world!');
    await page.goBack();
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    const a = await createItem(names[0], 'first');
    await expect(page.getByRole('link', { name: names[0] })).toBeVisible();
    expect(route.watches('demoitems'), 'one watch of DemoItems for the list, the object and the list again').toHaveLength(1);
    expect(route.watches('plugininstallations')).toHaveLength(1);

    // The server ends the watch; a change lands before the tab watches again: it resumes
    // from the last version it saw, so the change arrives, and nothing is listed. That version
    // is the first item's or later (the other worker's tests change DemoItems too), and before
    // the change made while the watch was down.
    const listsBefore = route.lists('demoitems').length;
    expect(await page.evaluate(() => window.__watches.end('demoitems'))).toBe(1);
    const b = await createItem(names[1], 'while the watch was down');
    await expect(page.getByRole('link', { name: names[1] })).toBeVisible();
    const resumed = route.watches('demoitems');
    expect(resumed).toHaveLength(2);
    const from = Number(resumed[1].searchParams.get('resourceVersion'));
    expect(from).toBeGreaterThanOrEqual(Number(a));
    expect(from).toBeLessThan(Number(b));
    expect(route.lists('demoitems').length, 'no list of DemoItems on the cluster route').toBe(listsBefore);

    // A version too old to resume from (410): one list, then a watch from that list's version.
    await page.evaluate(() => {
      window.__watches.goneNext = 1;
      window.__watches.end('demoitems');
    });
    await expect.poll(() => route.lists('demoitems').length).toBe(listsBefore + 1);
    const relist = route.lists('demoitems')[listsBefore];
    expect(relist.searchParams.get('limit')).toBe('1');
    await expect.poll(() => route.watches('demoitems').length).toBe(3);
    const c = await createItem(names[2], 'after the relist');
    await expect(page.getByRole('link', { name: names[2] })).toBeVisible();
    expect(Number(route.watches('demoitems')[2].searchParams.get('resourceVersion'))).toBeGreaterThanOrEqual(Number(a));
    expect(Number(route.watches('demoitems')[2].searchParams.get('resourceVersion'))).toBeLessThan(Number(c));
    expect(route.lists('demoitems')).toHaveLength(listsBefore + 1);
    expect(route.watches('plugininstallations'), 'the registry kept its own watch throughout').toHaveLength(1);
  } finally {
    for (const name of names) await deleteItem(name);
  }
});
