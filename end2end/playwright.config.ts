// End-to-end tests of the console in Debian's chromium against `fundament dev`.
// Two projects: "hydrated" (JavaScript on) and "no-js" (the server-rendered
// page alone). Run through scripts/test, which builds the stack first. The
// fault tests (*.faults.spec.ts) run on a stack of their own:
// end2end/playwright.faults.config.ts.
import { defineConfig } from '@playwright/test';
import { chromiumArgs, executablePath, keptOnFailure } from './chromium';
import { freshPerRun } from './scratch';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
export const baseURL = process.env.CONSOLE_URL ?? 'http://localhost:3000';
// kube-api-proxy's audit lines, read by plugins.spec.ts (same default there).
const auditLog = freshPerRun(process.env.FUNDAMENT_AUDIT_LOG ?? path.join(os.tmpdir(), 'fundament-e2e-audit.jsonl'));

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: 2,
  reporter: [['list']],
  use: {
    baseURL,
    ...keptOnFailure,
    launchOptions: { executablePath, args: chromiumArgs },
  },
  projects: [
    { name: 'hydrated', testIgnore: /\.(nojs|faults)\.spec\.ts$/ },
    { name: 'no-js', testMatch: /\.(nojs|shared)\.spec\.ts$/, use: { javaScriptEnabled: false } },
  ],
  webServer: {
    // From the repository root, so its Leptos.toml supplies the settings.
    // The hostile example plugin (end2end/hostile-plugin) is installed for the security suite.
    command: `"${bin}" dev --plugin end2end/hostile-plugin`,
    cwd: root,
    url: `${baseURL}/`,
    reuseExistingServer: !process.env.CI,
    timeout: 60_000,
    env: { ...process.env, FUNDAMENT_AUDIT_LOG: auditLog } as Record<string, string>,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
