// Every dependency of the console failing and coming back (the *.faults.spec.ts files), on
// mock-mode stacks of their own: a fault switch acts on a whole stack, so these tests cannot
// share one with other tests, and with stacks of their own they run alongside the rest of
// scripts/test instead of after it. Two workers, each with its own stack, ports and state
// directory: worker 0 on 4000 (console), 408x (services) and 4090 (embedded cluster), worker 1
// on 4100, 418x and 4190. Each spec file runs in one worker, one test at a time. Most of the
// suite's time is spent waiting for a fault to pass (backoffs, timeouts), so two workers take
// little more CPU than one, in about half the time.
//
// A stack is described once, by FUNDAMENT_* variables set here: `fundament dev` reads them,
// and so do the specs' helpers (end2end/tests/origins.ts) and the `fundament token` and
// `fundament cluster kubeconfig` commands they run, which reach their worker's stack, not the
// :3000 one.
import os from 'node:os';
import path from 'node:path';
import { serialSuite } from './serial-suite';
import { freshPerRun } from './scratch';
import { stackEnv } from './stack';

const root = path.resolve(__dirname, '..');
const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
const STACKS = 2;

/** The stack of worker `index` (Playwright's parallel index, 0 or 1). */
function stack(index: number): Record<string, string> {
  const offset = 100 * index;
  return {
    ...stackEnv({ console: 4000 + offset, services: 4081 + offset, cluster: 4090 + offset }),
    FUNDAMENT_STATE_DIR: path.join(os.tmpdir(), `fundament-faults-state-${index}`),
    FUNDAMENT_AUDIT_LOG: freshPerRun(path.join(os.tmpdir(), `fundament-faults-audit-${index}.jsonl`)),
  };
}

// A worker's stack, set before any spec module loads (every worker loads this file first, with
// its index set); the runner, which has none, starts every stack.
const own = stack(Number(process.env.TEST_PARALLEL_INDEX ?? '0'));
Object.assign(process.env, own);

export default serialSuite({
  testDir: 'tests',
  testMatch: /\.faults\.spec\.ts$/,
  outputDir: 'test-results-faults',
  baseURL: own.FUNDAMENT_CONSOLE_URL,
  workers: STACKS,
  webServer: Array.from({ length: STACKS }, (_, index) => stack(index)).map((s) => ({
    command: `"${bin}" dev --plugin end2end/hostile-plugin`,
    cwd: root,
    url: `${s.FUNDAMENT_CONSOLE_URL}/`,
    reuseExistingServer: false,
    timeout: 60_000,
    env: { ...process.env, ...s } as Record<string, string>,
    stdout: 'ignore' as const,
    stderr: 'pipe' as const,
  })),
});
