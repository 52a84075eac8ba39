// The ports of a `fundament dev` stack that a suite runs beside the local topology's (:3000 for
// the console, :808x for the services, :8090 for the embedded cluster), as the FUNDAMENT_*
// variables `fundament dev` reads. The specs' helpers (end2end/tests/origins.ts) and the
// `fundament token` and `fundament cluster kubeconfig` commands they run read the same ones, so
// a suite that sets them in its config (runner and workers load it first) reaches its own stack.
// Chromium refuses some ports outright (6000, 6665–6669, ...): the browser only talks to the
// console's and the services' ports, so those must not be among them.

/** Where a stack listens: the console, the first of four services (kube-api-proxy,
 *  plugin-proxy, authn, organization-api, in that order) and the embedded cluster. */
export interface StackPorts { console: number; services: number; cluster: number }

export function stackEnv({ console, services, cluster }: StackPorts): Record<string, string> {
  const listen = (port: number) => `127.0.0.1:${port}`;
  const service = (name: string, port: number) => ({
    [`FUNDAMENT_${name}_LISTEN`]: listen(port),
    [`FUNDAMENT_${name}_URL`]: `http://localhost:${port}`,
  });
  return {
    ...service('CONSOLE', console),
    ...service('KUBE_API_PROXY', services),
    ...service('PLUGIN_PROXY', services + 1),
    ...service('AUTHN', services + 2),
    ...service('ORGANIZATION_API', services + 3),
    FUNDAMENT_CLUSTER_LISTEN: listen(cluster),
    FUNDAMENT_CLUSTER_URL: `https://localhost:${cluster}`,
  };
}
