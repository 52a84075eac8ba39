// The Playwright settings both walks on real clusters share (playwright.sandbox.config.ts and
// playwright.real.config.ts; paths are the config files' own): one worker, the default console URL, Debian's chromium.
import { defineConfig, type PlaywrightTestConfig } from '@playwright/test';
import { chromiumArgs, executablePath } from '../chromium';

export function clusterSuite(outputDir: string, webServer: PlaywrightTestConfig['webServer']) {
  return defineConfig({
    testDir: './clusters',
    outputDir: `./${outputDir}`,
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
    webServer,
  });
}
