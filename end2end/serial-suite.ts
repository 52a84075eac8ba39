// The Playwright settings of the suites that run one test at a time against one stack (the
// walks on real clusters, OpenID Connect sign-in, the scaled-out stack on the default ports;
// the fault suite on its own; paths are the config files' own): one worker, the default
// console URL unless the suite says otherwise, Debian's chromium.
import { defineConfig, type PlaywrightTestConfig } from '@playwright/test';
import { chromiumArgs, executablePath, traceOnFailure } from './chromium';

export interface SerialSuite {
  /** The specs' folder, e.g. `clusters`. */
  testDir: string;
  /** Which files in it are specs, when not all of them. */
  testMatch?: RegExp;
  /** The console's URL, when the suite's stack is not on the default ports. */
  baseURL?: string;
  /** Where results go, e.g. `test-results-real`. */
  outputDir: string;
  /** What to start; none when a script started the stack. */
  webServer?: PlaywrightTestConfig['webServer'];
  /** Per test (default 30 s) and per expectation (default 10 s). */
  timeout?: number;
  expectTimeout?: number;
}

export function serialSuite(s: SerialSuite) {
  return defineConfig({
    testDir: `./${s.testDir}`,
    ...(s.testMatch ? { testMatch: s.testMatch } : {}),
    outputDir: `./${s.outputDir}`,
    timeout: s.timeout ?? 30_000,
    expect: { timeout: s.expectTimeout ?? 10_000 },
    forbidOnly: !!process.env.CI,
    retries: 0,
    workers: 1,
    reporter: [['list']],
    use: {
      baseURL: s.baseURL ?? 'http://localhost:3000',
      trace: traceOnFailure,
      launchOptions: { executablePath, args: chromiumArgs },
    },
    ...(s.webServer ? { webServer: s.webServer } : {}),
  });
}

/** The walks on real clusters (playwright.sandbox.config.ts, playwright.real.config.ts). */
export const clusterSuite = (outputDir: string, webServer: PlaywrightTestConfig['webServer']) =>
  serialSuite({ testDir: 'clusters', outputDir, webServer });
