// What the walk on real clusters knows of the cluster behind it (WALK_MODE, set by
// playwright.sandbox.config.ts and playwright.real.config.ts).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshPerRun, scratchFile } from '../scratch';

/** kube-api-proxy's audit lines in each walk mode (the configs pass it to `fundament dev`):
 *  one file per mode, since the sandbox and real walks run at once and read the same cluster ids. */
export const auditLog = (mode = process.env.WALK_MODE) => freshPerRun(path.join(os.tmpdir(), `fundament-${mode}-audit.jsonl`));
/** Where `fundament garden` keeps its state in real mode. */
export const gardenState = path.join(os.tmpdir(), 'fundament-real-garden');

/** A cluster the walk runs on, and the project of the console that opens it. */
export interface WalkCluster { id: string; name: string; project: string }

/** Sandbox mode has one cluster (fixtures/directory.yaml's default); real mode a Shoot for
 *  each cluster of clusters/real-directory.yaml. A function: the configs import this module
 *  before they set WALK_MODE. */
export const walkClusters = (): WalkCluster[] => process.env.WALK_MODE === 'real'
  ? [
    { id: '019b4000-2000-7000-8000-000000000001', name: 'prod-eu', project: 'webshop' },
    { id: '019b4000-2000-7000-8000-000000000003', name: 'prod-us', project: 'storefront' },
  ]
  : [{ id: '019b4000-2000-7000-8000-000000000001', name: 'prod-eu', project: 'webshop' }];

const cached = new Map<string, string>();

/** An admin kubeconfig of a cluster the walk runs on: the sandbox's own, or the Shoot's,
 *  issued by the garden's adminkubeconfig subresource as Gardener issues it. */
export function clusterKubeconfig(shoot = 'prod-eu'): string {
  const known = cached.get(shoot);
  if (known) return known;
  if (process.env.WALK_MODE === 'sandbox') return process.env.SANDBOX_KUBECONFIG!;
  const garden = path.join(gardenState, 'garden', 'kubeconfig');
  const request = JSON.stringify({
    apiVersion: 'authentication.gardener.cloud/v1alpha1', kind: 'AdminKubeconfigRequest', spec: { expirationSeconds: 3600 },
  });
  const answer = JSON.parse(execFileSync('kubectl', ['--kubeconfig', garden, 'create', '--raw',
    `/apis/core.gardener.cloud/v1beta1/namespaces/garden-acme-corp/shoots/${shoot}/adminkubeconfig`, '-f', '-'], { encoding: 'utf8', input: request }));
  const file = scratchFile(`${shoot}-kubeconfig`);
  fs.writeFileSync(file, Buffer.from(answer.status.kubeconfig, 'base64'));
  cached.set(shoot, file);
  return file;
}
