// Files a test process writes for tools it runs (kubeconfigs, manifests for `kubectl apply -f`):
// all in one directory of the process's own, removed when the process exits, so that no run
// leaves files behind in the system's temp directory.
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
