// The production topology in Chromium: console, kube-api-proxy and every
// plugin origin on host names of their own over TLS, as deployed —
// https://console.example.test, https://kube.example.test and
// https://<installation>.plugins.example.test (all on port 9443 of a TLS front
// that routes by SNI), mapped to loopback by Chromium's --host-resolver-rules.
// The services call each other on loopback (the internal URLs). Runs after
// the main suites (scripts/test), on ports of its own.
import { defineConfig } from '@playwright/test';
import os from 'node:os';
import path from 'node:path';
import { chromiumArgs, fullChromium, keptOnFailure } from './chromium';
import { certFile, certificate, keyFile } from './production/tls';

const root = path.resolve(__dirname, '..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
const { spki } = certificate();
export const PORTS = { tls: 9443, console: 9000, gateway: 9081, plugins: 9082, authn: 9083, organization: 9084, cluster: 9090 };
const stateDir = path.join(os.tmpdir(), 'fundament-production-state');

const flags = [
  '--console-url', `https://console.example.test:${PORTS.tls}`,
  '--console-listen', `127.0.0.1:${PORTS.console}`,
  '--kube-api-proxy-url', `https://kube.example.test:${PORTS.tls}`,
  '--kube-api-proxy-internal-url', `http://127.0.0.1:${PORTS.gateway}`,
  '--kube-api-proxy-listen', `127.0.0.1:${PORTS.gateway}`,
  '--plugin-proxy-url', `https://plugins.example.test:${PORTS.tls}`,
  '--plugin-proxy-listen', `127.0.0.1:${PORTS.plugins}`,
  '--authn-url', `http://127.0.0.1:${PORTS.authn}`,
  '--authn-listen', `127.0.0.1:${PORTS.authn}`,
  '--organization-api-url', `http://127.0.0.1:${PORTS.organization}`,
  '--organization-api-listen', `127.0.0.1:${PORTS.organization}`,
  '--cluster-url', `https://localhost:${PORTS.cluster}`,
  '--cluster-listen', `127.0.0.1:${PORTS.cluster}`,
  '--state-dir', stateDir,
];

export default defineConfig({
  testDir: './production',
  outputDir: './test-results-production',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: 1,
  reporter: [['list']],
  use: {
    baseURL: `https://console.example.test:${PORTS.tls}`,
    ...keptOnFailure,
    launchOptions: {
      // The browser users run: this suite's attacks (cookies planted across host names) must be
      // refused there (end2end/chromium.ts).
      executablePath: fullChromium,
      args: [
        ...chromiumArgs,
        '--host-resolver-rules=MAP *.example.test 127.0.0.1, MAP example.test 127.0.0.1',
        `--ignore-certificate-errors-spki-list=${spki}`,
      ],
    },
  },
  webServer: [
    {
      command: `"${bin}" dev ${flags.join(' ')}`,
      cwd: root,
      url: `http://127.0.0.1:${PORTS.console}/`,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: 'ignore',
      stderr: 'pipe',
    },
    {
      command: 'node end2end/production/tls-front.mjs',
      cwd: root,
      port: PORTS.tls,
      reuseExistingServer: false,
      timeout: 10_000,
      env: {
        ...process.env,
        TLS_CERT: certFile,
        TLS_KEY: keyFile,
        TLS_PORT: String(PORTS.tls),
        CONSOLE_PORT: String(PORTS.console),
        GATEWAY_PORT: String(PORTS.gateway),
        PLUGINS_PORT: String(PORTS.plugins),
      } as Record<string, string>,
    },
  ],
});
