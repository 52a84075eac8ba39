// Every dependency of the console failing and coming back (the *.faults.spec.ts files), on a
// mock-mode stack of its own: its own ports (4000 for the console, 408x for the services,
// 4090 for the embedded cluster) and its own state directory. A fault switch acts on the
// whole stack, so these tests cannot share one with other tests, and with a stack of their
// own they run alongside the rest of scripts/test instead of after it.
//
// The stack is described once, by FUNDAMENT_* variables set here: `fundament dev` reads them,
// and so do the specs' helpers (end2end/tests/origins.ts) and the `fundament token` and
// `fundament cluster kubeconfig` commands they run, which reach this stack, not the :3000 one.
import os from 'node:os';
import path from 'node:path';
import { serialSuite } from './serial-suite';

const root = path.resolve(__dirname, '..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
const stack: Record<string, string> = {
  FUNDAMENT_CONSOLE_LISTEN: '127.0.0.1:4000',
  FUNDAMENT_CONSOLE_URL: 'http://localhost:4000',
  FUNDAMENT_KUBE_API_PROXY_LISTEN: '127.0.0.1:4081',
  FUNDAMENT_KUBE_API_PROXY_URL: 'http://localhost:4081',
  FUNDAMENT_PLUGIN_PROXY_LISTEN: '127.0.0.1:4082',
  FUNDAMENT_PLUGIN_PROXY_URL: 'http://localhost:4082',
  FUNDAMENT_AUTHN_LISTEN: '127.0.0.1:4083',
  FUNDAMENT_AUTHN_URL: 'http://localhost:4083',
  FUNDAMENT_ORGANIZATION_API_LISTEN: '127.0.0.1:4084',
  FUNDAMENT_ORGANIZATION_API_URL: 'http://localhost:4084',
  FUNDAMENT_CLUSTER_LISTEN: '127.0.0.1:4090',
  FUNDAMENT_CLUSTER_URL: 'https://localhost:4090',
  FUNDAMENT_STATE_DIR: path.join(os.tmpdir(), 'fundament-faults-state'),
  FUNDAMENT_AUDIT_LOG: path.join(os.tmpdir(), 'fundament-faults-audit.jsonl'),
};
// Set before any spec module loads (the runner and every worker load this file first).
Object.assign(process.env, stack);
const baseURL = stack.FUNDAMENT_CONSOLE_URL;

// One test at a time: a switch of one test would fail another's pages.
export default serialSuite({
  testDir: 'tests',
  testMatch: /\.faults\.spec\.ts$/,
  outputDir: 'test-results-faults',
  baseURL,
  webServer: {
    command: `"${bin}" dev --plugin end2end/hostile-plugin`,
    cwd: root,
    url: `${baseURL}/`,
    reuseExistingServer: false,
    timeout: 60_000,
    env: { ...process.env, ...stack },
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
