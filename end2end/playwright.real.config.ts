// Real mode in Chromium: `fundament garden` runs a simulated Gardener whose Shoots are
// embedded clusters (prod-eu and restricted), and `fundament dev --mode real
// --gardener-kubeconfig FILE` finds each cluster as the Shoot labelled with its id and
// reaches it with an admin kubeconfig the garden issues. The walk runs on prod-eu, the
// cluster the console's projects are on.
import { defineConfig } from '@playwright/test';
import os from 'node:os';
import path from 'node:path';
import { chromiumArgs, executablePath } from './chromium';
import { auditLog, gardenState } from './clusters/cluster';

const root = path.resolve(__dirname, '..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
process.env.WALK_MODE = 'real';
const garden = path.join(gardenState, 'garden', 'kubeconfig');
const stackState = path.join(os.tmpdir(), 'fundament-real-state');

export default defineConfig({
  testDir: './clusters',
  outputDir: './test-results-real',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: 1,
  reporter: [['list']],
  use: {
    baseURL: 'http://localhost:3000',
    trace: 'retain-on-failure',
    launchOptions: { executablePath, args: chromiumArgs },
  },
  webServer: [
    {
      command: `"${bin}" garden --state-dir "${gardenState}" --cluster-listen 127.0.0.1:8190 --cluster-url https://localhost:8190`,
      cwd: root,
      url: 'https://localhost:8190/livez',
      ignoreHTTPSErrors: true,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: 'ignore',
      stderr: 'pipe',
    },
    {
      command: `"${bin}" dev --mode real --gardener-kubeconfig "${garden}" --state-dir "${stackState}"`,
      cwd: root,
      url: 'http://localhost:3000/',
      reuseExistingServer: false,
      timeout: 60_000,
      env: { ...process.env, FUNDAMENT_AUDIT_LOG: auditLog } as Record<string, string>,
      stdout: 'ignore',
      stderr: 'pipe',
    },
  ],
});
