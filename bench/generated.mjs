// Generated list benchmark: 1,000 DemoItems more in one list. From a click on
// the sidebar entry (client-side navigation) to the first page of rows drawn,
// and from a full page load to the rows on screen; 20 runs each (BENCH_RUNS),
// medians and spread. Run by scripts/bench after the build; writes
// bench/results/generated.json. Starts its own `fundament dev` (no state
// file: the objects go away with it), so nothing else may hold its ports.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { bin, chromiumOptions, root, runs, startDev, stats } from './lib.mjs';

const port = Number(process.env.BENCH_PORT ?? 3902);
const objects = Number(process.env.BENCH_OBJECTS ?? 1000);
const list = '/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io';

function createObjects() {
  const kubeconfig = path.join(os.tmpdir(), `fundament-bench-kubeconfig-${process.pid}`);
  fs.writeFileSync(kubeconfig, execFileSync(bin, ['cluster', 'kubeconfig'], { cwd: root }));
  const items = Array.from({ length: objects }, (_, i) => ({
    apiVersion: 'demo.fundament.io/v1',
    kind: 'DemoItem',
    metadata: { name: `bench-${String(i).padStart(4, '0')}`, namespace: 'default', labels: { bench: 'yes' } },
    spec: { message: `benchmark item ${i}` },
  }));
  const file = path.join(os.tmpdir(), `fundament-bench-items-${process.pid}.json`);
  fs.writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  execFileSync('kubectl', // --validate=false: kubectl validates a v1 List against /openapi/v2 as protobuf, which the embedded cluster serves as JSON only.
    ['--kubeconfig', kubeconfig, 'apply', '--validate=false', '-f', file], { stdio: 'ignore' });
}

// The first page is drawn: 50 rows and the count of all objects.
const drawn = (total) => {
  const rows = document.querySelectorAll('main table[aria-label="DemoItem list"] tbody tr').length;
  const status = [...document.querySelectorAll('main p[role=status]')].map((p) => p.textContent).join(' ');
  return rows === 50 && status.includes(`of ${total.toLocaleString('en-US').replace(/,/g, '')}`) ? performance.timeOrigin + performance.now() : 0;
};

async function main() {
  const { child: server, base } = await startDev(port);
  const browser = await chromium.launch(chromiumOptions);
  try {
    createObjects();
    const total = objects + 2; // and the two seed DemoItems
    const page = await browser.newPage();
    await page.goto(`${base}/sign-in?next=%2F`);
    await page.locator('body[data-hydrated]').waitFor();
    await page.getByRole('button', { name: 'Sign in as alice@acme-corp.com' }).click();
    await page.locator('nav[aria-label=Sidebar]').waitFor();

    const navigation = [];
    for (let i = 0; i < runs + 2; i++) {
      await page.getByRole('navigation', { name: 'Sidebar' }).getByRole('link', { name: 'Overview' }).click();
      await page.locator('main table').waitFor({ state: 'detached' });
      const t0 = await page.evaluate(() => {
        const link = [...document.querySelectorAll('nav[aria-label=Sidebar] a')].find((a) => a.textContent === 'Demo items');
        const t = performance.timeOrigin + performance.now();
        link.click();
        return t;
      });
      const handle = await page.waitForFunction(drawn, total, { timeout: 15_000, polling: 'raf' });
      if (i >= 2) navigation.push((await handle.jsonValue()) - t0);
    }

    const load = [];
    for (let i = 0; i < runs + 1; i++) {
      const t0 = Date.now();
      await page.goto(`${base}${list}`, { waitUntil: 'commit' });
      const handle = await page.waitForFunction(drawn, total, { timeout: 15_000, polling: 'raf' });
      await page.locator('body[data-hydrated]').waitFor();
      if (i >= 1) load.push((await handle.jsonValue()) - t0);
    }

    const result = {
      what: `generated DemoItem list with ${total} objects (first page of 50 rows), fundament dev on this machine`,
      objects: total,
      navigation_to_rows_ms: stats(navigation),
      page_load_to_rows_ms: stats(load),
      measured_at: new Date().toISOString(),
    };
    fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
    fs.writeFileSync(path.join(root, 'bench/results/generated.json'), JSON.stringify(result, null, 2) + '\n');
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await browser.close();
    server.kill('SIGTERM');
  }
}

await main();
