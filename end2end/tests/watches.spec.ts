// The tab's shared watches: a generated list, an object's page and the plugin registry hold
// one watch per kind between them; a watch that ends is resumed from the last
// resourceVersion it saw (no list), and a 410 Gone costs one list of the kind.
//
// "The server ends the watch" is played inside the page: an init script wraps window.fetch
// so that the test can end a watch's response body as a server does when it closes the
// stream, or answer the next watch with the ERROR event a too-old version gets (what the
// embedded cluster sends), or play a network that loses connections without a word: a
// watch's bytes stop (`stall`) and new watches are never answered (`hangNext`). Everything
// else is the real stack.
import { test, expect, type Page } from '@playwright/test';
import { hydrated, signIn } from './fixtures';
import { GATEWAY, PROD, send, userToken } from './origins';

const DEMO = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';
const ITEMS = `${GATEWAY}/clusters/${PROD}/apis/demo.fundament.io/v1/namespaces/default/demoitems`;

type Watches = {
  end(plural: string): number;
  stall(plural: string): number;
  beat(plural: string): number;
  goneNext: number;
  hangNext: number;
  hung: string[];
};
declare global {
  interface Window {
    __watches: Watches;
  }
}

function wrapWatches() {
  const real = window.fetch.bind(window);
  const open: { plural: string; end: () => void; stall: () => void; beat: () => void }[] = [];
  const w = {
    goneNext: 0,
    hangNext: 0,
    /** The plurals of the watches never answered. */
    hung: [] as string[],
    /** The open watches of `plural` get no more bytes, and are not closed either; how many. */
    stall(plural: string) {
      const stalling = open.filter((o) => o.plural === plural);
      stalling.forEach((o) => o.stall());
      return stalling.length;
    },
    /** The open watches of `plural` get a blank line, as the console's heartbeat; how many. */
    beat(plural: string) {
      const beating = open.filter((o) => o.plural === plural);
      beating.forEach((o) => o.beat());
      return beating.length;
    },
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
    if (w.hangNext > 0) {
      // A request the network swallowed: no answer ever, until the page gives up on it.
      w.hangNext -= 1;
      w.hung.push(plural);
      return new Promise<Response>((_, reject) => {
        init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      });
    }
    if (w.goneNext > 0) {
      w.goneNext -= 1;
      const gone = { type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 } };
      return new Response(JSON.stringify(gone) + '\n', { status: 200, headers: { 'Content-Type': 'application/json' } });
    }
    const response = await real(input, init);
    if (!response.body) return response;
    const reader = response.body.getReader();
    let ended = false;
    let stalled = false;
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
      stall() {
        stalled = true;
      },
      beat() {
        if (!ended && !stalled) controller.enqueue(new TextEncoder().encode('\n'));
      },
    };
    open.push(entry);
    // As a real fetch's body, this one fails when the page aborts the request.
    init?.signal?.addEventListener('abort', () => {
      if (ended) return;
      ended = true;
      open.splice(open.indexOf(entry), 1);
      controller.error(new DOMException('aborted', 'AbortError'));
      reader.cancel().catch(() => {});
    });
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
      async pull(c) {
        const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        // A stalled connection delivers nothing more, ever.
        if (stalled) await new Promise(() => {});
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

/** alice on the DemoItem list, hydrated, its watch of DemoItems open. */
async function onTheList(page: Page, route: ReturnType<typeof clusterRoute>) {
  await signIn(page, 'alice@acme-corp.com', DEMO);
  await hydrated(page);
  await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
  await expect.poll(() => route.watches('demoitems').length).toBe(1);
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
    await onTheList(page, route);
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

test('a watch silent past 45 s is taken for lost, said so, and resumed from its version once the network answers', async ({ page }) => {
  const name = `watch-silent-${Date.now()}`;
  // The page's own clock: 45 s of silence pass in an instant, and the console's real
  // heartbeats (every 15 s of real time) do not come in between.
  await page.clock.install();
  await page.addInitScript(wrapWatches);
  const route = clusterRoute(page);
  const paused = page.locator('[data-live="paused"]');
  try {
    await onTheList(page, route);
    const listsBefore = route.lists('demoitems').length;

    // Quiet is not dead: a heartbeat's blank line restarts the count, so 60 s with one at
    // 30 s leave the watch as it is.
    await page.clock.runFor(30_000);
    expect(await page.evaluate(() => window.__watches.beat('demoitems'))).toBe(1);
    await page.clock.runFor(30_000);
    expect(route.watches('demoitems'), 'a quiet watch is kept').toHaveLength(1);
    await expect(paused).toBeHidden();

    // The network loses the connection without a word: nothing more arrives on it, and
    // nothing answers a new one. 45 s after its last byte the watch is taken for lost, the
    // list says so (keeping what it shows), and the tab keeps trying.
    await page.evaluate(() => {
      window.__watches.hangNext = 1000;
      window.__watches.stall('demoitems');
    });
    await page.clock.runFor(46_000);
    await expect(paused).toBeVisible();
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    await expect.poll(() => page.evaluate(() => window.__watches.hung.filter((p) => p === 'demoitems').length)).toBeGreaterThanOrEqual(1);

    // The network answers again: the hung attempt is given up on after 45 s, the next one
    // connects, from the version the tab had (no list), and the page is live again.
    await page.evaluate(() => {
      window.__watches.hangNext = 0;
    });
    await page.clock.runFor(46_000);
    await expect(paused).toBeHidden();
    await expect.poll(() => route.watches('demoitems').length).toBe(2);
    expect(route.watches('demoitems')[1].searchParams.get('resourceVersion')).toBeTruthy();
    expect(route.lists('demoitems').length, 'resumed, not listed again').toBe(listsBefore);
    await createItem(name, 'after the network came back');
    await expect(page.getByRole('link', { name })).toBeVisible();
  } finally {
    await deleteItem(name);
  }
});

test('a quiet watch through the console\'s route gets a blank line after 15 s of quiet, and nothing sooner', async ({ page }) => {
  test.setTimeout(60_000);
  await signIn(page, 'alice@acme-corp.com', DEMO);
  await hydrated(page);
  // DemoItems in a namespace no test writes to: after the list's version, nothing happens.
  const seen = await page.evaluate(async (cluster) => {
    const base = `/kube/clusters/${cluster}/apis/demo.fundament.io/v1/namespaces/kube-system/demoitems`;
    const list = await (await fetch(base)).json();
    const controller = new AbortController();
    const started = performance.now();
    const response = await fetch(`${base}?watch=1&resourceVersion=${list.metadata.resourceVersion}`, { signal: controller.signal });
    const reader = response.body!.getReader();
    const chunks: { at: number; text: string }[] = [];
    while (chunks.length < 1) {
      const next = await reader.read();
      if (next.done) break;
      chunks.push({ at: performance.now() - started, text: new TextDecoder().decode(next.value) });
    }
    controller.abort();
    return { status: response.status, type: response.headers.get('content-type'), chunks };
  }, PROD);
  expect(seen.status).toBe(200);
  expect(seen.chunks.map((c) => c.text)).toEqual(['\n']);
  expect(seen.chunks[0].at).toBeGreaterThanOrEqual(14_000);
  expect(seen.chunks[0].at).toBeLessThan(25_000);
});

/** Plays the tab being hidden or shown (a headless browser's tabs are all shown). */
async function setHidden(page: Page, hidden: boolean) {
  await page.evaluate((hide) => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => hide });
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (hide ? 'hidden' : 'visible') });
    document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
  }, hidden);
}

test('a hidden tab lets its watches go and takes them up from their versions when shown: tabs in the background leave connections to the one in front', async ({ context, page }) => {
  test.setTimeout(90_000);
  const name = `watch-hidden-${Date.now()}`;
  // The tab's own clock: its 10 s of grace pass in an instant.
  await page.clock.install();
  const route = clusterRoute(page);
  const aborted: string[] = [];
  page.on('requestfailed', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/kube/') && url.searchParams.get('watch') === '1') aborted.push(url.pathname.split('/').pop() ?? '');
  });
  const others: Page[] = [];
  try {
    await onTheList(page, route);
    await expect.poll(() => route.watches('plugininstallations').length).toBe(1);

    // A glance elsewhere keeps them; hidden for 10 s, the tab lets both go.
    await setHidden(page, true);
    await page.clock.runFor(8_000);
    await setHidden(page, false);
    await setHidden(page, true);
    await page.clock.runFor(9_000);
    expect(aborted, 'kept within the grace').toEqual([]);
    await page.clock.runFor(2_000);
    await expect.poll(() => [...aborted].sort()).toEqual(['demoitems', 'plugininstallations']);

    // Two more tabs of the same browser, each with its two watches. Had the hidden tab kept
    // its two, the three would hold all six of the browser's connections to the console, and
    // the second tab's read after the change below would wait for ever.
    for (let i = 0; i < 2; i++) {
      const other = await context.newPage();
      others.push(other);
      await other.goto(DEMO);
      await hydrated(other);
      await expect(other.getByRole('table', { name: 'DemoItem list' })).toBeVisible();
    }
    const made = await createItem(name, 'made while the first tab was hidden');
    await expect(others[1].getByRole('link', { name })).toBeVisible();
    for (const other of others.splice(0)) await other.close();

    // Shown again: each watch resumes from the version it had (nothing listed), and what
    // changed meanwhile arrives.
    const listsBefore = route.lists('demoitems').length;
    await setHidden(page, false);
    await expect(page.getByRole('link', { name })).toBeVisible();
    expect(route.watches('demoitems')).toHaveLength(2);
    const [first, resumed] = route.watches('demoitems').map((u) => Number(u.searchParams.get('resourceVersion')));
    expect(resumed).toBeGreaterThanOrEqual(first);
    expect(resumed).toBeLessThan(Number(made));
    expect(route.lists('demoitems')).toHaveLength(listsBefore);
    await expect.poll(() => route.watches('plugininstallations').length).toBe(2);
  } finally {
    for (const other of others) await other.close();
    await deleteItem(name);
  }
});

test('offline, a live list says so at once; online again, it reconnects at once instead of after its back-off', async ({ context, page }) => {
  const name = `watch-online-${Date.now()}`;
  // The tab's own clock: a minute offline passes in an instant, so its tries back off to 10 s.
  await page.clock.install();
  const route = clusterRoute(page);
  const paused = page.locator('[data-live="paused"]');
  try {
    await onTheList(page, route);

    await context.setOffline(true);
    await expect(paused).toBeVisible({ timeout: 3_000 });
    await page.clock.runFor(60_000);
    await expect(paused).toBeVisible();
    await expect(page.getByRole('table', { name: 'DemoItem list' })).toBeVisible();

    // Back online: live within moments, not at the next try up to 10 s away.
    await context.setOffline(false);
    await expect(paused).toBeHidden({ timeout: 3_000 });
    await createItem(name, 'made after the network came back');
    await expect(page.getByRole('link', { name })).toBeVisible();
  } finally {
    await deleteItem(name);
  }
});
