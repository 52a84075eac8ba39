// Test harness of the SDK: three tiny HTTP servers on three loopback origins, started once per worker.
//   host   http://127.0.0.1:<p>  plays the console (host.html embeds the plugin page, records messages)
//   plugin http://127.0.0.2:<p>  plays plugin-proxy (the test plugin page and /plugins/sdk/v1/ from this folder, minified as served)
//   kube   http://127.0.0.3:<p>  plays kube-api-proxy (CORS for the plugin origin; each test scripts its answers)
import { test as base, expect as baseExpect, type Frame, type Page } from '@playwright/test';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FundamentSdk, FundamentSdkTestTimings } from '../plugin-sdk';

declare global {
  interface Window {
    fundament: FundamentSdk;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    host: any;
    sdkLoaded: Promise<FundamentSdk>;
    cspViolations: string[];
    seen: { type: unknown; origin: string; fromParent: boolean }[];
    cssLoadedAt?: number;
    settle<T>(p: Promise<T>): Promise<Settled<T>>;
  }
}

export type Settled<T = unknown> =
  | { ok: true; value: T; elapsed: number }
  | {
      ok: false;
      elapsed: number;
      error: { name: string; code?: string; message: string; status?: number; reason?: string; details?: unknown; isSdkError: boolean };
    };

// expect, with expect.poll polling every 10–100 ms instead of Playwright's 100–1000 ms: the tests wait on
// conditions, not on fixed sleeps, and should not idle.
const POLL_INTERVALS = [10, 25, 50, 100];
export const expect: typeof baseExpect = new Proxy(baseExpect, {
  get(target, key, receiver) {
    if (key !== 'poll') return Reflect.get(target, key, receiver);
    return (fn: () => unknown, opts?: string | { message?: string; timeout?: number; intervals?: number[] }) =>
      target.poll(fn, { intervals: POLL_INTERVALS, ...(typeof opts === 'string' ? { message: opts } : opts) });
  },
});

const FIXTURES = path.join(__dirname, 'fixtures');
const SDK_DIR = path.join(__dirname, '..');

export interface KubeRequest {
  method: string;
  url: string; // path and query
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}
export type KubeHandler = (req: KubeRequest, res: http.ServerResponse) => unknown;

export function sendJson(res: http.ServerResponse, status: number, body: unknown, statusText?: string) {
  res.writeHead(status, statusText ?? http.STATUS_CODES[status], { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
export function sendStatus(res: http.ServerResponse, code: number, reason: string, message: string, details?: unknown) {
  sendJson(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...(details ? { details } : {}) });
}

function defaultKube(req: KubeRequest, res: http.ServerResponse) {
  const last = req.path.split('/').pop();
  if (req.method === 'GET' && req.query.get('watch')) return; // held open
  if (req.method === 'GET') {
    return sendJson(res, 200, /s$/.test(last ?? '') && !/\/namespaces\/[^/]+$/.test(req.path)
      ? { kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [] }
      : { kind: 'Object', metadata: { name: last } });
  }
  if (req.method === 'DELETE') return sendJson(res, 200, { kind: 'Status', status: 'Success', details: { name: last } });
  return sendJson(res, req.method === 'POST' ? 201 : 200, JSON.parse(req.body || 'null'));
}

class Servers {
  hostOrigin = '';
  pluginOrigin = '';
  kubeOrigin = '';
  kubeRequests: KubeRequest[] = [];
  kubeHandler: KubeHandler = defaultKube;
  cssDelayMs = 0;
  private open = new Set<http.ServerResponse>();
  private servers: http.Server[] = [];

  async start() {
    this.hostOrigin = await this.listen('127.0.0.1', (req, res) => this.serveHost(req, res));
    this.pluginOrigin = await this.listen('127.0.0.2', (req, res) => this.servePlugin(req, res));
    this.kubeOrigin = await this.listen('127.0.0.3', (req, res) => void this.serveKube(req, res));
  }

  reset() {
    for (const res of this.open) res.destroy();
    this.open.clear();
    this.kubeRequests = [];
    this.kubeHandler = defaultKube;
    this.cssDelayMs = 0;
  }

  async stop() {
    this.reset();
    await Promise.all(this.servers.map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
  }

  private listen(ip: string, fn: http.RequestListener): Promise<string> {
    const server = http.createServer(fn);
    server.keepAliveTimeout = 1000;
    this.servers.push(server);
    return new Promise((resolve) => server.listen(0, ip, () => resolve(`http://${ip}:${(server.address() as AddressInfo).port}`)));
  }

  private file(res: http.ServerResponse, file: string, headers: Record<string, string> = {}) {
    const type = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' }[path.extname(file)];
    res.writeHead(200, { 'Content-Type': type ?? 'application/octet-stream', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...headers });
    res.end(fs.readFileSync(file));
  }

  private serveHost(req: http.IncomingMessage, res: http.ServerResponse) {
    const p = new URL(req.url ?? '/', this.hostOrigin).pathname;
    if (['/host.html', '/host.js', '/sibling.html'].includes(p)) return this.file(res, path.join(FIXTURES, p));
    res.writeHead(404).end();
  }

  private servePlugin(req: http.IncomingMessage, res: http.ServerResponse) {
    const p = new URL(req.url ?? '/', this.pluginOrigin).pathname;
    if (p === '/plugin.html') {
      // The plugin CSP: no inline script or style, connections to kube-api-proxy and this origin only.
      const csp = `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self' ${this.kubeOrigin}; ` +
        `frame-ancestors ${this.hostOrigin}; base-uri 'none'; object-src 'none'; form-action 'self'`;
      return this.file(res, path.join(FIXTURES, p), { 'Content-Security-Policy': csp });
    }
    if (['/plugin-page.js', '/showcase.html', '/sibling.html'].includes(p)) return this.file(res, path.join(FIXTURES, p));
    // What plugin-proxy serves at this URL: the minified SDK (plugin-sdk/minify.mjs), so every test runs on it.
    if (p === '/plugins/sdk/v1/plugin-sdk.js') return this.file(res, path.join(SDK_DIR, 'plugin-sdk.min.js'));
    if (p === '/plugins/sdk/v1/plugin-sdk.css') {
      setTimeout(() => {
        if (!res.destroyed) this.file(res, path.join(SDK_DIR, 'plugin-sdk.css'));
      }, this.cssDelayMs);
      return;
    }
    res.writeHead(404).end();
  }

  private async serveKube(req: http.IncomingMessage, res: http.ServerResponse) {
    const u = new URL(req.url ?? '/', this.kubeOrigin);
    if (u.pathname === '/sibling.html') return this.file(res, path.join(FIXTURES, 'sibling.html'));
    // CORS as kube-api-proxy answers the plugin origin: no credentials.
    if (req.headers.origin === this.pluginOrigin) res.setHeader('Access-Control-Allow-Origin', this.pluginOrigin);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'Access-Control-Allow-Methods': 'GET, POST, PUT, PATCH, DELETE',
        'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, X-Test',
        'Access-Control-Max-Age': '600',
      });
      return res.end();
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const r: KubeRequest = {
      method: req.method ?? 'GET', url: req.url ?? '/', path: u.pathname, query: u.searchParams,
      headers: req.headers, body: Buffer.concat(chunks).toString('utf8'),
    };
    this.kubeRequests.push(r);
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    try {
      await this.kubeHandler(r, res);
    } catch (e) {
      if (!res.headersSent) sendJson(res, 599, { message: String(e) });
    }
  }
}

export interface OpenOptions {
  timings?: FundamentSdkTestTimings;
  autoInit?: boolean;
  /** How the host answers plugin:request-token-refresh: 'token' (a new token), 'none', or an auth-failed reason. */
  onRefresh?: string;
  init?: Record<string, unknown>;
  /** Extra iframes beside the plugin frame: 'host' (console origin), 'plugin' or 'kube' (a third origin). */
  siblings?: ('host' | 'plugin' | 'kube')[];
}

export interface Plugin {
  page: Page;
  frame: Frame;
  /** Messages the host page received, optionally of one type. */
  received(type?: string): Promise<{ type: string; data: Record<string, unknown>; origin: string; fromPlugin: boolean; at: number }[]>;
  /** Post a message from the host page to the plugin frame (target origin: the plugin origin unless given). */
  send(msg: Record<string, unknown>, target?: string): Promise<void>;
  /** Send fundament:init with the configured payload (plus extra fields). */
  init(extra?: Record<string, unknown>): Promise<void>;
  setHost(cfg: Partial<OpenOptions>): Promise<void>;
  /** Dispatch a synthetic message event in the plugin frame with source window.parent and the given origin. */
  synthetic(data: Record<string, unknown>, origin: string): Promise<void>;
  siblingFrames(): Frame[];
  /** Wait until the plugin page has seen n message events in all (from anyone). */
  seen(n: number): Promise<void>;
}

export interface Harness {
  servers: Servers;
  kube: {
    requests(): KubeRequest[];
    handle(fn: KubeHandler): void;
  };
  consoleMessages: string[];
  defaultInit(): Record<string, unknown>;
  open(opts?: OpenOptions): Promise<Plugin>;
}

export const test = base.extend<{ h: Harness }, { servers: Servers }>({
  servers: [
    async ({}, use) => {
      const s = new Servers();
      await s.start();
      await use(s);
      await s.stop();
    },
    { scope: 'worker' },
  ],
  h: async ({ page, servers }, use) => {
    servers.reset();
    const consoleMessages: string[] = [];
    page.on('console', (m) => consoleMessages.push(m.text()));
    const defaultInit = () => ({
      protocolVersion: 1,
      theme: 'light',
      pluginName: 'acme-corp--demo',
      crdKind: 'DemoItem',
      view: 'list',
      kubeApiProxyUrl: servers.kubeOrigin + '/kube/',
      clusterId: 'cluster-1',
      token: 'token-1',
      tokenExpiresAt: Math.floor(Date.now() / 1000) + 900,
    });
    const h: Harness = {
      servers,
      kube: {
        requests: () => servers.kubeRequests,
        handle: (fn) => void (servers.kubeHandler = fn),
      },
      consoleMessages,
      defaultInit,
      async open(opts = {}) {
        await page.goto(servers.hostOrigin + '/host.html');
        const q = opts.timings ? '?timings=' + encodeURIComponent(JSON.stringify(opts.timings)) : '';
        const src = `${servers.pluginOrigin}/plugin.html${q}`;
        const origins = { host: servers.hostOrigin, plugin: servers.pluginOrigin, kube: servers.kubeOrigin };
        const siblings = (opts.siblings ?? []).map((o) => origins[o] + '/sibling.html');
        await page.evaluate(
          ([cfg]) => window.host.start(cfg),
          [{ src, siblings, autoInit: opts.autoInit ?? true, onRefresh: opts.onRefresh ?? 'token', init: { ...defaultInit(), ...opts.init } }] as const,
        );
        await expect.poll(() => page.frames().find((f) => f.url() === src)).toBeTruthy();
        const frame = page.frames().find((f) => f.url() === src)!;
        await frame.waitForFunction(() => typeof window.fundament === 'object');
        for (const s of siblings) await expect.poll(() => page.frames().some((f) => f.url() === s)).toBe(true);
        return {
          page,
          frame,
          received: (type) => page.evaluate((t) => (t ? window.host.of(t) : window.host.received), type),
          send: (msg, target) => page.evaluate(([m, t]) => window.host.send(m, t), [msg, target] as const),
          // postMessage is delivered in a later task: wait until the page has seen the init, so the
          // next evaluate observes its effect instead of racing it.
          init: async (extra) => {
            const before = await frame.evaluate(() => window.seen.length);
            await page.evaluate((x) => window.host.init(x), extra);
            await expect.poll(() => frame.evaluate(() => window.seen.length)).toBeGreaterThan(before);
          },
          setHost: (cfg) => page.evaluate((c) => Object.assign(window.host.cfg, c), cfg),
          synthetic: (data, origin) =>
            frame.evaluate(([d, o]) => void window.dispatchEvent(new MessageEvent('message', { data: d, origin: o, source: window.parent })), [data, origin] as const),
          siblingFrames: () => page.frames().filter((f) => f.url().endsWith('/sibling.html')),
          seen: (n) => expect.poll(() => frame.evaluate(() => window.seen.length)).toBeGreaterThanOrEqual(n),
        };
      },
    };
    await use(h);
  },
});


/** Poll until the host has received `n` messages of `type`, then return them. */
export async function waitFor(p: Plugin, type: string, n = 1) {
  await expect.poll(async () => (await p.received(type)).length).toBeGreaterThanOrEqual(n);
  return p.received(type);
}
