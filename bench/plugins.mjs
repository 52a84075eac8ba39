// Plugin page benchmark: from a click on a sidebar entry (client-side route
// navigation) to the frame's plugin:ready, and to the first data row drawn by
// the cert-manager Certificates list; also from a full page load. 20 runs
// each (BENCH_RUNS), medians and spread. Run by scripts/bench after the build;
// writes bench/results/plugins.json. It starts its own `fundament dev`, so
// nothing else may hold the stack's ports.
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { chromiumOptions, root, runs, startDev, stats } from './lib.mjs';

const port = Number(process.env.BENCH_PORT ?? 3901);
const certs = '/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io';

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
  const { child: server, base } = await startDev(port);
  const browser = await chromium.launch(chromiumOptions);
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
