/* Fundament plugin SDK v1 (postMessage protocol 1): sets window.fundament. See README.md. */
(() => {
'use strict';
const W = window, P = W.parent, D = document;
if (W.fundament) return;
const T = W.__FUNDAMENT_SDK_TEST_TIMINGS__ || {}; // test-only
const ms = (v, d) => (v >= 0 ? v : d);
const WAIT = ms(T.tokenWaitMs, 2e4), TIMEOUT = ms(T.requestTimeoutMs, 3e4), RETRY = ms(T.watchRetryMs, 1e3);

class SdkError extends Error {
  constructor(code, message, status, extra) {
    super(message);
    Object.assign(this, { name: 'SdkError', code }, status && { status }, extra);
  }
}

let origin = null, ctx, token, exp, failed, asked = 0, theme, done;
const waiters = new Set(), themeCbs = new Set();
const init = new Promise((r) => (done = r));
const post = (type, data, to) => { if (P !== W) try { P.postMessage({ type, ...data }, to); } catch {} };
const toHost = (type, data) => void init.then(() => post(type, data, origin));
// Settles through setup's callbacks or times out (then calls the cleanup setup returned).
const wait = (what, setup) => new Promise((ok, no) => {
  const t = setTimeout(() => (undo && undo(), no(new SdkError('timeout', `no ${what} after ${WAIT} ms`))), WAIT);
  const undo = setup((v) => (clearTimeout(t), ok(v)), (e) => (clearTimeout(t), no(e)));
});
const ready = () => (ctx ? Promise.resolve(ctx) : wait('fundament:init', (ok) => void init.then(ok)));

const applyTheme = (t) => {
  if (t !== 'light' && t !== 'dark') return;
  const b = D.body;
  if (b) b.classList.remove('light', 'dark'), b.classList.add(t);
  else D.addEventListener('DOMContentLoaded', () => applyTheme(theme), { once: true });
  return (theme = t);
};

// PluginToken
const authErr = () => new SdkError('unauthorized', 'plugin auth failed: ' + failed, 0, { reason: failed });
const wake = (err) => waiters.forEach((w) => w(err));
const setToken = (t, e) => {
  if (!t || typeof t !== 'string') return;
  token = t, exp = +e, failed = null, asked = 0;
  wake();
  return 1;
};
const askRefresh = () => { // to the pinned origin only, once per wait
  if (origin && Date.now() - asked >= WAIT) asked = Date.now(), post('plugin:request-token-refresh', {}, origin);
};
function getToken() {
  if (exp && Date.now() / 1e3 > exp - 10) token = null;
  if (token) return Promise.resolve(token);
  if (failed && failed !== 'mint_failed') return Promise.reject(authErr());
  askRefresh();
  return wait('PluginToken', (ok, no) => {
    const w = (err) => (waiters.delete(w), err ? no(err) : ok(token));
    waiters.add(w);
    return () => waiters.delete(w);
  });
}

W.addEventListener('message', (e) => {
  const d = e.data, type = d && d.type;
  if (P === W || e.source !== P || (origin ? e.origin !== origin : type !== 'fundament:init')) return;
  if (type === 'fundament:init') {
    if (d.protocolVersion !== 1 || e.origin === 'null') return;
    origin = e.origin;
    applyTheme(d.theme);
    if (!ctx) {
      const { type, protocolVersion, token, tokenExpiresAt, ...c } = d;
      done((ctx = Object.freeze(c)));
    }
    failed = null;
    if (!setToken(d.token, d.tokenExpiresAt) && waiters.size) askRefresh();
  } else if (type === 'fundament:theme-changed') {
    if (applyTheme(d.theme)) themeCbs.forEach((cb) => { try { cb(theme); } catch {} });
  } else if (type === 'fundament:token-refreshed') setToken(d.token, d.tokenExpiresAt);
  else if (type === 'fundament:auth-failed') {
    token = null, asked = 0, failed = (typeof d.reason === 'string' && d.reason) || 'unknown';
    wake(authErr());
  }
});

// fetch with the Bearer token and a timer; on 401 one retry with a new token. read: [response, body text].
async function call(input, opts = {}, read) {
  for (let retry = 0; ; retry++) {
    const tok = await getToken(), ac = new AbortController(), sig = opts.signal;
    const headers = new Headers(opts.headers || input.headers);
    headers.set('Authorization', 'Bearer ' + tok);
    let late, res, text;
    const t = setTimeout(() => ac.abort((late = 1)), TIMEOUT);
    if (sig) sig.aborted ? ac.abort(sig.reason) : sig.addEventListener('abort', () => ac.abort(sig.reason));
    try {
      res = await fetch(input.clone ? input.clone() : input, { credentials: 'omit', ...opts, headers, signal: ac.signal });
      if (read) text = await res.text();
    } catch (err) {
      throw late ? new SdkError('timeout', `request timed out after ${TIMEOUT} ms`)
        : sig && sig.aborted ? err : new SdkError('transport', (err && err.message) || 'transport error');
    } finally {
      clearTimeout(t);
    }
    if (res.status !== 401 || retry) return read ? [res, text] : res;
    if (token === tok) token = null; // else a newer one has arrived
  }
}

// Kubernetes. q undefined: object URL; q object: collection URL with query q.
const enc = encodeURIComponent;
function url(c, a, q) {
  if (!a || !a.version || !a.resource || !(q || a.name)) throw new TypeError('fundament.k8s: version, resource or name missing');
  const s = new URLSearchParams(Object.entries(q || {}).filter(([, v]) => v != null && v !== '')) + '';
  return String(c.kubeApiProxyUrl).replace(/\/+$/, '') + '/clusters/' + enc(c.clusterId) +
    (a.group ? '/apis/' + enc(a.group) + '/' : '/api/') + enc(a.version) +
    (a.namespace ? '/namespaces/' + enc(a.namespace) : '') + '/' + enc(a.resource) +
    (q ? (s ? '?' + s : '') : '/' + enc(a.name));
}
const sel = (a) => ({ labelSelector: a.labelSelector, fieldSelector: a.fieldSelector });
const parse = (t) => { try { return t ? JSON.parse(t) : null; } catch {} };
const httpErr = (s, j, text, watch) => new SdkError(
  s === 401 ? 'unauthorized' : s === 403 ? 'forbidden' : s === 410 && watch ? 'gone' : 'http',
  (j && typeof j.message === 'string' && j.message) || text || 'HTTP ' + s, s,
  j && j.kind === 'Status' && { reason: j.reason, details: j.details });
async function req(method, a, body, q) {
  const u = url(await ready(), a, q), headers = { Accept: 'application/json' }, opts = { method, headers };
  if (body !== undefined) {
    opts.body = JSON.stringify(body);
    headers['Content-Type'] = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
  }
  const [res, text] = await call(u, opts, 1), j = parse(text);
  if (!res.ok) throw httpErr(res.status, j, res.statusText);
  if (j === undefined) throw new SdkError('http', 'response is not JSON', res.status);
  return j;
}
const list = async (a) => {
  const j = (await req('GET', a, undefined, { ...sel(a), limit: a.limit, continue: a.continue })) || {};
  return { items: j.items || [], metadata: j.metadata || {} };
};

// Streams events, resuming from the last resourceVersion; 410: onError('gone'), fresh list, resume.
function watch(a, o = {}) {
  let rv = o.resourceVersion, stopped, ac, timer, fails = 0;
  const emit = (f, x) => { if (!stopped && f) try { f(x); } catch {} };
  const ref = { ...a, fieldSelector: [a.fieldSelector, a.name && 'metadata.name=' + a.name].filter(Boolean).join() };
  const again = (d) => { if (!stopped) timer = setTimeout(run, d); };
  async function run() {
    try {
      if (!rv) {
        const l = await list(ref);
        rv = l.metadata.resourceVersion;
        l.items.forEach((object) => emit(o.onEvent, { type: 'ADDED', object }));
      }
      const c = await ready(), q = { ...sel(ref), watch: 1, allowWatchBookmarks: true, resourceVersion: rv };
      if (stopped) return;
      ac = new AbortController();
      const res = await call(url(c, ref, q), { headers: { Accept: 'application/json' }, signal: ac.signal });
      if (!res.ok) throw httpErr(res.status, parse(await res.text()), res.statusText, 1);
      fails = 0;
      const rd = res.body.getReader(), dec = new TextDecoder();
      let buf = '', i;
      for (let r; !(r = await rd.read()).done; ) {
        buf += dec.decode(r.value, { stream: true });
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i).trim(), ev = parse(line), obj = (ev && ev.object) || {};
          buf = buf.slice(i + 1);
          if (!line) continue;
          if (!ev || !ev.type) throw new SdkError('transport', 'malformed watch event');
          if (ev.type === 'ERROR') throw httpErr(obj.code || 500, obj, '', 1);
          rv = (obj.metadata && obj.metadata.resourceVersion) || rv;
          if (ev.type !== 'BOOKMARK') emit(o.onEvent, ev);
        }
      }
      again(RETRY);
    } catch (err) {
      if (stopped) return;
      const e = err instanceof SdkError ? err : new SdkError('transport', (err && err.message) || 'watch failed');
      emit(o.onError, e);
      if (e.code === 'gone') rv = undefined, again(0);
      else if ((e.status < 500 && e.status !== 429) || e.code === 'unauthorized') stopped = 1; // final
      else again(Math.min(RETRY * 2 ** fails++, 3e4));
    }
  }
  again(0);
  return { stop() { stopped = 1; clearTimeout(timer); ac && ac.abort(); } };
}

// Resize: once the page's stylesheets have loaded, then on every size change.
let last, rt;
const report = () => {
  clearTimeout(rt);
  rt = setTimeout(() => {
    const h = Math.ceil(Math.max(D.documentElement.getBoundingClientRect().height, D.body ? D.body.scrollHeight : 0));
    if (h !== last) last = h, post('plugin:resize', { height: h }, origin || '*');
  }, ms(T.resizeDebounceMs, 50));
};
const sheets = [...D.querySelectorAll('link[rel~=stylesheet]')].filter((l) => !l.sheet)
  .map((l) => new Promise((r) => ['load', 'error'].forEach((t) => l.addEventListener(t, r))));
Promise.race([Promise.all(sheets), new Promise((r) => setTimeout(r, 3e3))])
  .then(() => new ResizeObserver(report).observe(D.documentElement));

W.fundament = Object.freeze({
  init,
  get parentOrigin() { return origin; },
  getToken,
  fetch: (input, opts) => call(input, opts),
  k8s: {
    list,
    get: (a) => req('GET', a),
    create: (a, body) => req('POST', a, body, {}),
    patch: (a, body) => req('PATCH', a, body),
    delete: (a) => req('DELETE', a),
    watch,
  },
  onThemeChange(cb) { themeCbs.add(cb); return () => void themeCbs.delete(cb); },
  navigate(name, namespace) {
    if (!name || typeof name !== 'string') throw new TypeError('fundament.navigate: name required');
    toHost('plugin:navigate', namespace ? { name, namespace } : { name });
  },
  create: () => toHost('plugin:create'),
  back: () => toHost('plugin:navigate-back'),
  SdkError,
});
post('plugin:ready', { protocolVersion: 1 }, '*');
})();
