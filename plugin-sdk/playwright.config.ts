// Tests of plugin-sdk.js and plugin-sdk.css in Debian's chromium. The servers they need (console host page,
// plugin origin, fake kube-api-proxy) are started by the tests themselves: see tests/harness.ts.
// Run from the repository root: npx playwright test -c plugin-sdk/playwright.config.ts
import { defineConfig } from '@playwright/test';
import { chromiumArgs, executablePath } from '../end2end/chromium';

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  timeout: 15_000,
  expect: { timeout: 5_000 },
  forbidOnly: !!process.env.CI,
  fullyParallel: true,
  retries: 0,
  workers: '50%',
  reporter: [['list']],
  use: {
    trace: 'off',
    launchOptions: { executablePath, args: chromiumArgs },
  },
});
