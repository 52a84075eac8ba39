// Helpers shared by the OpenFSC pages: escaping and formatting, the pieces of markup the pages
// draw, and the navigation messages to the console. Nothing here touches the DOM or
// window.fundament at import time, so it also loads under Node.

export const GROUP = 'openfsc.fundament.io';
export const VERSION = 'v1';
export const RESOURCE = 'fscinstallations';

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

/** Whether `value` is an absolute http(s) URL: only those become links (never `javascript:`). */
export function isHttpUrl(value) {
  if (typeof value !== 'string') return false;
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
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

/** A table with a header row of `headers` and a row of escaped cells per entry of `rows`. */
export function renderTable(headers, rows) {
  const head = headers.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('');
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(displayText(cell))}</td>`).join('')}</tr>`);
  return `<table class="plugin-table"><thead><tr>${head}</tr></thead><tbody>${body.join('')}</tbody></table>`;
}

/** The conditions of an object as a table, or a sentence saying there are none. */
export function renderConditionsTable(conditions, now = Date.now()) {
  if (!Array.isArray(conditions) || conditions.length === 0) {
    return '<p class="plugin-text">No conditions reported.</p>';
  }
  return renderTable(
    ['Type', 'Status', 'Reason', 'Message', 'Age'],
    conditions.map((c) => [c.type, c.status, c.reason, c.message, formatAge(c.lastTransitionTime, now)]),
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

/** A titled section of a page. */
export function section(title, body) {
  return `<section><h2>${escapeHtml(title)}</h2>${body}</section>`;
}

function postToConsole(message) {
  const fundament = globalThis.fundament;
  window.parent.postMessage(message, fundament?.parentOrigin ?? '*');
}

/** Asks the console to open the detail view of `name` in `namespace`. */
export function navigateToDetail(name, namespace) {
  postToConsole(namespace ? { type: 'plugin:navigate', name, namespace } : { type: 'plugin:navigate', name });
}

/** Asks the console to open the create view of this kind. */
export function navigateToCreate() {
  postToConsole({ type: 'plugin:create' });
}

/** Asks the console to go back to the list. */
export function navigateBack() {
  postToConsole({ type: 'plugin:navigate-back' });
}
