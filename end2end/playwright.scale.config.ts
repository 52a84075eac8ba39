// The stack scaled out: two replicas each of the console, authn, kube-api-proxy and
// plugin-proxy behind haproxy (round-robin), started as separate processes by
// scripts/scale-test, which runs this config (SCALE_DIR names its working directory: the
// signing keys directory, the logs; FUNDAMENT_CONSOLE_URL and the other FUNDAMENT_* URLs, its
// balancer's ports). Nothing is started here.
import { serialSuite } from './serial-suite';

export default serialSuite({
  testDir: 'scale',
  outputDir: 'test-results-scale',
  timeout: 120_000,
  expectTimeout: 15_000,
  baseURL: process.env.FUNDAMENT_CONSOLE_URL,
});
