// Shared by the benchmark scripts: start `fundament dev` on a console port of
// their own, launch Debian's chromium, and summarise samples.
import { spawn } from 'node:child_process';
import path from 'node:path';

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
export const bin = process.env.FUNDAMENT_BIN ?? path.join(root, 'target/release/fundament');
export const siteRoot = process.env.FUNDAMENT_SITE_ROOT ?? path.join(root, 'target/site');
export const runs = Number(process.env.BENCH_RUNS ?? 20);

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** Median, p90, min and max of samples (ms). */
export function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { median: round(at(0.5)), p90: round(at(0.9)), min: round(s[0]), max: round(s[s.length - 1]), runs: s.length };
}

/** Starts `fundament dev` with its console on `port`; resolves once the console answers. */
export async function startDev(port) {
  const base = `http://localhost:${port}`;
  const child = spawn(bin, ['dev', '--site-root', siteRoot, '--console-listen', `127.0.0.1:${port}`, '--console-url', base],
    { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, RUST_LOG: 'warn' } });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/`)).ok) return { child, base };
    } catch { /* not up yet */ }
    if (child.exitCode !== null) throw new Error(`fundament dev exited: ${stderr}`);
    await sleep(100);
  }
  throw new Error('fundament dev did not start within 20 s');
}

export const chromiumOptions = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
};
