// The stack scaled out: two replicas each of the console, authn, kube-api-proxy and
// plugin-proxy behind haproxy (round-robin), started as separate processes by
// scripts/scale-test, which runs this config (SCALE_DIR names its working directory: the
// signing keys directory, the logs). Nothing is started here.
import { defineConfig } from '@playwright/test';
import { chromiumArgs, executablePath } from './chromium';

export default defineConfig({
  testDir: './scale',
  outputDir: './test-results-scale',
  timeout: 120_000,
  expect: { timeout: 15_000 },
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: 1,
  reporter: [['list']],
  use: {
    baseURL: 'http://localhost:3000',
    trace: 'retain-on-failure',
    launchOptions: { executablePath, args: chromiumArgs },
  },
});
