// Tests of scripts/site-files.mjs (node --test; scripts/test runs it).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { resilientChunkLoads, sortSharedImports } from './site-files.mjs';

// The two lines of wasm_split_cli_support 0.2.3's loader that name the shared exports.
const loader = (names) => `import { initSync } from "./console.js";
let sharedImports = undefined;
function getSharedImports() {
    if (sharedImports === undefined) {
        sharedImports = { __wasm_split: {  } };
        const { ${names}  } = initSync(undefined, undefined);
        Object.assign(sharedImports.__wasm_split, { ${names}  });
    }
    return sharedImports;
}
function wrapAsyncCb(callee) { return async (callbackIndex, callbackData) => { callee(); }; }
`;

test('the shared imports come out in one order, whatever order the splitter wrote', () => {
  const a = sortSharedImports(loader('__indirect_function_table, __wasm_split_shared0, memory,'));
  const b = sortSharedImports(loader('memory, __indirect_function_table, __wasm_split_shared0,'));
  assert.equal(a, b);
  assert.equal(a, loader('__indirect_function_table, __wasm_split_shared0, memory,'));
  // Nothing else in the loader changes.
  assert.equal(sortSharedImports(a), a);
});

test('a loader without exactly the two lists stops the build', () => {
  assert.throws(() => sortSharedImports('export function x() {}'), /0 times, not twice/);
  const once = loader('memory,').replace(/\s*Object\.assign[^\n]*\n/, '\n');
  assert.throws(() => sortSharedImports(once), /1 times, not twice/);
});

// wasm_split_cli_support 0.2.3's load callback, as it writes it.
const generatedCallback = `function wrapAsyncCb(callee) {
    return async (callbackIndex, callbackData) => {
        let success;
        try {
            await callee();
            success = true;
        } catch (e) {
            console.error(e);
            success = false;
        } finally {
            const sharedImports = getSharedImports();
            sharedImports.__wasm_split.__indirect_function_table.get(callbackIndex)(callbackData, success);
        }
    }
}
`;

/** The replaced callback, run against a page made of fakes: a clock that moves only when the code
 *  waits, clicks on links, `location.assign`, and the module's callback. */
function page({ prefetch } = {}) {
  let clock = 0;
  const scheduled = [];
  const clicks = [];
  const assigned = [];
  const reported = [];
  class Element {
    constructor(href) { this.href = href; this.target = ''; }
    closest() { return this; }
    hasAttribute() { return false; }
  }
  const online = [];
  const shown = [];
  const navigator = { onLine: true };
  const document = {
    getElementById: (id) => shown.find((n) => n.id === id && n.attached) ?? null,
    createElement: () => ({ attached: false, setAttribute(name, value) { this[name] = value; }, remove() { this.attached = false; } }),
    body: { append: (node) => { node.attached = true; shown.push(node); } },
  };
  const env = {
    addEventListener: (type, listener) => (type === 'click' ? clicks.push(listener) : type === 'online' && online.push(listener)),
    navigator,
    document,
    location: { href: 'http://console.test/', origin: 'http://console.test', assign: (href) => assigned.push({ href, at: clock }) },
    Element,
    URL,
    performance: { now: () => clock },
    setTimeout: (resolve, ms) => {
      clock += ms;
      for (const due of scheduled.filter((s) => s.at <= clock)) {
        scheduled.splice(scheduled.indexOf(due), 1);
        due.run();
      }
      setImmediate(resolve);
    },
    console: { error() {} },
    globalThis: { __fundamentPrefetch: prefetch },
    getSharedImports: () => ({ __wasm_split: { __indirect_function_table: { get: () => (_, ok) => reported.push(ok) } } }),
  };
  const replaced = resilientChunkLoads(`${generatedCallback}${aFetch}`);
  const body = replaced.slice(0, replaced.indexOf('const __chunk_9'));
  const wrapAsyncCb = new Function(...Object.keys(env), `${body}\nreturn wrapAsyncCb;`)(...Object.values(env));
  const click = (path) => clicks.forEach((listener) => listener({ button: 0, target: new Element(`http://console.test${path}`) }));
  const navigate = (path) => env.globalThis.__fundamentNavigating(path);
  return {
    wrapAsyncCb, click, navigate, assigned, reported, navigator,
    /** The notices on the page now. */
    notices: () => shown.filter((n) => n.attached),
    /** The browser is online again. */
    backOnline: () => { navigator.onLine = true; online.splice(0).forEach((listener) => listener()); },
    now: () => clock,
    advance: (ms) => { clock += ms; },
    /** Runs `run` once the clock has passed `at` (while the code waits). */
    later: (at, run) => scheduled.push({ at, run }),
  };
}

/** A chunk's load that fails `failures` times, then loads; `onAttempt(n)` runs before each try. */
function chunk(failures, onAttempt = () => {}) {
  let attempts = 0;
  const load = async () => {
    attempts += 1;
    onAttempt(attempts);
    if (attempts <= failures) throw new TypeError('Failed to fetch');
  };
  return { load, attempts: () => attempts };
}

/** One chunk's fetcher, as wasm_split_cli_support 0.2.3 writes it. */
const aFetch = `const __chunk_9 = makeLoad(() => {
    const src = fetch(new URL("./chunk_9.wasm", import.meta.url));
    return async (imports) => (WebAssembly.instantiateStreaming(src, imports));
}
, []);
`;

test("a chunk's fetch that fails while its dependencies load is no uncaught error, and still fails its load", async () => {
  const out = resilientChunkLoads(`${generatedCallback}${aFetch}`);
  assert.equal((out.match(/src\.catch\(\(\) => \{\}\);/g) ?? []).length, 1, out);
  const unhandled = [];
  const listener = (reason) => unhandled.push(reason);
  process.on('unhandledRejection', listener);
  try {
    const makeLoad = (fetcher) => fetcher;
    const fetch = () => Promise.reject(new TypeError('Failed to fetch'));
    const WebAssembly = { instantiateStreaming: async (src) => src };
    const fetcher = new Function('makeLoad', 'fetch', 'WebAssembly', `${out.slice(out.indexOf('const __chunk_9')).replaceAll('import.meta.url', '"http://console.test/"')}return __chunk_9;`)(
      makeLoad, fetch, WebAssembly);
    const instantiate = fetcher();
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(unhandled, [], 'nothing uncaught while the fetch waits for its dependencies');
    await assert.rejects(instantiate({}), /Failed to fetch/);
  } finally {
    process.off('unhandledRejection', listener);
  }
});

test('a chunk that fails to load is tried again, and the module hears only of its success', async () => {
  const p = page();
  const c = chunk(2);
  await p.wrapAsyncCb(c.load)(1, 0);
  assert.equal(c.attempts(), 3);
  assert.deepEqual(p.reported, [true]);
  assert.deepEqual(p.assigned, []);
});

test('a click waiting on a chunk that keeps failing goes to the server after the third failure', async () => {
  const p = page();
  const c = chunk(Infinity, (n) => n === 1 && p.click('/clusters'));
  await p.wrapAsyncCb(c.load)(1, 0);
  assert.deepEqual(p.assigned.map((a) => a.href), ['http://console.test/clusters']);
  assert.equal(c.attempts(), 3);
  assert.deepEqual(p.reported, [], 'never reported: the page is going');
});

test('a navigation the console starts itself goes to the server once its chunk fails three times', async () => {
  const p = page();
  p.navigate('/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io/x?ns=default');
  const c = chunk(Infinity);
  await p.wrapAsyncCb(c.load)(1, 0);
  assert.deepEqual(p.assigned.map((a) => a.href), ['http://console.test/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io/x?ns=default']);
  assert.equal(c.attempts(), 3);

  const elsewhere = page();
  elsewhere.navigate('https://evil.test/');
  await elsewhere.wrapAsyncCb(chunk(6).load)(1, 0);
  assert.deepEqual(elsewhere.assigned, [], "only the console's own pages");
  assert.deepEqual(elsewhere.reported, [true]);
});

test('without a click, a failing chunk is tried again at growing intervals and never reloads the page', async () => {
  const p = page();
  const tried = [];
  const c = chunk(12, () => tried.push(p.now()));
  await p.wrapAsyncCb(c.load)(1, 0);
  assert.deepEqual(p.assigned, []);
  assert.deepEqual(p.reported, [true]);
  const gaps = tried.slice(1).map((t, i) => t - tried[i]);
  assert.deepEqual(gaps.slice(0, 4), [300, 500, 1000, 2000], 'waits doubling from 250 ms (in 100 ms steps)');
  assert.ok(gaps.every((g) => g <= 10_000), `${gaps}`);
});

test('offline, a click waiting on a failing chunk keeps the page, says so, and loads once online', async () => {
  const p = page();
  p.navigator.onLine = false;
  let settled = false;
  let attempts = 0;
  // Fails while the browser is offline.
  const chunkLoad = async () => {
    attempts += 1;
    if (attempts === 1) p.click('/clusters');
    if (!p.navigator.onLine) throw new TypeError('Failed to fetch');
  };
  const load = p.wrapAsyncCb(chunkLoad)(1, 0).then(() => { settled = true; });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(settled, false, 'waiting for the network');
  assert.equal(attempts, 3);
  assert.deepEqual(p.assigned, [], 'no page load: the browser would show its offline page instead of this one');
  assert.deepEqual(p.notices().map((n) => [n.id, n.role, n.textContent]), [
    ['offline-wait', 'status', 'You are offline: the page opens once the network is back.'],
  ]);
  // Online again: tried at once; this time it loads, in the page.
  const before = p.now();
  p.backOnline();
  await load;
  assert.equal(attempts, 4, 'one more try');
  assert.equal(p.now(), before, 'straight away');
  assert.deepEqual(p.reported, [true]);
  assert.deepEqual(p.notices(), []);
  assert.deepEqual(p.assigned, []);
});

test("a prefetch's failing load goes to the server only for a click on its own link", async () => {
  const other = page({ prefetch: '/plugins' });
  const c = chunk(12, (n) => n === 1 && other.click('/clusters'));
  await other.wrapAsyncCb(c.load)(1, 0);
  assert.deepEqual(other.assigned, [], 'a click elsewhere waits on its own load');
  assert.deepEqual(other.reported, [true]);

  const same = page({ prefetch: '/plugins' });
  const d = chunk(Infinity, (n) => n === 2 && same.click('/plugins'));
  await same.wrapAsyncCb(d.load)(1, 0);
  assert.deepEqual(same.assigned.map((a) => a.href), ['http://console.test/plugins']);
});

test("a click on a prefetch's link while it waits to try again tries at once", async () => {
  const p = page({ prefetch: '/plugins' });
  const tried = [];
  // Fails at 0, 300, 800 and 1,800 ms; the next try would be at 3,800 ms.
  const c = chunk(4, () => tried.push(p.now()));
  p.later(2_500, () => p.click('/plugins'));
  await p.wrapAsyncCb(c.load)(1, 0);
  assert.deepEqual(tried, [0, 300, 800, 1_800, 2_500]);
  assert.deepEqual(p.assigned, [], 'the network is back: no page load');
  assert.deepEqual(p.reported, [true]);
});

test('a click made well before the load began is not what the load is for', async () => {
  const stale = page();
  stale.click('/clusters');
  stale.advance(2_000);
  await stale.wrapAsyncCb(chunk(6).load)(1, 0);
  assert.deepEqual(stale.assigned, []);
  assert.deepEqual(stale.reported, [true]);

  const recent = page();
  recent.click('/clusters');
  recent.advance(1_000);
  await recent.wrapAsyncCb(chunk(Infinity).load)(1, 0);
  assert.deepEqual(recent.assigned.map((a) => a.href), ['http://console.test/clusters']);
});

test('a loader whose load callback is not the expected one stops the build', () => {
  assert.throws(() => resilientChunkLoads('export function x() {}'), /0 times, not once/);
  assert.throws(() => resilientChunkLoads(generatedCallback), /starts no chunk fetch/);
  assert.throws(() => resilientChunkLoads(`${generatedCallback}${generatedCallback}${aFetch}`), /2 times, not once/);
  // A new version of the splitter that reports failures otherwise is looked at, not patched blindly.
  assert.throws(() => resilientChunkLoads(generatedCallback.replace('(callbackData, success)', '(callbackData, ok)') + aFetch), /not once/);
});
