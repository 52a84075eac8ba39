// OpenID Connect sign-in in Chromium through a real provider: oidc-provider
// 9.x on loopback (end2end/oidc/provider.mjs, http://127.0.0.1:8099) and
// `fundament dev` with the --oidc-* settings and a directory that lists the
// provider's account as alice (end2end/oidc/directory.yaml). On ports of its
// own (console :7000, services :708x), so that it runs beside the local
// topology's suites; one test at a time: the provider's test switches act on
// every sign-in.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serialSuite } from './serial-suite';
import { stackEnv } from './stack';

const root = path.resolve(__dirname, '..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
export const OIDC_PORT = 8099;
const work = path.join(os.tmpdir(), 'fundament-oidc-e2e');
const secretFile = path.join(work, 'client-secret');
// The config is read by the runner and by each worker: the secret is made once per run.
if (!process.env.FUNDAMENT_OIDC_E2E_SECRET) {
  process.env.FUNDAMENT_OIDC_E2E_SECRET = crypto.randomBytes(24).toString('base64url');
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  fs.writeFileSync(secretFile, `${process.env.FUNDAMENT_OIDC_E2E_SECRET}\n`, { mode: 0o600 });
}
// `fundament token` in the specs reads the same state directory and ports as the stack.
process.env.FUNDAMENT_STATE_DIR = path.join(work, 'state');
const ports = stackEnv({ console: 7000, services: 7081, cluster: 7090 });
Object.assign(process.env, ports);

const flags = [
  '--oidc-issuer', `http://127.0.0.1:${OIDC_PORT}`,
  '--oidc-client-id', 'fundament-console',
  '--oidc-client-secret-file', secretFile,
  '--oidc-provider-name', '"Test IdP"',
  '--directory', 'end2end/oidc/directory.yaml',
];

export default serialSuite({
  testDir: 'oidc',
  outputDir: 'test-results-oidc',
  baseURL: ports.FUNDAMENT_CONSOLE_URL,
  webServer: [
    {
      command: 'node end2end/oidc/provider.mjs',
      cwd: root,
      url: `http://127.0.0.1:${OIDC_PORT}/test/health`,
      reuseExistingServer: false,
      timeout: 20_000,
      env: { ...process.env, OIDC_PORT: String(OIDC_PORT), OIDC_CLIENT_SECRET: process.env.FUNDAMENT_OIDC_E2E_SECRET!, CONSOLE_URL: ports.FUNDAMENT_CONSOLE_URL } as Record<string, string>,
      stdout: 'ignore',
      stderr: 'pipe',
    },
    {
      command: `"${bin}" dev ${flags.join(' ')}`,
      cwd: root,
      url: `${ports.FUNDAMENT_CONSOLE_URL}/`,
      reuseExistingServer: false,
      timeout: 60_000,
      env: { ...process.env } as Record<string, string>,
      stdout: 'ignore',
      stderr: 'pipe',
    },
  ],
});
