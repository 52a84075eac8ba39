// Sandbox mode in Chromium against a real kube-apiserver: `fundament dev --mode sandbox
// --kubeconfig FILE` installs the platform and the example plugins into the cluster of
// FILE (scripts/real-cluster's admin client-certificate kubeconfig in scripts/test) and
// serves the plugin pages from their folders. SANDBOX_KUBECONFIG names the file; the
// stack uses the default ports, so this runs after the mock suites.
import { defineConfig } from '@playwright/test';
import os from 'node:os';
import { auditLog } from './clusters/cluster';
import path from 'node:path';
import { chromiumArgs, executablePath } from './chromium';

const root = path.resolve(__dirname, '..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
const kubeconfig = process.env.SANDBOX_KUBECONFIG;
if (!kubeconfig) throw new Error('SANDBOX_KUBECONFIG must name the sandbox cluster\'s kubeconfig (scripts/test sets it)');
process.env.WALK_MODE = 'sandbox';
const stateDir = path.join(os.tmpdir(), 'fundament-sandbox-state');

export default defineConfig({
  testDir: './clusters',
  outputDir: './test-results-sandbox',
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
  webServer: {
    command: `"${bin}" dev --mode sandbox --kubeconfig "${kubeconfig}" --state-dir "${stateDir}"`,
    cwd: root,
    url: 'http://localhost:3000/',
    reuseExistingServer: false,
    // The first start installs CRDs, fixtures and plugins into the cluster.
    timeout: 180_000,
    env: { ...process.env, FUNDAMENT_AUDIT_LOG: auditLog } as Record<string, string>,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
