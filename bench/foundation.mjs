// Foundation benchmark: bundle sizes (the wasm split by route: every chunk, and what a
// first visit to the signed-in home and to a plugin page downloads), server render time,
// idle memory, first paint, client-side navigation into a route whose chunk is not loaded
// yet, and twiggy's top contributors per chunk. Run with scripts/bench (which builds the
// release site first). Writes bench/results/foundation.json and prints a summary. Figures
// are medians and percentiles: these machines are noisy, so never read one run as a trend.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium } from '@playwright/test';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
const siteRoot = process.env.FUNDAMENT_SITE_ROOT ?? path.join(root, 'target/site');
const port = Number(process.env.BENCH_PORT ?? 3900);
const base = `http://127.0.0.1:${port}`;
const requests = Number(process.env.BENCH_REQUESTS ?? 1000);

// The site's files are the same on every visit (hashed names): each is compressed once. (A page
// differs per visit, in its nonce at least.)
const compressed = new Map();
const brotliOnce = (name, buf) => {
  if (!name.startsWith('/pkg/')) return brotli(buf);
  const key = `${name} ${buf.length}`;
  if (!compressed.has(key)) compressed.set(key, brotli(buf));
  return compressed.get(key);
};
const brotli = (buf) => zlib.brotliCompressSync(buf, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const round = (x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const pluginPage = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';

// Every file of the built bundle: the entry JS, the CSS, the main wasm and each chunk.
function sizes() {
  const pkg = path.join(siteRoot, 'pkg');
  const file = (name) => {
    const buf = fs.readFileSync(path.join(pkg, name));
    return { name, raw: buf.length, brotli: brotli(buf) };
  };
  const names = fs.readdirSync(pkg).filter((n) => /\.(wasm|js|css)$/.test(n));
  const main = (ext) => names.find((n) => new RegExp(`^console(\\.[A-Za-z0-9_-]{22})?\\.${ext}$`).test(n));
  return {
    wasm: file(main('wasm')), js: file(main('js')), css: file(main('css')),
    chunks: names.filter((n) => n.endsWith('.wasm') && n !== main('wasm')).map(file),
    loader: names.filter((n) => n.startsWith('__wasm_split.')).map(file),
  };
}

// twiggy's largest code and data items (shallow bytes, before wasm-opt, which drops the
// names). The served chunks carry no names, so the named figures come from the linker's
// output: the main chunk after splitting (what every page loads) and the whole module
// before splitting (every chunk's code).
function twiggyTop() {
  const tools = process.env.FUNDAMENT_TOOLS_DIR ?? path.join(process.env.HOME, '.cache/fundament/tools');
  const target = process.env.CARGO_TARGET_DIR ?? path.join(process.env.HOME, '.cache/fundament/target');
  const dir = path.join(target, 'front/wasm32-unknown-unknown/wasm-release');
  const top = (file) => {
    const out = execFileSync(path.join(tools, 'bin/twiggy'), ['top', '-n', '60', '-f', 'json', path.join(dir, file)],
      { encoding: 'utf8', maxBuffer: 256 << 20 });
    return JSON.parse(out)
      .filter((i) => !/^(custom section|"function names"|table\[|elem\[|\.\.\. and|Σ)/.test(i.name))
      .slice(0, 25)
      .map((i) => ({ item: i.name, shallow_bytes: i.shallow_size }));
  };
  try {
    return { main_chunk: top('frontend_split.wasm'), whole_module: top('frontend.wasm') };
  } catch (e) {
    return { error: String(e.message ?? e).split('\n')[0] };
  }
}

async function startServer() {
  const child = spawn(bin, ['dev', '--site-root', siteRoot, '--console-listen', `127.0.0.1:${port}`,
    '--console-url', base], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, RUST_LOG: 'warn' } });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${base}/`)).ok) return child;
    } catch { /* not up yet */ }
    if (child.exitCode !== null) throw new Error(`fundament dev exited: ${stderr}`);
    await sleep(100);
  }
  throw new Error('fundament dev did not start within 10 s');
}

async function signIn() {
  const res = await fetch(`${base}/api/sign-in`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', origin: base },
    body: 'email=alice%40acme-corp.com&next=%2F',
  });
  return res.headers.get('set-cookie').split(';')[0];
}

async function renderTimes(cookie) {
  const server = [], roundTrip = [];
  let html = 0;
  for (let i = 0; i < requests + 50; i++) {
    const t0 = performance.now();
    const res = await fetch(`${base}/`, { headers: { cookie, accept: 'text/html', 'accept-encoding': 'identity' } });
    const body = await res.text();
    const t1 = performance.now();
    if (!res.ok || !body.includes('aria-label="Sidebar"')) throw new Error(`unexpected page: ${res.status}`);
    if (i < 50) continue; // warm-up
    server.push(Number(/dur=([\d.]+)/.exec(res.headers.get('server-timing'))[1]));
    roundTrip.push(t1 - t0);
    html = body.length;
  }
  return { server, roundTrip, html };
}

async function signedInContext(browser, cookie) {
  const context = await browser.newContext();
  // __Host- cookies must be Secure with Path=/ (Chromium treats http://localhost as secure).
  const [name, value] = [cookie.slice(0, cookie.indexOf('=')), cookie.slice(cookie.indexOf('=') + 1)];
  await context.addCookies([{ name, value, domain: new URL(base).hostname, path: '/', secure: true, httpOnly: true, sameSite: 'Strict' }]);
  return context;
}

const launch = () => chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });

// What a first visit to `url` downloads from the console's origin (HTML, CSS, JS, wasm
// chunks), each at brotli 11, with an empty cache; also its first contentful paint.
async function visit(browser, cookie, url) {
  const context = await signedInContext(browser, cookie);
  const page = await context.newPage();
  // When the body was marked hydrated, as the page's own clock has it: read from Node after
  // `waitForSelector`, the figure also held the time Node spent compressing the responses
  // below (brotli 11 of the main wasm blocks its event loop for over a second).
  await page.addInitScript(() => {
    new MutationObserver((_, observer) => {
      if (document.body?.hasAttribute('data-hydrated')) {
        window.__hydratedAt = performance.now();
        observer.disconnect();
      }
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-hydrated'] });
  });
  const pending = [];
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (u.origin !== new URL(base).origin) return;
    if (r.request().resourceType() !== 'document' && !u.pathname.startsWith('/pkg/')) return;
    // Compressed only once the page is measured: brotli 11 of the main wasm takes a core for
    // over a second, and on this 2-core machine that core is the browser's while it paints.
    pending.push(r.body().then((body) => ({ path: u.pathname, body }), () => null));
  });
  await page.goto(`${base}${url}`);
  await page.waitForSelector('body[data-hydrated]');
  const now = await page.evaluate(() => window.__hydratedAt);
  await page.waitForLoadState('load');
  const m = await page.evaluate(() => ({ fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime }));
  m.now = now;
  // A preloaded file is fetched once, whatever the events say: counted once.
  const bodies = (await Promise.all(pending)).filter(Boolean).filter((f, i, all) => all.findIndex((g) => g.path === f.path) === i);
  await context.close();
  const files = bodies.map(({ path, body }) => ({ path, brotli: brotliOnce(path, body) }));
  return { ...m, files, bytes: files.reduce((sum, f) => sum + f.brotli, 0) };
}

async function firstPaint(browser, cookie) {
  const paints = [], hydrated = [];
  let home, plugin;
  for (let i = 0; i < 7; i++) {
    home = await visit(browser, cookie, '/');
    paints.push(home.fcp); hydrated.push(home.now);
  }
  const pluginPaints = [];
  for (let i = 0; i < 5; i++) {
    plugin = await visit(browser, cookie, pluginPage);
    pluginPaints.push(plugin.fcp);
  }
  return { paints, hydrated, home, plugin, pluginPaints };
}

// From a click on a sidebar link (no hover first, so no prefetch) on a hydrated page to
// the page drawn, with the route's chunk not loaded in the page yet (and not cached).
async function navigations(browser, cookie) {
  const targets = {
    clusters: { from: '/', link: 'Clusters', drawn: { selector: 'main h1', text: 'Clusters' } },
    // The project's sidebar lists the plugin's pages.
    plugin_page: { from: '/projects/webshop', link: 'Certificates', drawn: { selector: '[data-plugin-frame]' } },
  };
  const out = {};
  for (const [key, { from, link, drawn }] of Object.entries(targets)) {
    const ms = [];
    for (let i = 0; i < 11; i++) {
      const context = await signedInContext(browser, cookie);
      const page = await context.newPage();
      await page.goto(`${base}${from}`);
      await page.waitForSelector('body[data-hydrated]');
      // The end is taken in the page: the start of the frame that draws the new page (the
      // first animation frame after the DOM has it). Taken from Node after a poll for it, the
      // figure also held the poll's interval and a round trip to the browser.
      const t0 = await page.evaluate(({ label, drawn }) => {
        const isDrawn = () => {
          const found = document.querySelector(drawn.selector);
          return !!found && (drawn.text === undefined || found.textContent === drawn.text);
        };
        new MutationObserver((_, observer) => {
          if (!isDrawn()) return;
          observer.disconnect();
          requestAnimationFrame(() => { window.__drawnAt = performance.now(); });
        }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
        const a = [...document.querySelectorAll('nav[aria-label=Sidebar] a')].find((x) => x.textContent.trim() === label);
        const t = performance.now();
        a.click();
        return t;
      }, { label: link, drawn });
      await page.waitForFunction(() => window.__drawnAt !== undefined, null, { timeout: 15_000 });
      const t1 = await page.evaluate(() => window.__drawnAt);
      await context.close();
      if (i > 0) ms.push(t1 - t0); // the first warms the server
    }
    out[key] = ms;
  }
  return out;
}

const s = sizes();
const child = await startServer();
try {
  await sleep(1000);
  const rssIdleStart = rssKiB(child.pid);
  const cookie = await signIn();
  const { server, roundTrip, html } = await renderTimes(cookie);
  const browser = await launch();
  const fp = await firstPaint(browser, cookie);
  const nav = await navigations(browser, cookie);
  await browser.close();
  await sleep(2000);
  const rssIdleAfter = rssKiB(child.pid);
  const htmlBrotli = fp.home.files.find((f) => f.path === '/')?.brotli ?? 0;
  const fcp = round(percentile(fp.paints, 50), 1);
  const navClusters = round(percentile(nav.clusters, 50), 1);
  const navPlugin = round(percentile(nav.plugin_page, 50), 1);
  const targets = {
    first_load_home_under_bytes: 142_000, first_load_plugin_page_under_bytes: 142_000,
    first_contentful_paint_under_ms: 164, navigation_unloaded_route_under_ms: 150,
    render_p50_under_ms: 5, original_first_load_brotli_bytes: 142_000, original_first_paint_ms: 328,
  };
  const result = {
    date: new Date().toISOString(),
    machine: { cores: (await import('node:os')).cpus().length },
    bundle: {
      wasm_raw_bytes: s.wasm.raw, wasm_brotli_bytes: s.wasm.brotli,
      js_raw_bytes: s.js.raw, js_brotli_bytes: s.js.brotli,
      css_raw_bytes: s.css.raw, css_brotli_bytes: s.css.brotli,
      chunks: s.chunks.map((c) => ({ file: c.name, raw_bytes: c.raw, brotli_bytes: c.brotli })),
      chunks_brotli_bytes: s.chunks.reduce((sum, c) => sum + c.brotli, 0),
      home_html_raw_bytes: html, home_html_brotli_bytes: htmlBrotli,
    },
    first_load: {
      note: 'what the console origin served until hydrated, empty cache, each file at brotli 11',
      home_brotli_bytes: fp.home.bytes, home_files: fp.home.files,
      plugin_page: pluginPage, plugin_page_brotli_bytes: fp.plugin.bytes, plugin_page_files: fp.plugin.files,
    },
    render_home_signed_in: {
      requests,
      server_ms_p50: round(percentile(server, 50)), server_ms_p99: round(percentile(server, 99)),
      round_trip_ms_p50: round(percentile(roundTrip, 50)), round_trip_ms_p99: round(percentile(roundTrip, 99)),
    },
    browser: {
      first_contentful_paint_ms_median: fcp,
      first_contentful_paint_plugin_page_ms_median: round(percentile(fp.pluginPaints, 50), 1),
      hydrated_ms_median: round(percentile(fp.hydrated, 50), 1),
      navigation_unloaded_route_ms_median: { clusters: navClusters, plugin_page: navPlugin },
    },
    memory: { rss_idle_after_start_kib: rssIdleStart, rss_idle_after_load_kib: rssIdleAfter },
    twiggy_top: twiggyTop(),
    targets,
  };
  const verdict = (ok) => (ok ? 'met' : 'missed');
  result.verdicts = {
    first_load_home: verdict(fp.home.bytes < targets.first_load_home_under_bytes),
    first_load_plugin_page: verdict(fp.plugin.bytes < targets.first_load_plugin_page_under_bytes),
    first_contentful_paint: verdict(fcp < targets.first_contentful_paint_under_ms),
    navigation_unloaded_route: verdict(Math.max(navClusters, navPlugin) < targets.navigation_unloaded_route_under_ms),
    render_p50: verdict(result.render_home_signed_in.server_ms_p50 < 5),
    first_load_home_vs_original: round(fp.home.bytes / 142_000, 2),
    first_paint_vs_original: round(fcp / 328, 2),
  };
  fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bench/results/foundation.json'), JSON.stringify(result, null, 2) + '\n');
  const kb = (b) => `${(b / 1000).toFixed(1)} KB`;
  console.log(`main wasm       ${kb(s.wasm.raw)} raw, ${kb(s.wasm.brotli)} brotli; ${s.chunks.length} chunks, ${kb(result.bundle.chunks_brotli_bytes)} brotli in all`);
  console.log(`js glue         ${kb(s.js.raw)} raw, ${kb(s.js.brotli)} brotli`);
  console.log(`css             ${kb(s.css.raw)} raw, ${kb(s.css.brotli)} brotli`);
  console.log(`first load      home ${kb(fp.home.bytes)}, plugin page ${kb(fp.plugin.bytes)} brotli (target < ${kb(142_000)}: ${result.verdicts.first_load_home}, ${result.verdicts.first_load_plugin_page})`);
  console.log(`render /        p50 ${result.render_home_signed_in.server_ms_p50} ms, p99 ${result.render_home_signed_in.server_ms_p99} ms server; round trip p50 ${result.render_home_signed_in.round_trip_ms_p50} ms (target p50 < 5 ms: ${result.verdicts.render_p50})`);
  console.log(`first paint     ${fcp} ms median (target < 164 ms: ${result.verdicts.first_contentful_paint}); hydrated at ${result.browser.hydrated_ms_median} ms`);
  console.log(`navigation      into an unloaded route: clusters ${navClusters} ms, plugin page ${navPlugin} ms median (target < 150 ms: ${result.verdicts.navigation_unloaded_route})`);
  console.log(`idle memory     ${rssIdleStart} KiB after start, ${rssIdleAfter} KiB after ${requests} requests`);
  console.log('written to bench/results/foundation.json');
} finally {
  child.kill('SIGTERM');
}
