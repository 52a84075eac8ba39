// Helpers shared by the cert-manager pages: escaping and formatting, the pieces of markup every
// page draws, navigation messages to the console, and the list and detail page skeletons.
// Nothing here touches the DOM or window.fundament at import time, so it also loads under Node.

export const GROUP = 'cert-manager.io';
export const VERSION = 'v1';

/** The SDK global, set by plugin-sdk.js (a classic script that runs before this module). */
export function sdk() {
  const fundament = globalThis.fundament;
  if (!fundament) throw new Error('plugin-sdk.js did not load');
  return fundament;
}

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for element content and quoted attribute values. */
export function escapeHtml(value) {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Age of an RFC 3339 timestamp like kubectl prints it (`42s`, `5m`, `3h`, `12d`); '' if unknown. */
export function formatAge(timestamp, now = Date.now()) {
  if (!timestamp) return '';
  const then = Date.parse(timestamp);
  if (Number.isNaN(then)) return '';
  const seconds = Math.max(0, Math.floor((now - then) / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h`;
  return `${Math.floor(hours / 24)}d`;
}

/** The condition of `type` in `object.status.conditions`, if any. */
export function findCondition(object, type) {
  const conditions = object?.status?.conditions;
  return Array.isArray(conditions) ? conditions.find((c) => c?.type === type) : undefined;
}

/** `Ready`, `Not ready`, the raw status (`Unknown`), or `—` without a Ready condition. */
export function readyText(object) {
  const ready = findCondition(object, 'Ready');
  if (!ready) return '—';
  if (ready.status === 'True') return 'Ready';
  if (ready.status === 'False') return 'Not ready';
  return ready.status || '—';
}

/** A CertificateRequest's approval: a denial wins over an approval; neither is pending. */
export function approvedText(request) {
  if (findCondition(request, 'Denied')?.status === 'True') return 'Denied';
  if (findCondition(request, 'Approved')?.status === 'True') return 'Approved';
  return 'Pending';
}

const ISSUER_TYPES = ['acme', 'ca', 'selfSigned', 'vault', 'venafi'];

/** Which kind of issuer an (Cluster)Issuer is: the spec key that configures it. */
export function issuerType(issuer) {
  const spec = issuer?.spec ?? {};
  return ISSUER_TYPES.find((type) => type in spec) ?? Object.keys(spec)[0] ?? '—';
}

/** `Kind/name` of an issuerRef (`Issuer` when the kind is left out, as cert-manager defaults it). */
export function issuerRefText(ref) {
  if (!ref?.name) return '—';
  return `${ref.kind || 'Issuer'}/${ref.name}`;
}

/** A value as display text: lists joined, booleans spelled out, missing as `—`. */
export function displayText(value) {
  if (value === undefined || value === null || value === '') return '—';
  if (Array.isArray(value)) return value.length ? value.join(', ') : '—';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  return String(value);
}

/** A definition list of `[label, value]` rows; a value `{ html }` is inserted as is (already escaped). */
export function renderDefList(rows) {
  const items = rows.map(([label, value]) => {
    const shown = value && typeof value === 'object' && 'html' in value ? value.html : escapeHtml(displayText(value));
    return `<dt>${escapeHtml(label)}</dt><dd>${shown}</dd>`;
  });
  return `<dl class="plugin-deflist">${items.join('')}</dl>`;
}

/** The conditions of an object as a table, or a sentence saying there are none. */
export function renderConditionsTable(conditions, now = Date.now()) {
  if (!Array.isArray(conditions) || conditions.length === 0) {
    return '<p class="plugin-text">No conditions reported.</p>';
  }
  const rows = conditions.map(
    (c) =>
      `<tr><td>${escapeHtml(c.type)}</td><td>${escapeHtml(c.status)}</td><td>${escapeHtml(c.reason)}</td>` +
      `<td>${escapeHtml(c.message)}</td><td>${escapeHtml(formatAge(c.lastTransitionTime, now))}</td></tr>`,
  );
  return (
    '<table class="plugin-table"><thead><tr><th scope="col">Type</th><th scope="col">Status</th>' +
    '<th scope="col">Reason</th><th scope="col">Message</th><th scope="col">Age</th></tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table>`
  );
}

/** A table row spanning `columns` with a plain sentence. */
export function emptyRow(columns, text) {
  return `<tr><td colspan="${Number(columns)}">${escapeHtml(text)}</td></tr>`;
}

/** A table row spanning `columns` that reports a failed load. */
export function errorRow(columns, message) {
  return `<tr><td colspan="${Number(columns)}">${errorBox(`Failed to load: ${message}`)}</td></tr>`;
}

/** An alert box with `text`. */
export function errorBox(text) {
  return `<div class="plugin-error" role="alert">${escapeHtml(text)}</div>`;
}

/** The message of anything thrown (an SdkError, an Error, or worse). */
export function errorMessage(error) {
  return error?.message || String(error);
}

function postToConsole(message) {
  const fundament = globalThis.fundament;
  window.parent.postMessage(message, fundament?.parentOrigin ?? '*');
}

/** Asks the console to open the detail view of `name` (in `namespace`, for namespaced kinds). */
export function navigateToDetail(name, namespace) {
  postToConsole(namespace ? { type: 'plugin:navigate', name, namespace } : { type: 'plugin:navigate', name });
}

/**
 * Fills `#rows` with one row per object of `resource` in every namespace. `columns` are
 * `{ value(item) }`; the first one is the name, drawn as a link to the detail view.
 */
export function listPage({ resource, columns, emptyText }) {
  const tbody = document.getElementById('rows');
  tbody.addEventListener('click', (event) => {
    const link = event.target.closest('a[data-name]');
    if (!link) return;
    event.preventDefault();
    navigateToDetail(link.dataset.name, link.dataset.namespace);
  });
  return drawList(tbody, { resource, columns, emptyText });
}

/**
 * When the console could not mint a token (`mint_failed`), it keeps trying: wait for its next
 * token, then draw the page again. Other failures (revoked, unauthorized, HTTP errors) stay shown.
 */
export async function whenTokenReturns(error, draw) {
  const fundament = globalThis.fundament;
  if (!fundament || error?.code !== 'unauthorized' || error.reason !== 'mint_failed') return;
  for (;;) {
    try {
      await fundament.getToken();
      return draw();
    } catch (err) {
      if (err?.reason && err.reason !== 'mint_failed') return;
    }
  }
}

async function drawList(tbody, { resource, columns, emptyText }) {
  try {
    const fundament = sdk();
    await fundament.init;
    const { items = [] } = await fundament.k8s.list({ group: GROUP, version: VERSION, resource });
    if (items.length === 0) {
      tbody.innerHTML = emptyRow(columns.length, emptyText);
      return;
    }
    const now = Date.now();
    tbody.innerHTML = sortByNamespaceAndName(items)
      .map((item) => {
        const [first, ...rest] = columns.map((column) => escapeHtml(column.value(item, now)));
        const { name, namespace = '' } = item.metadata ?? {};
        const target = `data-name="${escapeHtml(name)}" data-namespace="${escapeHtml(namespace)}"`;
        const link = `<a href="#" ${target}>${first}</a>`;
        return `<tr><td>${link}</td>${rest.map((cell) => `<td>${cell}</td>`).join('')}</tr>`;
      })
      .join('');
  } catch (error) {
    tbody.innerHTML = errorRow(columns.length, errorMessage(error));
    await whenTokenReturns(error, () => drawList(tbody, { resource, columns, emptyText }));
  }
}

function sortByNamespaceAndName(items) {
  const key = (item) => `${item.metadata?.namespace ?? ''}/${item.metadata?.name ?? ''}`;
  return [...items].sort((a, b) => key(a).localeCompare(key(b)));
}

/**
 * Fills `#content` with the object the console asked for: `render(object)` returns its markup,
 * and the heading becomes `<title> · <name>`. Without a selected object, `noneText` is shown.
 */
export async function detailPage(options) {
  const { resource, title, noneText, render } = options;
  const heading = document.getElementById('heading');
  const content = document.getElementById('content');
  try {
    const fundament = sdk();
    const context = await fundament.init;
    const name = context.resource?.name;
    if (!name) {
      content.innerHTML = `<p class="plugin-text">${escapeHtml(noneText)}</p>`;
      return;
    }
    heading.textContent = `${title} · ${name}`;
    const namespace = context.resource.namespace || undefined;
    const object = await fundament.k8s.get({ group: GROUP, version: VERSION, resource, name, namespace });
    content.innerHTML = render(object, Date.now());
  } catch (error) {
    content.innerHTML = errorBox(`Failed to load: ${errorMessage(error)}`);
    await whenTokenReturns(error, () => detailPage(options));
  }
}

/** A titled section of a detail page. */
export function section(title, body) {
  return `<section><h2>${escapeHtml(title)}</h2>${body}</section>`;
}

/** The rows describing how an Issuer or ClusterIssuer issues, for its type. */
export function issuerSpecRows(issuer) {
  const spec = issuer?.spec ?? {};
  const type = issuerType(issuer);
  const rows = [['Type', type]];
  if (spec.acme) {
    rows.push(['ACME server', spec.acme.server], ['Email', spec.acme.email]);
    rows.push(['Account key secret', spec.acme.privateKeySecretRef?.name]);
  } else if (spec.ca) {
    rows.push(['CA secret', spec.ca.secretName]);
  } else if (spec.vault) {
    rows.push(['Vault server', spec.vault.server], ['Vault path', spec.vault.path]);
  } else if (spec.venafi) {
    rows.push(['Venafi zone', spec.venafi.zone]);
  }
  return rows;
}
