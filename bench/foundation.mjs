// Foundation benchmark: bundle sizes, server render time, idle memory, first paint.
// Run with scripts/bench (which builds the release site first). Writes
// bench/results/foundation.json and prints a summary. Figures are medians
// and percentiles: these machines are noisy, so never read one run as a trend.
import { spawn } from 'node:child_process';
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

const brotli = (buf) => zlib.brotliCompressSync(buf, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const round = (x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function sizes() {
  const pkg = path.join(siteRoot, 'pkg');
  const file = (name) => {
    const buf = fs.readFileSync(path.join(pkg, name));
    return { raw: buf.length, brotli: brotli(buf) };
  };
  return { wasm: file('console.wasm'), js: file('console.js'), css: file('console.css') };
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

async function firstPaint(cookie) {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
  const paints = [], hydrated = [], transferred = [];
  for (let i = 0; i < 7; i++) {
    const context = await browser.newContext();
    // __Host- cookies must be Secure with Path=/ (Chromium treats http://localhost as secure).
    const [name, value] = [cookie.slice(0, cookie.indexOf('=')), cookie.slice(cookie.indexOf('=') + 1)];
    await context.addCookies([{ name, value, domain: new URL(base).hostname, path: '/', secure: true, httpOnly: true, sameSite: 'Strict' }]);
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.waitForSelector('body[data-hydrated]');
    const m = await page.evaluate(() => ({
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime,
      now: performance.now(),
      bytes: performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
        .reduce((sum, e) => sum + (e.transferSize || 0), 0),
    }));
    paints.push(m.fcp); hydrated.push(m.now); transferred.push(m.bytes);
    await context.close();
  }
  await browser.close();
  return { paints, hydrated, transferred };
}

const s = sizes();
const child = await startServer();
try {
  await sleep(1000);
  const rssIdleStart = rssKiB(child.pid);
  const cookie = await signIn();
  const { server, roundTrip, html } = await renderTimes(cookie);
  const fp = await firstPaint(cookie);
  await sleep(2000);
  const rssIdleAfter = rssKiB(child.pid);
  const htmlBrotli = brotli(Buffer.from(await (await fetch(`${base}/`, { headers: { cookie } })).text()));
  const firstLoadBrotli = htmlBrotli + s.css.brotli + s.js.brotli + s.wasm.brotli;
  const result = {
    date: new Date().toISOString(),
    machine: { cores: (await import('node:os')).cpus().length },
    bundle: {
      wasm_raw_bytes: s.wasm.raw, wasm_brotli_bytes: s.wasm.brotli,
      js_raw_bytes: s.js.raw, js_brotli_bytes: s.js.brotli,
      css_raw_bytes: s.css.raw, css_brotli_bytes: s.css.brotli,
      home_html_raw_bytes: html, home_html_brotli_bytes: htmlBrotli,
      first_load_brotli_bytes: firstLoadBrotli,
    },
    render_home_signed_in: {
      requests,
      server_ms_p50: round(percentile(server, 50)), server_ms_p99: round(percentile(server, 99)),
      round_trip_ms_p50: round(percentile(roundTrip, 50)), round_trip_ms_p99: round(percentile(roundTrip, 99)),
    },
    browser: {
      first_contentful_paint_ms_median: round(percentile(fp.paints, 50), 1),
      hydrated_ms_median: round(percentile(fp.hydrated, 50), 1),
    },
    memory: { rss_idle_after_start_kib: rssIdleStart, rss_idle_after_load_kib: rssIdleAfter },
    targets: {
      wasm_brotli_under_bytes: 250_000, render_p50_under_ms: 5,
      original_first_load_brotli_bytes: 142_000, original_first_paint_ms: 328,
    },
  };
  result.verdicts = {
    wasm_brotli: result.bundle.wasm_brotli_bytes < 250_000 ? 'met' : 'missed',
    render_p50: result.render_home_signed_in.server_ms_p50 < 5 ? 'met' : 'missed',
    first_load_vs_original: round(firstLoadBrotli / 142_000, 2),
    first_paint_vs_original: round(result.browser.first_contentful_paint_ms_median / 328, 2),
  };
  fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bench/results/foundation.json'), JSON.stringify(result, null, 2) + '\n');
  const kb = (b) => `${(b / 1000).toFixed(1)} KB`;
  console.log(`wasm            ${kb(s.wasm.raw)} raw, ${kb(s.wasm.brotli)} brotli (target < 250 KB: ${result.verdicts.wasm_brotli})`);
  console.log(`js glue         ${kb(s.js.raw)} raw, ${kb(s.js.brotli)} brotli`);
  console.log(`css             ${kb(s.css.raw)} raw, ${kb(s.css.brotli)} brotli`);
  console.log(`first load      ${kb(firstLoadBrotli)} brotli (HTML+CSS+JS+wasm; original ${kb(142_000)}: x${result.verdicts.first_load_vs_original})`);
  console.log(`render /        p50 ${result.render_home_signed_in.server_ms_p50} ms, p99 ${result.render_home_signed_in.server_ms_p99} ms server; round trip p50 ${result.render_home_signed_in.round_trip_ms_p50} ms (target p50 < 5 ms: ${result.verdicts.render_p50})`);
  console.log(`first paint     ${result.browser.first_contentful_paint_ms_median} ms median (original 328 ms: x${result.verdicts.first_paint_vs_original}); hydrated at ${result.browser.hydrated_ms_median} ms`);
  console.log(`idle memory     ${rssIdleStart} KiB after start, ${rssIdleAfter} KiB after ${requests} requests`);
  console.log('written to bench/results/foundation.json');
} finally {
  child.kill('SIGTERM');
}
