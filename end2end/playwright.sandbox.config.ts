// Sandbox mode in Chromium against a real kube-apiserver: `fundament dev --mode sandbox
// --kubeconfig FILE` installs the platform and the example plugins into the cluster of
// FILE (scripts/real-cluster's admin client-certificate kubeconfig in scripts/test) and
// serves the plugin pages from their folders. SANDBOX_KUBECONFIG names the file; the
// stack uses the default ports, so it runs in the local topology's lane (scripts/test).
import os from 'node:os';
import path from 'node:path';
import { auditLog } from './clusters/cluster';
import { clusterSuite } from './serial-suite';

const root = path.resolve(__dirname, '..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
const kubeconfig = process.env.SANDBOX_KUBECONFIG;
if (!kubeconfig) throw new Error("SANDBOX_KUBECONFIG must name the sandbox cluster's kubeconfig (scripts/test sets it)");
process.env.WALK_MODE = 'sandbox';
const stateDir = path.join(os.tmpdir(), 'fundament-sandbox-state');

export default clusterSuite('test-results-sandbox', 'http://localhost:3000', {
  command: `"${bin}" dev --mode sandbox --kubeconfig "${kubeconfig}" --state-dir "${stateDir}"`,
  cwd: root,
  url: 'http://localhost:3000/',
  reuseExistingServer: false,
  // The first start installs CRDs, fixtures and plugins into the cluster.
  timeout: 180_000,
  env: { ...process.env, FUNDAMENT_AUDIT_LOG: auditLog() } as Record<string, string>,
  stdout: 'ignore',
  stderr: 'pipe',
});
