// What the walk on real clusters knows of the cluster behind it (WALK_MODE, set by
// playwright.sandbox.config.ts and playwright.real.config.ts).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** kube-api-proxy's audit lines (the configs pass it to `fundament dev`). */
export const auditLog = path.join(os.tmpdir(), 'fundament-clusters-audit.jsonl');
/** Where `fundament garden` keeps its state in real mode. */
export const gardenState = path.join(os.tmpdir(), 'fundament-real-garden');

let cached: string | undefined;

/** An admin kubeconfig of the cluster the walk runs on: the sandbox's own, or the prod-eu
 *  Shoot's, issued by the garden's adminkubeconfig subresource as Gardener issues it. */
export function clusterKubeconfig(): string {
  if (cached) return cached;
  if (process.env.WALK_MODE === 'sandbox') return (cached = process.env.SANDBOX_KUBECONFIG!);
  const garden = path.join(gardenState, 'garden', 'kubeconfig');
  const request = path.join(os.tmpdir(), `fundament-adminkubeconfig-${process.pid}.json`);
  fs.writeFileSync(request, JSON.stringify({
    apiVersion: 'authentication.gardener.cloud/v1alpha1', kind: 'AdminKubeconfigRequest', spec: { expirationSeconds: 3600 },
  }));
  const answer = JSON.parse(execFileSync('kubectl', ['--kubeconfig', garden, 'create', '--raw',
    '/apis/core.gardener.cloud/v1beta1/namespaces/garden-acme-corp/shoots/prod-eu/adminkubeconfig', '-f', request], { encoding: 'utf8' }));
  const file = path.join(os.tmpdir(), `fundament-prod-eu-kubeconfig-${process.pid}`);
  fs.writeFileSync(file, Buffer.from(answer.status.kubeconfig, 'base64'));
  return (cached = file);
}
