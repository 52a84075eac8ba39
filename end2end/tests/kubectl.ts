// kubectl against the embedded cluster of the stack this process's tests run on, as its admin
// (`fundament cluster kubeconfig`, which reads the same FUNDAMENT_* settings as the stack).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { scratchFile } from '../scratch';
import { bin, root } from './origins';

/** Runs kubectl with `args`; `input` goes to its stdin. Returns its stdout. */
export function kubectl(args: string[], input?: string): string {
  const kubeconfig = scratchFile('kubeconfig');
  if (!fs.existsSync(kubeconfig)) {
    fs.writeFileSync(kubeconfig, execFileSync(bin, ['cluster', 'kubeconfig'], { cwd: root, encoding: 'utf8' }));
  }
  return execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', input });
}
