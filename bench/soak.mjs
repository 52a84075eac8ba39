// Soak: SOAK_USERS (200) simulated users browse `fundament dev` over HTTP for SOAK_SECONDS (600):
// each signs in, keeps a watch open through the console's cluster route (re-opened whenever
// it ends), and in a loop with about a second between steps loads server-rendered pages
// (home, a generated list, a plugin page), fetches lists and details as the browser code
// does, and on plugin pages mints a PluginToken and calls the gateway's plugin path with it
// as the frame would. Loopback only, bounded in users and time. Writes bench/results/soak.json:
// errors, p50/p99 per request type, and the stack's memory (RSS) every 10 s.
// Run by scripts/bench after the build; it starts its own `fundament dev`.
import fs from 'node:fs';
import path from 'node:path';
import { execFile, execFileSync } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import { bin, root, round, sleep, startDev } from './lib.mjs';

const port = Number(process.env.BENCH_PORT ?? 3902);
const users = Number(process.env.SOAK_USERS ?? 200);
const seconds = Number(process.env.SOAK_SECONDS ?? 600);
const cluster = '019b4000-2000-7000-8000-000000000001';
const gateway = 'http://localhost:8081';
const emails = ['alice@acme-corp.com', 'bob@acme-corp.com'];
const kube = `/kube/clusters/${cluster}`;
// As the console's own fetch() sends them (the cluster route refuses anything else).
const fromScript = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' };

const samples = new Map(); // request type -> latencies (ms)
const errors = new Map(); // request type -> count
const firstErrors = [];
let watchEvents = 0;

function record(type, ms, ok, detail) {
  if (!samples.has(type)) samples.set(type, []);
  samples.get(type).push(ms);
  if (!ok) {
    errors.set(type, (errors.get(type) ?? 0) + 1);
    if (firstErrors.length < 20) firstErrors.push(`${type}: ${detail}`);
  }
}

async function timed(type, url, init = {}, check = (r) => r.ok) {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { redirect: 'manual', ...init, signal: AbortSignal.timeout(30_000) });
    const body = await res.text();
    const ok = check(res, body);
    record(type, performance.now() - t0, ok, `${res.status} ${body.slice(0, 200)}`);
    return ok ? body : null;
  } catch (error) {
    record(type, performance.now() - t0, false, String(error));
    return null;
  }
}

async function signIn(base, email) {
  const res = await fetch(`${base}/api/sign-in`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', origin: base },
    body: `email=${encodeURIComponent(email)}&next=%2F`,
  });
  const cookie = res.headers.get('set-cookie');
  if (!cookie) throw new Error(`sign-in as ${email}: ${res.status}`);
  return cookie.split(';')[0];
}

/** Keeps one watch open until `until`; an end before that is re-opened (as the console does). */
async function keepWatching(base, cookie, until) {
  while (Date.now() < until) {
    const list = await timed('watch:list', `${base}${kube}/api/v1/namespaces/default/configmaps`, { headers: { cookie, ...fromScript } });
    const rv = list ? JSON.parse(list).metadata.resourceVersion : '0';
    const controller = new AbortController();
    const stop = setTimeout(() => controller.abort(), until - Date.now());
    const t0 = performance.now();
    try {
      const url = `${base}${kube}/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`;
      const res = await fetch(url, { headers: { cookie, ...fromScript }, signal: controller.signal });
      record('watch:open', performance.now() - t0, res.ok, `${res.status}`);
      if (!res.ok) { await sleep(1000); continue; }
      for await (const chunk of res.body) watchEvents += chunk.toString().split('\n').filter(Boolean).length;
    } catch (error) {
      if (!controller.signal.aborted) record('watch:open', performance.now() - t0, false, String(error));
    } finally {
      clearTimeout(stop);
    }
  }
}

/** The installation's id (its object's uid), as the console's registry knows it: read from a PluginToken's claims. */
function installationId(name) {
  const token = execFileSync(bin, ['token', 'plugin', '--email', emails[0], '--cluster', cluster, '--installation', name], { cwd: root, encoding: 'utf8' }).trim();
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).installation_id;
}

async function browse(base, cookie, until, n, installation) {
  const html = { headers: { cookie, accept: 'text/html' } };
  const api = { headers: { cookie, ...fromScript } };
  const steps = [
    () => timed('page:home', `${base}/`, html),
    () => timed('page:generated-list', `${base}/projects/webshop/plugin-resources/acme-corp--demo/demoitems.demo.fundament.io`, html),
    () => timed('page:plugin', `${base}/projects/webshop/plugin-resources/acme-corp--cert-manager/certificates.cert-manager.io`, html),
    () => timed('api:list', `${base}${kube}/api/v1/namespaces`, api),
    () => timed('api:detail', `${base}${kube}/api/v1/namespaces/default`, api),
    async () => {
      const body = await timed('api:plugin-token', `${base}/api/plugin-token`, {
        method: 'POST',
        headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: `cluster_id=${cluster}&installation_id=${installation}`,
      }, (r, b) => r.ok && b.includes('Minted'));
      const token = body && JSON.parse(body).Minted?.token;
      if (token) {
        await timed('gateway:plugin-list', `${gateway}/clusters/${cluster}/apis/cert-manager.io/v1/namespaces/default/certificates`,
          { headers: { authorization: `Bearer ${token}` } });
      }
    },
  ];
  let i = n;
  while (Date.now() < until) {
    await steps[i++ % steps.length]();
    await sleep(700 + Math.random() * 600);
  }
}

/** Changes a ConfigMap of default twice a second with the real kubectl, so every open watch carries events. */
async function keepChanging(until) {
  const kubeconfig = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'soak-')), 'kubeconfig');
  fs.writeFileSync(kubeconfig, execFileSync(bin, ['cluster', 'kubeconfig'], { cwd: root }));
  const kubectl = (...args) => promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, '-n', 'default', ...args]);
  const change = async (type, ...args) => {
    const t0 = performance.now();
    try {
      await kubectl(...args);
      record(type, performance.now() - t0, true);
      return true;
    } catch (error) {
      record(type, performance.now() - t0, false, error.stderr ?? String(error));
      return false;
    }
  };
  // apply and patch send JSON (kubectl's create sends ConfigMaps as protobuf, which the embedded cluster reads for a few kinds only).
  const manifest = path.join(path.dirname(kubeconfig), 'soak.json');
  fs.writeFileSync(manifest, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'soak' }, data: { n: '0' } }));
  await change('kubectl:apply', 'apply', '-f', manifest);
  let changes = 0;
  while (Date.now() < until) {
    if (await change('kubectl:patch', 'patch', 'configmap', 'soak', '--type', 'merge', '-p', JSON.stringify({ data: { n: String(changes) } }))) changes++;
    await sleep(500);
  }
  await change('kubectl:delete', 'delete', 'configmap', 'soak');
  return changes;
}

function rssOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024; // MiB
}

const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };

async function main() {
  const { child, base } = await startDev(port);
  try {
    const installation = installationId('acme-corp--cert-manager');
    const cookies = [];
    for (let u = 0; u < users; u++) cookies.push(await signIn(base, emails[u % emails.length]));
    const started = Date.now();
    const until = started + seconds * 1000;
    const memory = [];
    const sampler = setInterval(() => memory.push({ at_s: Math.round((Date.now() - started) / 1000), rss_mib: round(rssOf(child.pid)) }), 10_000);
    memory.push({ at_s: 0, rss_mib: round(rssOf(child.pid)) });
    const changing = keepChanging(until);
    await Promise.all(cookies.flatMap((cookie, n) => [
      keepWatching(base, cookie, until),
      // Users arrive over the first 10 s.
      sleep((n * 10_000) / users).then(() => browse(base, cookie, until, n, installation)),
    ]));
    const changes = await changing;
    clearInterval(sampler);
    memory.push({ at_s: Math.round((Date.now() - started) / 1000), rss_mib: round(rssOf(child.pid)) });
    // Start: once every user browses and every cache is filled (the sample at 60 s).
    const warm = memory.find((m) => m.at_s >= 60) ?? memory[0];
    const end = memory[memory.length - 1];
    const totalErrors = [...errors.values()].reduce((a, b) => a + b, 0);
    const byType = Object.fromEntries([...samples].sort().map(([type, xs]) => [type, {
      requests: xs.length, errors: errors.get(type) ?? 0, p50_ms: round(quantile(xs, 0.5)), p99_ms: round(quantile(xs, 0.99)),
    }]));
    const result = {
      what: `${users} users for ${seconds} s against fundament dev (mock mode) on loopback: each signs in, holds a watch of default's ConfigMaps through the console's cluster route (kubectl patches one twice a second), and every 0.7–1.3 s loads the home page, a generated list page or a plugin page (server-rendered), lists namespaces, reads one, or mints a PluginToken (console server function) and lists Certificates through the gateway's plugin path with it`,
      machine: '2 cores shared by the load generator (Node) and the whole stack',
      users, seconds,
      requests: [...samples.values()].reduce((a, xs) => a + xs.length, 0),
      errors: totalErrors,
      first_errors: firstErrors,
      configmap_changes: changes,
      watch_events_received: watchEvents,
      watch_events_per_user_per_change: round(watchEvents / users / Math.max(changes, 1), 2),
      by_type: byType,
      memory_rss_mib: { at_60s: warm.rss_mib, end: end.rss_mib, growth_percent: round(((end.rss_mib - warm.rss_mib) / warm.rss_mib) * 100), samples: memory },
    };
    const out = path.join(root, 'bench/results/soak.json');
    fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify({ requests: result.requests, errors: totalErrors, memory: result.memory_rss_mib.growth_percent, by_type: byType }, null, 1));
    if (totalErrors > 0) process.exitCode = 1;
  } finally {
    // A clean stop (the stack drains for up to 40 s), so the next run finds its ports free.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
