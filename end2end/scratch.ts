// Files a test process writes for tools it runs (kubeconfigs, manifests for `kubectl apply -f`):
// all in one directory of the process's own, removed when the process exits, so that no run
// leaves files behind in the system's temp directory.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let dir: string | undefined;

/** A path for `name` in this process's scratch directory (made on first use). */
export function scratchFile(name: string): string {
  if (!dir) {
    const made = fs.mkdtempSync(path.join(os.tmpdir(), 'fundament-e2e-'));
    process.on('exit', () => fs.rmSync(made, { recursive: true, force: true }));
    dir = made;
  }
  return path.join(dir, name);
}

/** `file`, removed once per run so that a suite's log holds that run's lines only. The runner
 *  loads a config first and removes it; its workers load the config again with the runner's
 *  environment, marked here, and keep what the stack has written since. */
export function freshPerRun(file: string): string {
  const marker = `FUNDAMENT_E2E_FRESH_${createHash('sha256').update(file).digest('hex').slice(0, 16)}`;
  if (!process.env[marker]) {
    fs.rmSync(file, { force: true });
    process.env[marker] = '1';
  }
  return file;
}
