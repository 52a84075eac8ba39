// Plugin page benchmark: from a click on a sidebar entry (client-side route
// navigation) to the frame's plugin:ready, and to the first data row drawn by
// the cert-manager Certificates list; also from a full page load. 20 runs
// each (BENCH_RUNS), medians and spread. Run by scripts/bench after the build;
// writes bench/results/plugins.json. It starts its own `fundament dev`, so
// nothing else may hold the stack's ports.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from '@playwright/test';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
const siteRoot = process.env.FUNDAMENT_SITE_ROOT ?? path.join(root, 'target/site');
const port = Number(process.env.BENCH_PORT ?? 3901);
const base = `http://localhost:${port}`;
const runs = Number(process.env.BENCH_RUNS ?? 20);
const certs = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { median: round(at(0.5)), p90: round(at(0.9)), min: round(s[0]), max: round(s[s.length - 1]), runs: s.length };
}

async function startServer() {
  const child = spawn(bin, ['dev', '--site-root', siteRoot, '--console-listen', `127.0.0.1:${port}`, '--console-url', base],
    { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, RUST_LOG: 'warn' } });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/`)).ok) return child;
    } catch { /* not up yet */ }
    if (child.exitCode !== null) throw new Error(`fundament dev exited: ${stderr}`);
    await sleep(100);
  }
  throw new Error('fundament dev did not start within 20 s');
}

// In every frame: the console records when plugin:ready arrives; the plugin
// page records when its first row link appears. Epoch ms with sub-ms precision.
function instrument() {
  const now = () => performance.timeOrigin + performance.now();
  const w = window;
  if (window.parent === window) {
    window.addEventListener('message', (e) => {
      if (e.data && e.data.type === 'plugin:ready' && !w.__readyAt) w.__readyAt = now();
    }, true);
  } else {
    const seen = () => {
      if (!w.__rowAt && document.querySelector('#rows a[data-name]')) {
        w.__rowAt = now();
        window.parent.postMessage({ type: 'bench:row', at: w.__rowAt }, '*');
      }
    };
    new MutationObserver(seen).observe(document, { childList: true, subtree: true });
  }
  if (window.parent === window) {
    window.addEventListener('message', (e) => {
      if (e.data && e.data.type === 'bench:row' && !w.__rowAt) w.__rowAt = e.data.at;
    }, true);
  }
}

async function main() {
  const server = await startServer();
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
  try {
    const page = await browser.newPage();
    await page.addInitScript(instrument);
    await page.goto(`${base}/sign-in?next=${encodeURIComponent('/projects/webshop')}`);
    await page.locator('body[data-hydrated]').waitFor();
    await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
    await page.locator('nav[aria-label=Sidebar]').waitFor();
    const sidebar = page.getByRole('navigation', { name: 'Sidebar' });

    const navReady = [], navRow = [];
    for (let i = 0; i < runs + 2; i++) {
      await sidebar.getByRole('link', { name: 'Overview' }).click();
      await page.locator('[data-plugin-frame]').waitFor({ state: 'detached' });
      await page.evaluate(() => { window.__readyAt = 0; window.__rowAt = 0; });
      const t0 = await page.evaluate(() => {
        const link = [...document.querySelectorAll('nav[aria-label=Sidebar] a')].find((a) => a.textContent === 'Certificates');
        const t = performance.timeOrigin + performance.now();
        link.click();
        return t;
      });
      await page.waitForFunction(() => window.__readyAt && window.__rowAt, null, { timeout: 15_000 });
      const { readyAt, rowAt } = await page.evaluate(() => ({ readyAt: window.__readyAt, rowAt: window.__rowAt }));
      if (i < 2) continue; // warm-up
      navReady.push(readyAt - t0);
      navRow.push(rowAt - t0);
    }

    const loadReady = [], loadRow = [];
    for (let i = 0; i < runs + 1; i++) {
      const t0 = Date.now();
      await page.goto(`${base}${certs}`, { waitUntil: 'commit' });
      await page.waitForFunction(() => window.__readyAt && window.__rowAt, null, { timeout: 15_000 });
      const { readyAt, rowAt } = await page.evaluate(() => ({ readyAt: window.__readyAt, rowAt: window.__rowAt }));
      if (i < 1) continue;
      loadReady.push(readyAt - t0);
      loadRow.push(rowAt - t0);
    }

    const result = {
      what: 'cert-manager Certificates list in the webshop project, fundament dev on this machine',
      navigation_to_plugin_ready_ms: stats(navReady),
      navigation_to_first_row_ms: stats(navRow),
      page_load_to_plugin_ready_ms: stats(loadReady),
      page_load_to_first_row_ms: stats(loadRow),
      measured_at: new Date().toISOString(),
    };
    fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
    fs.writeFileSync(path.join(root, 'bench/results/plugins.json'), JSON.stringify(result, null, 2) + '\n');
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await browser.close();
    server.kill('SIGTERM');
  }
}

await main();
