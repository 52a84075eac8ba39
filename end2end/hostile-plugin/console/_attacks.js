// The hostile plugin's attacks. Each one tries something a plugin page must not be able to do
// and records what actually happened: `refused` is computed from what the page saw (an
// exception, a status code, a null, an opaque answer it cannot read, a CSP violation event),
// never written down. Where the page cannot see the outcome (a side effect on the server, the
// console's URL, the console's session) the entry says `verifiedBy: 'spec'` and the Playwright
// spec (end2end/tests/hostile.spec.ts) checks it from outside.
//
// Results go to <pre id="results"> as JSON, one line per attack, as they happen (so a page that
// an attack managed to tear down still shows how far it got); <body data-done="true"> at the end.

export const OTHER_CLUSTER = '019b4000-2000-7000-8000-000000000002';
export const AUTHN = 'http://localhost:8083';
// The pinned version of acme-corp--cert-manager (plugins/cert-manager/definition.yaml).
export const CERT_MANAGER_VERSION = 'v1.17.2';
export const LOOTS = { group: 'hostile.example.io', version: 'v1', resource: 'loots', namespace: 'default' };

const results = [];
const controls = [];

/** A control: something the page must be able to do, so that its refusals mean something. */
export function control(name, ok, detail) {
  controls.push({ name, ok: Boolean(ok), detail: String(detail) });
  const pre = document.getElementById('controls');
  if (pre) pre.textContent = JSON.stringify(controls);
}

/** Appends one attack's outcome and shows every outcome so far. */
export function record(id, attack, refused, detail, extra = {}) {
  if (typeof refused !== 'boolean') throw new TypeError(`${id}: refused must be computed as a boolean`);
  results.push({ id, attack, refused, detail: String(detail), ...extra });
  const pre = document.getElementById('results');
  if (pre) pre.textContent = `[\n${results.map((r) => JSON.stringify(r)).join(',\n')}\n]`;
}

export function finish() {
  const status = document.getElementById('status');
  const let_through = results.filter((r) => !r.refused).length;
  if (status) status.textContent = `${results.length} attacks, ${let_through} not refused.`;
  document.body.dataset.done = 'true';
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Whether this frame began to unload (the console navigated away, or this frame did).
let unloads = 0;
window.addEventListener('beforeunload', () => { unloads += 1; });
window.addEventListener('pagehide', () => { unloads += 1; });
/** Starts watching; the returned function says whether an unload began since. */
export function leaving() {
  const mark = unloads;
  return () => unloads !== mark;
}

/** Rejects with Error('timeout') after `ms`, so that no attack can hang the page. */
export function within(ms, promise) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timeout after ${ms} ms`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

// ---- CSP violations -------------------------------------------------------------------------

const violations = [];
const violationWaiters = new Set();
document.addEventListener('securitypolicyviolation', (e) => {
  const v = { directive: e.effectiveDirective || e.violatedDirective, blocked: e.blockedURI };
  violations.push(v);
  for (const w of violationWaiters) w(v);
});

/** The number of violations seen so far (a mark for `violationSince`). */
export const violationMark = () => violations.length;

/**
 * The first CSP violation after `mark` of `directive` for a URL starting with `prefix` (Chromium
 * may report a cross-origin URL as its origin only, so compare origins), waiting up to `ms`.
 */
export function violationSince(mark, directive, prefix, ms = 1500) {
  const origin = (() => { try { return new URL(prefix).origin; } catch { return prefix; } })();
  const matches = (v) => v.directive === directive && (v.blocked.startsWith(prefix) || v.blocked.startsWith(origin));
  const seen = violations.slice(mark).find(matches);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => {
    const w = (v) => {
      if (!matches(v)) return;
      violationWaiters.delete(w);
      clearTimeout(timer);
      resolve(v);
    };
    const timer = setTimeout(() => { violationWaiters.delete(w); resolve(null); }, ms);
    violationWaiters.add(w);
  });
}

// ---- building blocks ------------------------------------------------------------------------

/** `fetch` that reports instead of throwing: `{ ok, status, type, text }` or `{ error }`. */
export async function tryFetch(url, init = {}, ms = 8000) {
  try {
    const r = await within(ms, fetch(url, init));
    let text = null;
    try { text = r.type === 'opaque' ? null : (await within(ms, r.text())).slice(0, 300); } catch { text = null; }
    return { ok: r.ok, status: r.status, type: r.type, text };
  } catch (err) {
    return { error: `${err.name}: ${err.message}` };
  }
}

const describe = (a) => (a.error ? `threw ${a.error}` : `status ${a.status} (${a.type})${a.text ? `: ${a.text.slice(0, 120)}` : ''}`);

/** A CORS-mode attempt is refused when it threw (CORS, CSP) or did not answer 2xx. */
const corsRefused = (a) => Boolean(a.error) || !a.ok;

/** A hidden frame for form targets, same-origin (about:blank). */
function sink(name) {
  const frame = document.createElement('iframe');
  frame.name = name;
  frame.hidden = true;
  frame.title = name;
  document.body.append(frame);
  return frame;
}

/**
 * Submits a form and reports whether the page's CSP stopped it (`form-action`). `fields` are
 * [name, value] pairs; with enctype text/plain a single field can carry a JSON body.
 */
async function submitForm({ action, method = 'POST', enctype, target, fields = [] }) {
  const form = document.createElement('form');
  form.action = action;
  form.method = method;
  if (enctype) form.enctype = enctype;
  form.target = target;
  form.hidden = true;
  for (const [name, value] of fields) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = value;
    form.append(input);
  }
  document.body.append(form);
  const mark = violationMark();
  let threw = null;
  try { form.submit(); } catch (err) { threw = `${err.name}: ${err.message}`; }
  const violation = await violationSince(mark, 'form-action', action);
  form.remove();
  return { violation, threw, refused: Boolean(violation) || Boolean(threw) };
}

/** Adds an element whose `src` is `url` and reports the CSP violation of `directive`, if any. */
async function embed(tag, url, directive, ms = 1500) {
  const el = document.createElement(tag);
  el.hidden = true;
  if (tag === 'iframe') el.title = 'embedded';
  const mark = violationMark();
  const loaded = new Promise((resolve) => {
    el.addEventListener('load', () => resolve('load'), { once: true });
    el.addEventListener('error', () => resolve('error'), { once: true });
  });
  el.src = url;
  document.body.append(el);
  const violation = await violationSince(mark, directive, url, ms);
  const event = await Promise.race([loaded, sleep(50).then(() => 'none')]);
  return { el, violation, event };
}

// ---- the attacks ----------------------------------------------------------------------------

export async function runAll(fundament, ctx) {
  const GW = ctx.kubeApiProxyUrl.replace(/\/+$/, '');
  const PROD = ctx.clusterId;
  const CONSOLE = fundament.parentOrigin;
  const gw = (path) => `${GW}/clusters/${PROD}${path}`;
  const token = await fundament.getToken();
  const bearer = (t = token) => ({ Authorization: `Bearer ${t}` });
  // A well-formed mint request for this very installation (its uid is in the token's claims), so
  // that authn has to judge the caller, not the shape of the request.
  const claims = (() => {
    try { return JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))); } catch { return {}; }
  })();
  const mintBody = JSON.stringify({ clusterId: PROD, installationId: claims.installation_id ?? '' });
  const lootsUrl = gw('/apis/hostile.example.io/v1/namespaces/default/loots');
  const secretsUrl = gw('/api/v1/namespaces/default/secrets');
  const ownPage = (file) => `${location.origin}${location.pathname.replace(/[^/]*$/, '')}${file}`;
  const otherInstallationOrigin = location.origin.replace(/\/\/[^.]+\./, '//acme-corp--cert-manager.');
  const otherInstallationPage = `${otherInstallationOrigin}/clusters/${PROD}/plugins/acme-corp--cert-manager/${CERT_MANAGER_VERSION}/console/certificates-list.html`;

  const attacks = [];
  const attack = (fn) => attacks.push(fn);

  // 0. Controls: the page's own channel works (the SDK, a bearer fetch through CORS).
  attack(async () => {
    try {
      const list = await within(10000, fundament.k8s.list(LOOTS));
      control('fundament.k8s.list loots', list.items.length >= 1, `${list.items.length} loots`);
    } catch (err) {
      control('fundament.k8s.list loots', false, `${err.name}:${err.code}:${err.status ?? ''} ${err.message}`);
    }
    const raw = await tryFetch(lootsUrl, { headers: bearer() });
    control('fetch loots with the PluginToken as bearer', raw.status === 200, describe(raw));
    try {
      const r = await within(10000, fundament.fetch(lootsUrl));
      control('fundament.fetch loots', r.status === 200, `status ${r.status}`);
    } catch (err) {
      control('fundament.fetch loots', false, `${err.name}:${err.code} ${err.message}`);
    }
  });

  // 1. Credentials in the page's reach.
  attack(async () => {
    const cookies = document.cookie;
    const names = cookies.split(';').map((c) => c.trim().split('=')[0]).filter(Boolean);
    const leaked = names.filter((n) => /fundament_(auth|frame)/i.test(n));
    const jwt = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./.test(cookies);
    record('cookie-read', 'read document.cookie on the plugin origin for the session or frame cookie',
      leaked.length === 0 && !jwt, `cookie names visible: [${names.join(', ')}]`);
  });

  attack(async () => {
    // The spec stored these in cert-manager's frame first (storage where the browser allows it in
    // a framed page, a partitioned cookie in any case).
    const found = [];
    const denied = [];
    const probe = async (what, read) => {
      try {
        const value = await read();
        if (value) found.push(`${what}: ${value}`);
      } catch (err) {
        denied.push(`${what} (${err.name})`);
      }
    };
    await probe('localStorage', () => localStorage.getItem('secret'));
    await probe('sessionStorage', () => sessionStorage.getItem('secret'));
    await probe('IndexedDB', async () => (await indexedDB.databases()).some((d) => d.name === 'cert-manager-db') && 'cert-manager-db');
    await probe('CacheStorage', async () => (await caches.keys()).includes('cert-manager-cache') && 'cert-manager-cache');
    await probe('cookie', () => /(?:^|;\s*)secret=/.test(document.cookie) && document.cookie);
    record('other-plugin-storage', "read cert-manager's localStorage, sessionStorage, IndexedDB, Cache Storage and cookies",
      found.length === 0,
      `${found.length ? `found ${found.join('; ')}` : 'nothing of cert-manager visible'}${denied.length ? `; denied to this frame: ${denied.join(', ')}` : ''}`);
  });

  // 2. The gateway with the user's cookies.
  attack(async () => {
    const a = await tryFetch(secretsUrl, { credentials: 'include' });
    record('gateway-cookie-cors', "fetch the gateway's secrets with credentials: 'include' (no bearer)",
      corsRefused(a), describe(a), { status: a.status ?? null });
  });

  attack(async () => {
    const configMap = (name) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { pwned: 'yes' } });
    // No Content-Type at all (a Blob without a type): the API server reads the body as JSON.
    const a = await tryFetch(gw('/api/v1/namespaces/default/configmaps'), {
      method: 'POST', mode: 'no-cors', credentials: 'include', body: new Blob([configMap('hostile-no-cors')]),
    });
    record('gateway-cookie-no-cors', "no-cors POST with the user's cookies creating ConfigMap default/hostile-no-cors",
      Boolean(a.error) || a.type === 'opaque', `${describe(a)}; whether it was created is checked by the spec`,
      { verifiedBy: 'spec' });
    const sinkFrame = sink('gateway-sink');
    const body = configMap('hostile-form');
    const f = await submitForm({
      action: gw('/api/v1/namespaces/default/configmaps'), enctype: 'text/plain', target: 'gateway-sink',
      fields: [[body.slice(0, -1) + ',"x":"', '"}']],
    });
    sinkFrame.remove();
    record('gateway-cookie-no-cors', 'form POST (text/plain JSON) creating ConfigMap default/hostile-form via the gateway',
      f.refused, f.violation ? `blocked by ${f.violation.directive}` : f.threw ?? 'submitted', { verifiedBy: 'spec' });
  });

  attack(async () => {
    const img = await embed('img', secretsUrl, 'img-src');
    img.el.remove();
    record('gateway-subresource', '<img src> of the gateway secrets (rides cookies, no CORS)',
      Boolean(img.violation), img.violation ? `blocked by ${img.violation.directive}` : `not blocked by CSP (${img.event})`);
    const script = await embed('script', secretsUrl, 'script-src-elem');
    script.el.remove();
    record('gateway-subresource', '<script src> of the gateway secrets',
      Boolean(script.violation), script.violation ? `blocked by ${script.violation.directive}` : `not blocked by CSP (${script.event})`);
  });

  attack(async () => {
    const wsUrl = `${GW.replace(/^http/, 'ws')}/clusters/${PROD}/api/v1/namespaces/default/secrets?watch=1`;
    const b64 = btoa(token).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    for (const [what, protocols] of [['cookies only', undefined], ['the PluginToken as bearer subprotocol', [`base64url.bearer.authorization.k8s.io.${b64}`]]]) {
      const mark = violationMark();
      const outcome = await new Promise((resolve) => {
        let ws;
        try { ws = protocols ? new WebSocket(wsUrl, protocols) : new WebSocket(wsUrl); } catch (err) { resolve(`threw ${err.name}: ${err.message}`); return; }
        const timer = setTimeout(() => { try { ws.close(); } catch {} resolve('no answer'); }, 3000);
        ws.onopen = () => { clearTimeout(timer); ws.close(); resolve('open'); };
        ws.onerror = () => { clearTimeout(timer); resolve('error'); };
        ws.onclose = (e) => { clearTimeout(timer); resolve(`closed ${e.code}`); };
      });
      const violation = await violationSince(mark, 'connect-src', wsUrl.replace(/\?.*$/, ''), 300);
      record('gateway-websocket', `WebSocket watch of the gateway's secrets with ${what}`, outcome !== 'open',
        `${outcome}${violation ? `; blocked by ${violation.directive}` : ''}`);
    }
  });

  // 3. authn.
  attack(async () => {
    for (const procedure of ['authn.v1.AuthnService/GetUserInfo', 'authn.v1.TokenService/MintPluginToken']) {
      const body = procedure.endsWith('MintPluginToken') ? mintBody : '{}';
      const a = await tryFetch(`${AUTHN}/${procedure}`, {
        method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json' }, body,
      });
      record('authn-cors', `credentialed fetch of authn ${procedure}`, corsRefused(a), describe(a));
    }
  });

  attack(async () => {
    for (const procedure of ['authn.v1.TokenService/MintPluginToken', 'authn.v1.AuthnService/SignOut']) {
      const a = await tryFetch(`${AUTHN}/${procedure}`, {
        method: 'POST', mode: 'no-cors', credentials: 'include', body: new Blob([procedure.endsWith('MintPluginToken') ? mintBody : '{}']),
      });
      record('authn-no-cors', `no-cors credentialed POST to authn ${procedure}`,
        Boolean(a.error) || a.type === 'opaque', `${describe(a)}; the console session is checked by the spec`,
        { verifiedBy: 'spec' });
    }
    const frame = sink('authn-sink');
    const f = await submitForm({
      action: `${AUTHN}/authn.v1.AuthnService/SignOut`, enctype: 'text/plain', target: 'authn-sink', fields: [['{"x":"', '"}']],
    });
    frame.remove();
    record('authn-no-cors', 'form POST to authn SignOut', f.refused,
      f.violation ? `blocked by ${f.violation.directive}` : f.threw ?? 'submitted', { verifiedBy: 'spec' });
  });

  attack(async () => {
    const url = `${AUTHN}/authn.v1.AuthnService/DevSignIn`;
    const a = await tryFetch(url, {
      method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'bob@acme-corp.com' }),
    });
    const gotToken = !a.error && a.ok && /accessToken/.test(a.text ?? '');
    record('dev-sign-in', 'fetch DevSignIn as bob@acme-corp.com', !gotToken && corsRefused(a), describe(a));
    const n = await tryFetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', body: new Blob([JSON.stringify({ email: 'bob@acme-corp.com' })]) });
    record('dev-sign-in', 'no-cors POST to DevSignIn as bob', Boolean(n.error) || n.type === 'opaque',
      `${describe(n)}; the console user is checked by the spec`, { verifiedBy: 'spec' });
    const frame = sink('dev-sink');
    const f = await submitForm({
      action: url, enctype: 'text/plain', target: 'dev-sink', fields: [['{"email":"bob@acme-corp.com","x":"', '"}']],
    });
    frame.remove();
    record('dev-sign-in', 'form POST (text/plain JSON) to DevSignIn as bob', f.refused,
      f.violation ? `blocked by ${f.violation.directive}` : f.threw ?? 'submitted', { verifiedBy: 'spec' });
  });

  attack(async () => {
    const url = `${AUTHN}/dev/faults/mint-plugin-token`;
    const put = await tryFetch(url, { method: 'PUT', mode: 'no-cors', body: '{"fail": true}' });
    record('dev-fault-switch', 'no-cors PUT {"fail": true} to the mint fault switch', Boolean(put.error) || put.type === 'opaque',
      `${describe(put)}; the switch is read back by the spec`, { verifiedBy: 'spec' });
    const cors = await tryFetch(url, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '{"fail": true}' });
    record('dev-fault-switch', 'CORS PUT {"fail": true} to the mint fault switch', corsRefused(cors), describe(cors), { verifiedBy: 'spec' });
    const post = await tryFetch(url, { method: 'POST', mode: 'no-cors', body: new Blob(['{"fail": true}']) });
    record('dev-fault-switch', 'no-cors POST {"fail": true} to the mint fault switch', Boolean(post.error) || post.type === 'opaque',
      describe(post), { verifiedBy: 'spec' });
    const frame = sink('fault-sink');
    const f = await submitForm({ action: url, enctype: 'text/plain', target: 'fault-sink', fields: [['{"fail": true, "x":"', '"}']] });
    frame.remove();
    record('dev-fault-switch', 'form POST {"fail": true} to the mint fault switch', f.refused,
      f.violation ? `blocked by ${f.violation.directive}` : f.threw ?? 'submitted', { verifiedBy: 'spec' });
  });

  // 4. Other origins of the stack.
  attack(async () => {
    const a = await tryFetch(otherInstallationPage, { credentials: 'include' });
    record('plugin-proxy-other-installation', "credentialed fetch of cert-manager's page on its own origin", corsRefused(a), describe(a));
    const n = await tryFetch(otherInstallationPage, { mode: 'no-cors', credentials: 'include' });
    record('plugin-proxy-other-installation', "no-cors fetch of cert-manager's page (readable?)",
      Boolean(n.error) || n.type === 'opaque', describe(n));
    const frame = await embed('iframe', otherInstallationPage, 'frame-src');
    let readable = false;
    try { readable = Boolean(frame.el.contentDocument && frame.el.contentDocument.body && frame.el.contentDocument.body.innerHTML); } catch { readable = false; }
    frame.el.remove();
    record('plugin-proxy-other-installation', "<iframe> of cert-manager's page inside the hostile page",
      Boolean(frame.violation) && !readable, frame.violation ? `blocked by ${frame.violation.directive}` : `not blocked by CSP (${frame.event}, readable: ${readable})`);
  });

  attack(async () => {
    const url = `${CONSOLE}/kube/clusters/${PROD}/api/v1/namespaces`;
    const a = await tryFetch(url, { credentials: 'include' });
    record('console-cluster-route', "credentialed fetch of the console's /kube cluster route", corsRefused(a), describe(a));
    const n = await tryFetch(url, { mode: 'no-cors', credentials: 'include' });
    record('console-cluster-route', "no-cors fetch of the console's /kube cluster route", Boolean(n.error) || n.type === 'opaque', describe(n));
  });

  attack(async () => {
    const frame = await embed('iframe', `${CONSOLE}/`, 'frame-src');
    let readable = false;
    try { readable = Boolean(frame.el.contentDocument && frame.el.contentDocument.body); } catch { readable = false; }
    frame.el.remove();
    record('frame-the-console', '<iframe src="http://localhost:3000/"> inside the plugin page (clickjacking the console)',
      Boolean(frame.violation) && !readable, frame.violation ? `blocked by ${frame.violation.directive}` : `not blocked by CSP (${frame.event})`);
  });

  attack(async () => {
    // (Chromium shows an error page in a frame whose navigation CSP blocked: target a nested
    // frame here; the spec navigates the plugin frame itself.)
    const sinkFrame = sink('navigation-sink');
    const f = await submitForm({ action: secretsUrl, method: 'GET', target: 'navigation-sink' });
    sinkFrame.remove();
    record('gateway-navigation', 'form GET of the gateway secrets into a nested frame',
      f.refused, f.violation ? `blocked by ${f.violation.directive}` : f.threw ?? 'submitted');
    const frame = await embed('iframe', secretsUrl, 'frame-src');
    frame.el.remove();
    record('gateway-navigation', 'nested <iframe> navigated to the gateway secrets',
      Boolean(frame.violation), frame.violation ? `blocked by ${frame.violation.directive}` : `not blocked by CSP (${frame.event})`);
  });

  // 5. The PluginToken beyond what the definition allows.
  attack(async () => {
    for (const resource of ['secrets', 'configmaps']) {
      let refused = false;
      let detail;
      try {
        const list = await within(10000, fundament.k8s.list({ version: 'v1', resource, namespace: 'default' }));
        detail = `listed ${list.items.length} ${resource}`;
      } catch (err) {
        refused = err.code === 'forbidden' && err.status === 403;
        detail = `${err.name}:${err.code}:${err.status ?? ''} ${err.message ?? ''}`;
      }
      record('token-outside-allowed-resources', `fundament.k8s.list ${resource} (RBAC allows, allowedResources does not)`, refused, detail);
    }
  });

  attack(async () => {
    for (const query of ['wat%63h=1', 'watch=1', 'watch=true', 'watch=1&watch=0', '%77atch=1']) {
      let status;
      try {
        const r = await within(10000, fundament.fetch(`${lootsUrl}?${query}`));
        status = r.status;
        try { await r.body?.cancel(); } catch {}
      } catch (err) {
        status = `threw ${err.code ?? err.message}`;
      }
      record('token-watch-not-allowed', `watch loots with ?${query} (list allowed, watch not)`,
        typeof status !== 'number' || status >= 400, `watch: ${status}`, { status: typeof status === 'number' ? status : null });
    }
  });

  attack(async () => {
    const body = { apiVersion: 'hostile.example.io/v1', kind: 'Loot', metadata: { name: 'hostile-created' }, spec: { value: 1 } };
    for (const [verb, call] of [
      ['create', () => fundament.k8s.create(LOOTS, body)],
      ['patch', () => fundament.k8s.patch({ ...LOOTS, name: 'treasure' }, { spec: { value: 0 } })],
      ['delete', () => fundament.k8s.delete({ ...LOOTS, name: 'trinket' })],
    ]) {
      let refused = false;
      let detail;
      try {
        await within(10000, call());
        detail = `${verb} succeeded`;
      } catch (err) {
        refused = err.code === 'forbidden' && err.status === 403;
        detail = `${err.name}:${err.code}:${err.status ?? ''} ${err.message ?? ''}`;
      }
      record('token-verb-not-allowed', `${verb} loots (RBAC allows every verb, allowedResources only get/list)`, refused, detail);
    }
  });

  attack(async () => {
    const a = await tryFetch(`${lootsUrl}/some-name`, {
      method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'hostile.example.io/v1', kind: 'Loot', metadata: { name: 'some-name' } }),
    });
    record('token-post-named', 'POST to a named object path …/loots/some-name', corsRefused(a), describe(a), { status: a.status ?? null });
  });

  attack(async () => {
    const a = await tryFetch(`${GW}/clusters/${OTHER_CLUSTER}/apis/hostile.example.io/v1/namespaces/default/loots`, { headers: bearer() });
    record('token-other-cluster', 'the PluginToken on the restricted cluster', corsRefused(a), describe(a), { status: a.status ?? null });
  });

  attack(async () => {
    const a = await tryFetch(`${AUTHN}/authn.v1.TokenService/MintPluginToken`, {
      method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/json' }, body: mintBody,
    });
    record('token-at-authn', 'the PluginToken as bearer at authn MintPluginToken (from the page)', corsRefused(a), describe(a));
    const u = await tryFetch(`${AUTHN}/authn.v1.AuthnService/GetUserInfo`, {
      method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/json' }, body: '{}',
    });
    record('token-at-authn', 'the PluginToken as bearer at authn GetUserInfo (from the page)', corsRefused(u), describe(u));
  });

  attack(async () => {
    for (const path of ['/version', '/api/v1/namespaces', '/api/v1/namespaces/default', '/openapi/v2']) {
      const a = await tryFetch(gw(path), { headers: bearer() });
      record('token-as-user', `the PluginToken on ${path}`, corsRefused(a), describe(a), { status: a.status ?? null });
    }
  });

  attack(async () => {
    const path = '/api/v1/namespaces/plugin-acme-corp--hostile/services/http:plugin-acme-corp--hostile:8080/proxy/console/steal.html';
    const a = await tryFetch(gw(path), { headers: bearer() });
    record('token-service-proxy', "the PluginToken on the service proxy of the plugin's own runtime", corsRefused(a), describe(a), { status: a.status ?? null });
  });

  attack(async () => {
    for (const path of [
      '/api/v1/namespaces/default/%73ecrets',
      '/apis/hostile.example.io/v1/namespaces/default/loots%2F..%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fsecrets',
      '/apis/hostile.example.io/v1/namespaces/default/loots/..%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fnamespaces%2Fdefault%2Fsecrets',
    ]) {
      const a = await tryFetch(gw(path), { headers: bearer() });
      const leaked = !a.error && a.ok && /SecretList|"kind":"Secret"/.test(a.text ?? '');
      record('token-encoded-path', `the PluginToken on ${path}`, corsRefused(a) && !leaked, describe(a), { status: a.status ?? null });
    }
  });

  attack(async () => {
    const a = await tryFetch(secretsUrl, { headers: { ...bearer(), 'Impersonate-User': 'system:admin', 'Impersonate-Group': 'system:masters' } });
    record('token-impersonate', 'the PluginToken with Impersonate-User/Group headers on secrets', corsRefused(a), describe(a), { status: a.status ?? null });
  });

  // 6. Browser features.
  attack(async () => {
    if (!('serviceWorker' in navigator)) {
      record('service-worker-scope', "register sw.js with scope '/'", true, 'navigator.serviceWorker is not available in this frame');
      return;
    }
    for (const scope of ['/', '/clusters/']) {
      let refused = false;
      let detail;
      try {
        const reg = await within(8000, navigator.serviceWorker.register('sw.js', { scope }));
        detail = `registered with scope ${reg.scope}`;
        try { await reg.unregister(); } catch {}
      } catch (err) {
        refused = true;
        detail = `rejected: ${err.name}: ${err.message}`;
      }
      record('service-worker-scope', `register sw.js with scope '${scope}' (above its directory)`, refused, detail);
    }
  });

  attack(async () => {
    const reads = [
      ['window.parent.document', () => window.parent.document.body.innerHTML.length],
      ['parent.location.href', () => window.parent.location.href],
      ['top.document.cookie', () => window.top.document.cookie],
      ['parent.localStorage', () => window.parent.localStorage.length],
    ];
    for (const [what, read] of reads) {
      let refused = false;
      let detail;
      try {
        detail = `read: ${String(read()).slice(0, 100)}`;
      } catch (err) {
        refused = true;
        detail = `${err.name}: ${err.message}`;
      }
      record('parent-dom', `read ${what}`, refused, detail);
    }
  });

  attack(async () => {
    let popup = null;
    let detail;
    try {
      popup = window.open(`${CONSOLE}/?pwned=popup`, '_blank');
      detail = `window.open returned ${popup === null ? 'null' : 'a window'}`;
    } catch (err) {
      detail = `threw ${err.name}: ${err.message}`;
    }
    if (popup) { try { popup.close(); } catch {} }
    record('popup', 'window.open a console URL', popup === null, detail, { verifiedBy: 'spec' });
  });

  // 7. The console's frame host.
  attack(async () => {
    const heights = [];
    const onResize = () => heights.push(window.innerHeight);
    window.addEventListener('resize', onResize);
    const before = window.innerHeight;
    window.__hostileSpoof = [
      { type: 'plugin:navigate', name: '../../evil' },
      { type: 'plugin:navigate', name: 'treasure', namespace: 'default' },
      { type: 'plugin:navigate-back' },
      { type: 'plugin:create' },
      { type: 'plugin:resize', height: 4321 },
      { type: 'plugin:resize', height: 1e9 },
      { type: 'plugin:request-token-refresh' },
    ];
    const left = leaving();
    const spoofFrame = document.createElement('iframe');
    spoofFrame.hidden = true;
    spoofFrame.title = 'spoof';
    const done = new Promise((resolve) => {
      const onMessage = (e) => {
        if (e.source === spoofFrame.contentWindow && e.data && e.data.type === 'hostile:spoof-done') {
          window.removeEventListener('message', onMessage);
          resolve(e.data.sent);
        }
      };
      window.addEventListener('message', onMessage);
      setTimeout(() => resolve(null), 5000);
    });
    const src = new URL('spoof.js', location.href).href.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
    spoofFrame.srcdoc = `<!doctype html><title>spoof</title><script src="${src}"></script>`;
    document.body.append(spoofFrame);
    const sent = await done;
    // Invalid payloads from the real frame, to the pinned origin.
    const invalid = [
      { type: 'plugin:navigate', name: '../../evil' },
      { type: 'plugin:navigate', name: 'treasure', namespace: '../x' },
      { type: 'plugin:navigate', name: 'x'.repeat(300) },
      { type: 'plugin:navigate', name: 'TREASURE' },
      { type: 'plugin:navigate', name: 'treasure?evil=1' },
      { type: 'plugin:navigate', name: 'treasure#evil' },
      { type: 'plugin:navigate', name: '%2e%2e' },
      { type: 'plugin:navigate', name: ['treasure'] },
      { type: 'plugin:navigate', name: { toString: 'treasure' } },
      { type: 'plugin:resize', height: '4321' },
      { type: 'plugin:resize', height: -1 },
      { type: 'plugin:resize', height: Number.NaN },
    ];
    for (const m of invalid) {
      try { window.parent.postMessage(m, fundament.parentOrigin); } catch {}
    }
    await sleep(1000);
    window.removeEventListener('resize', onResize);
    spoofFrame.remove();
    // The frame's inner height is the console's height minus its border: allow a few pixels.
    const moved = heights.filter((h) => Math.abs(h - 4321) <= 8 || h >= 19_900);
    record('spoofed-messages',
      'a nested same-origin frame posts plugin:navigate/create/resize/request-token-refresh to window.top; the frame posts invalid payloads',
      sent !== null && sent > 0 && moved.length === 0 && !left(),
      `nested frame sent ${sent} messages; frame heights seen: ${before} → [${heights.join(', ')}]; ${left() ? 'this frame began to unload' : 'no unload'}; the console URL is checked by the spec`,
      { verifiedBy: 'spec' });
  });

  attack(async () => {
    const heights = [];
    const resized = new Promise((resolve) => {
      const onResize = () => {
        heights.push(window.innerHeight);
        if (window.innerHeight !== before) resolve();
      };
      window.addEventListener('resize', onResize);
      setTimeout(resolve, 2000);
    });
    const before = window.innerHeight;
    window.parent.postMessage({ type: 'plugin:resize', height: 1e9 }, fundament.parentOrigin);
    await resized;
    await sleep(100);
    const max = Math.max(before, window.innerHeight, ...heights);
    record('resize-clamp', 'the frame asks to be 1e9 px high', max <= 20000, `frame height ${before} → ${window.innerHeight} (max ${max})`, { height: max });
    // Back to the page's own height.
    window.parent.postMessage({ type: 'plugin:resize', height: Math.ceil(document.documentElement.getBoundingClientRect().height) }, fundament.parentOrigin);
  });

  attack(async () => {
    let refreshed = 0;
    const onMessage = (e) => {
      if (e.source === window.parent && e.data && e.data.type === 'fundament:token-refreshed') refreshed += 1;
    };
    window.addEventListener('message', onMessage);
    // 200: far past what the 5 s gap lets through, and within the 500 messages at once a frame may
    // send before the console stops it (a page flooding it is another test: plugins.spec.ts).
    for (let i = 0; i < 200; i += 1) {
      window.parent.postMessage({ type: 'plugin:request-token-refresh' }, fundament.parentOrigin);
    }
    await sleep(1500);
    window.removeEventListener('message', onMessage);
    record('refresh-flood', '200 × plugin:request-token-refresh', refreshed <= 3,
      `${refreshed} fundament:token-refreshed came back; the mints are counted by the spec`, { verifiedBy: 'spec', refreshed });
  });

  // 8. Last: attacks that would tear the page down if they worked.
  attack(async () => {
    const frame = sink('console-sink');
    const f = await submitForm({ action: `${CONSOLE}/api/sign-out`, target: 'console-sink' });
    frame.remove();
    record('console-form-post', "form POST to the console's /api/sign-out", f.refused,
      f.violation ? `blocked by ${f.violation.directive}` : f.threw ?? 'submitted', { verifiedBy: 'spec' });
    const a = await tryFetch(`${CONSOLE}/api/sign-out`, { method: 'POST', mode: 'no-cors', credentials: 'include' });
    record('console-form-post', "no-cors fetch POST to the console's /api/sign-out", Boolean(a.error) || a.type === 'opaque',
      describe(a), { verifiedBy: 'spec' });
  });

  attack(async () => {
    const target = `${CONSOLE}/?pwned=top-navigation`;
    const tries = [
      ['window.top.location.href = …', () => { window.top.location.href = target; }],
      ['window.top.location.replace(…)', () => { window.top.location.replace(target); }],
      ['<a target=_top>.click()', () => {
        const a = document.createElement('a');
        a.href = target;
        a.target = '_top';
        document.body.append(a);
        a.click();
        a.remove();
      }],
    ];
    for (const [what, run] of tries) {
      const left = leaving();
      let detail;
      let threw = false;
      try { run(); detail = 'no exception'; } catch (err) { threw = true; detail = `threw ${err.name}: ${err.message}`; }
      // A top navigation that starts unloads this frame too (beforeunload, pagehide): wait for it.
      if (!threw) await sleep(700);
      const unloaded = left();
      record('top-navigation', what, threw || !unloaded,
        `${detail}; ${unloaded ? 'this frame began to unload' : 'this frame did not begin to unload'}; the console URL is checked by the spec`,
        { verifiedBy: 'spec' });
    }
    const left = leaving();
    const f = await submitForm({ action: target, method: 'GET', target: '_top' });
    if (!f.refused) await sleep(700);
    const unloaded = left();
    record('top-navigation', 'form GET target=_top to the console', f.refused || !unloaded,
      `${f.violation ? `blocked by ${f.violation.directive}` : f.threw ?? 'submitted'}; ${unloaded ? 'this frame began to unload' : 'this frame did not begin to unload'}; the console URL is checked by the spec`,
      { verifiedBy: 'spec' });
  });

  for (const run of attacks) {
    try {
      await run();
    } catch (err) {
      record('page-error', 'an attack crashed', false, `${err.name}: ${err.message}`);
    }
  }
}

/** Called by the spec with bob's UserToken: plant it where the console might read it. */
export function plantCookies(bobToken) {
  const plants = [
    `__Host-fundament_auth=${bobToken}; Path=/projects; Secure`,
    `__Host-fundament_auth=${bobToken}; Path=/projects`,
    `fundament_auth=${bobToken}; domain=localhost; path=/projects`,
    `=__Host-fundament_auth=${bobToken}; domain=localhost; path=/`,
    `__host-fundament_auth=${bobToken}; domain=localhost; path=/projects; Secure`,
  ];
  for (const plant of plants) {
    const before = document.cookie;
    try { document.cookie = plant; } catch {}
    const stored = document.cookie !== before && document.cookie.includes(bobToken);
    record('cookie-planted', `document.cookie = "${plant.replace(bobToken, '<bob token>')}"`, !stored,
      stored ? 'the browser stored it; the console user is checked by the spec' : 'the browser refused it', { verifiedBy: 'spec' });
  }
}

/** Called by the spec with another installation's PluginToken (cert-manager's, from the CLI). */
export async function useForeignToken(gatewayUrl, clusterId, foreign) {
  const a = await tryFetch(`${gatewayUrl}/clusters/${clusterId}/apis/cert-manager.io/v1/certificates`, {
    headers: { Authorization: `Bearer ${foreign}` },
  });
  record('token-from-other-origin', "cert-manager's PluginToken used from the hostile origin", corsRefused(a), describe(a), { status: a.status ?? null });
  return a;
}

/** Called by the spec with a UserToken: a plugin page that got hold of one cannot use it either. */
export async function useUserToken(gatewayUrl, clusterId, userToken) {
  const a = await tryFetch(`${gatewayUrl}/clusters/${clusterId}/api/v1/namespaces/default/secrets`, {
    headers: { Authorization: `Bearer ${userToken}` },
  });
  record('user-token-in-frame', "alice's UserToken used from the plugin origin", corsRefused(a), describe(a), { status: a.status ?? null });
  return a;
}
