// The Playwright settings of the suites that run one test at a time against a stack (the
// walks on real clusters, OpenID Connect sign-in, the scaled-out stack; the fault suite, one
// test at a time in each of its two workers and stacks; paths are the config files' own): one
// worker unless the suite says otherwise, the default console URL unless it names its own
// (end2end/stack.ts), Debian's chromium.
import { defineConfig, type PlaywrightTestConfig } from '@playwright/test';
import { chromiumArgs, executablePath, keptOnFailure } from './chromium';

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
  /** Workers, each with a stack of its own that the suite describes (default 1). */
  workers?: number;
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
    workers: s.workers ?? 1,
    reporter: [['list']],
    use: {
      baseURL: s.baseURL ?? 'http://localhost:3000',
      ...keptOnFailure,
      launchOptions: { executablePath, args: chromiumArgs },
    },
    ...(s.webServer ? { webServer: s.webServer } : {}),
  });
}

/** The walks on real clusters (playwright.sandbox.config.ts, playwright.real.config.ts). */
export const clusterSuite = (outputDir: string, baseURL: string, webServer: PlaywrightTestConfig['webServer']) =>
  serialSuite({ testDir: 'clusters', outputDir, baseURL, webServer });
