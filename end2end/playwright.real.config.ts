// Real mode in Chromium: `fundament garden` runs a simulated Gardener with a Shoot for each
// cluster of clusters/real-directory.yaml (prod-eu and prod-us, embedded clusters), and
// `fundament dev --mode real --gardener-kubeconfig FILE` finds each cluster as the Shoot
// labelled with its id and reaches it with an admin kubeconfig the garden issues. The walk
// runs on both Shoots, through the project each one has.
import os from 'node:os';
import path from 'node:path';
import { auditLog, gardenState } from './clusters/cluster';
import { clusterSuite } from './serial-suite';
import { stackEnv } from './stack';

const root = path.resolve(__dirname, '..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
process.env.WALK_MODE = 'real';
// Ports of its own (console :6100, services :618x), so that it runs beside the local topology's
// suites: set here for the stack, the specs' helpers and the `fundament` commands they run.
const ports = stackEnv({ console: 6100, services: 6181, cluster: 6190 });
Object.assign(process.env, ports);
const garden = path.join(gardenState, 'garden', 'kubeconfig');
const stackState = path.join(os.tmpdir(), 'fundament-real-state');
const directory = path.join(__dirname, 'clusters', 'real-directory.yaml');
const tuples = path.join(__dirname, 'clusters', 'real-tuples.yaml');
const server = { cwd: root, reuseExistingServer: false, timeout: 60_000, stdout: 'ignore' as const, stderr: 'pipe' as const };

export default clusterSuite('test-results-real', ports.FUNDAMENT_CONSOLE_URL, [
  {
    ...server,
    command: `"${bin}" garden --directory "${directory}" --state-dir "${gardenState}" --cluster-listen 127.0.0.1:8190 --cluster-url https://localhost:8190`,
    url: 'https://localhost:8190/livez',
    ignoreHTTPSErrors: true,
  },
  {
    ...server,
    command: `"${bin}" dev --mode real --gardener-kubeconfig "${garden}" --directory "${directory}" --fga-tuples "${tuples}" --state-dir "${stackState}"`,
    url: `${ports.FUNDAMENT_CONSOLE_URL}/`,
    env: { ...process.env, FUNDAMENT_AUDIT_LOG: auditLog() } as Record<string, string>,
  },
]);
