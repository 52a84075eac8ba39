// What the SDK does to and for the page: theme class, plugin:resize, and the navigation messages.
import { test, expect, waitFor } from './harness';

const bodyClass = `document.body.className`;

test('theme: the body class comes from fundament:init', async ({ h }) => {
  const p = await h.open({ init: { theme: 'dark' } });
  await expect.poll(() => p.frame.evaluate(bodyClass)).toBe('dark');
});

test('theme: fundament:theme-changed switches the class and calls onThemeChange listeners', async ({ h }) => {
  const p = await h.open();
  await p.frame.evaluate(() => {
    const w = window as unknown as { calls: string[]; off: () => void };
    w.calls = [];
    window.fundament.onThemeChange(() => { throw new Error('a broken listener'); });
    window.fundament.onThemeChange((t) => w.calls.push('a:' + t));
    w.off = window.fundament.onThemeChange((t) => w.calls.push('b:' + t));
    return window.fundament.init;
  });
  expect(await p.frame.evaluate(bodyClass)).toBe('light');
  await p.send({ type: 'fundament:theme-changed', theme: 'dark' });
  await expect.poll(() => p.frame.evaluate(bodyClass)).toBe('dark');
  await p.frame.evaluate(() => (window as unknown as { off: () => void }).off());
  await p.send({ type: 'fundament:theme-changed', theme: 'purple' }); // not a theme: ignored
  await p.send({ type: 'fundament:theme-changed', theme: 'light' });
  await expect.poll(() => p.frame.evaluate(bodyClass)).toBe('light');
  expect(await p.frame.evaluate(() => (window as unknown as { calls: string[] }).calls)).toEqual(['a:dark', 'b:dark', 'a:light']);
  // Classes of the page other than the theme are kept.
  await p.frame.evaluate(() => document.body.classList.add('mine'));
  await p.send({ type: 'fundament:theme-changed', theme: 'dark' });
  await expect.poll(() => p.frame.evaluate(bodyClass)).toBe('mine dark');
});

test('resize: plugin:ready comes at once, the first plugin:resize only after the stylesheet has loaded', async ({ h }) => {
  h.servers.cssDelayMs = 600;
  const p = await h.open();
  const [first] = await waitFor(p, 'plugin:resize');
  const [ready] = await p.received('plugin:ready');
  const cssLoadedAt = await p.frame.evaluate(() => window.cssLoadedAt);
  expect(cssLoadedAt).toBeGreaterThan(0);
  expect(ready.at).toBeLessThan(cssLoadedAt!);
  expect(first.at).toBeGreaterThanOrEqual(cssLoadedAt!);
  // The first report already has the styled height (unstyled, the body's 8px margins would add 16px).
  const height = await p.frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
  expect(first.data).toEqual({ type: 'plugin:resize', height });
  expect(first).toMatchObject({ origin: h.servers.pluginOrigin, fromPlugin: true });
  expect(await p.frame.evaluate(() => getComputedStyle(document.body).marginTop)).toBe('0px');
  // The host applied it.
  expect(await p.page.evaluate(() => window.host.frame.style.height)).toBe(`${height}px`);
});

test('resize: changes within the debounce window give one message with the final height', async ({ h }) => {
  // A window far wider than the 5 changes 20 ms apart: on a busy machine the page's timers
  // ran late, the changes spread over more than 300 ms, and two messages were right.
  const p = await h.open({ timings: { resizeDebounceMs: 2_000 } });
  const [first] = await waitFor(p, 'plugin:resize');
  await p.frame.evaluate(async () => {
    for (let i = 0; i < 5; i++) {
      const d = document.createElement('div');
      d.style.height = '20px'; // CSSOM style: allowed by the CSP (no inline style attribute in markup)
      document.body.appendChild(d);
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  const all = await waitFor(p, 'plugin:resize', 2);
  await p.frame.evaluate(() => new Promise((r) => setTimeout(r, 2_400)));
  expect(await p.received('plugin:resize')).toHaveLength(2);
  expect(all[1].data.height).toBe((first.data.height as number) + 100);
});

test('resize: only a changed height is reported (a width change alone posts nothing)', async ({ h }) => {
  const p = await h.open();
  const [first] = await waitFor(p, 'plugin:resize');
  await p.page.evaluate(() => (window.host.frame.style.width = '520px'));
  await expect.poll(() => p.frame.evaluate(() => document.documentElement.clientWidth)).toBe(520);
  await p.frame.evaluate(() => new Promise((r) => setTimeout(r, 200))); // > the 50 ms debounce
  expect(await p.received('plugin:resize')).toHaveLength(1);

  await p.frame.evaluate(() => {
    const d = document.createElement('div');
    d.style.height = '37px';
    document.body.appendChild(d);
  });
  const all = await waitFor(p, 'plugin:resize', 2);
  expect(all[1].data.height).toBe((first.data.height as number) + 37);
  // Shrinking is reported too.
  await p.frame.evaluate(() => document.body.lastElementChild!.remove());
  const again = await waitFor(p, 'plugin:resize', 3);
  expect(again[2].data.height).toBe(first.data.height);
});

test('resize: reported before init too (to *), then to the pinned origin', async ({ h }) => {
  const p = await h.open({ autoInit: false });
  const [first] = await waitFor(p, 'plugin:resize');
  expect(first).toMatchObject({ origin: h.servers.pluginOrigin, fromPlugin: true });
  // Pinned elsewhere, later reports no longer reach this host.
  await p.synthetic({ ...h.defaultInit(), type: 'fundament:init' }, 'http://127.0.0.9:9999');
  await p.frame.evaluate(() => {
    const d = document.createElement('div');
    d.style.height = '50px';
    document.body.appendChild(d);
  });
  await p.frame.evaluate(() => new Promise((r) => setTimeout(r, 200)));
  expect(await p.received('plugin:resize')).toHaveLength(1);
});

test('navigate, create and back post plugin:navigate, plugin:create and plugin:navigate-back to the pinned origin', async ({ h }) => {
  const p = await h.open();
  await p.frame.evaluate(async () => {
    await window.fundament.init;
    window.fundament.navigate('www', 'web');
    window.fundament.navigate('letsencrypt');
    window.fundament.create();
    window.fundament.back();
  });
  const nav = await waitFor(p, 'plugin:navigate-back');
  const msgs = (await p.received()).filter((m) => /^plugin:(navigate|create|navigate-back)$/.test(m.type));
  expect(msgs.map((m) => m.data)).toEqual([
    { type: 'plugin:navigate', name: 'www', namespace: 'web' },
    { type: 'plugin:navigate', name: 'letsencrypt' },
    { type: 'plugin:create' },
    { type: 'plugin:navigate-back' },
  ]);
  for (const m of msgs) expect(m).toMatchObject({ origin: h.servers.pluginOrigin, fromPlugin: true });
  expect(nav).toHaveLength(1);
});

test('navigation messages wait for init (no origin to send them to before)', async ({ h }) => {
  const p = await h.open({ autoInit: false });
  await p.frame.evaluate(() => {
    window.fundament.navigate('www', 'web');
    window.fundament.create();
  });
  await p.frame.evaluate(() => new Promise((r) => setTimeout(r, 100)));
  expect(await p.received('plugin:navigate')).toHaveLength(0);
  await p.init();
  await waitFor(p, 'plugin:create');
  expect((await p.received('plugin:navigate')).map((m) => m.data)).toEqual([{ type: 'plugin:navigate', name: 'www', namespace: 'web' }]);
});

test('navigation messages never go to an origin other than the pinned one', async ({ h }) => {
  const p = await h.open({ autoInit: false });
  await p.synthetic({ ...h.defaultInit(), type: 'fundament:init' }, 'http://127.0.0.9:9999');
  await p.frame.evaluate(async () => {
    await window.fundament.init;
    window.fundament.navigate('www');
    window.fundament.create();
    window.fundament.back();
  });
  await p.frame.evaluate(() => new Promise((r) => setTimeout(r, 100)));
  expect((await p.received()).map((m) => m.type).filter((t) => t !== 'plugin:ready' && t !== 'plugin:resize')).toEqual([]);
});

test('navigate needs a name', async ({ h }) => {
  const p = await h.open();
  const names = await p.frame.evaluate(() =>
    [undefined, '', 7].map((n) => {
      try {
        window.fundament.navigate(n as string);
        return 'posted';
      } catch (e) {
        return (e as Error).name;
      }
    }));
  expect(names).toEqual(['TypeError', 'TypeError', 'TypeError']);
});

test('the plugin page runs under the strict plugin CSP without violations', async ({ h }) => {
  const p = await h.open();
  await p.frame.evaluate(async () => {
    await window.fundament.init;
    await window.fundament.k8s.list({ version: 'v1', resource: 'pods' });
  });
  await waitFor(p, 'plugin:resize');
  expect(await p.frame.evaluate(() => window.cspViolations)).toEqual([]);
  // The policy is in force: an inline style element is reported.
  await p.frame.evaluate(() => {
    const style = document.createElement('style');
    style.textContent = 'body { color: red }';
    document.head.appendChild(style);
  });
  await expect.poll(() => p.frame.evaluate(() => window.cspViolations)).toEqual([expect.stringMatching(/^style-src-elem inline/)]);
  expect(await p.frame.evaluate(() => getComputedStyle(document.body).color)).not.toBe('rgb(255, 0, 0)');
});
