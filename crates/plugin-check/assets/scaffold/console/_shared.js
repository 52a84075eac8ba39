// Helpers shared by the {{name}} pages. The SDK (plugin-sdk.js, loaded by each page before its
// module) sets window.fundament. The page CSP forbids inline scripts and styles: every page is
// static HTML plus one module, and builds its DOM with textContent/append, never innerHTML.

export const WIDGETS = { group: '{{group}}', version: 'v1', resource: 'widgets' };

/** A table cell with `content` (text or a node). */
export function cell(content) {
  const td = document.createElement('td');
  td.append(content ?? '—');
  return td;
}

/** A table row spanning `columns` with a sentence; an alert when `error`. */
export function messageRow(columns, text, error = false) {
  const tr = document.createElement('tr');
  const td = document.createElement('td');
  td.colSpan = columns;
  const p = document.createElement(error ? 'div' : 'p');
  p.className = error ? 'plugin-error' : 'plugin-text';
  if (error) p.setAttribute('role', 'alert');
  p.textContent = text;
  td.append(p);
  tr.append(td);
  return tr;
}

/**
 * What to tell the user about a failed call. `err` is a fundament.SdkError with a `code`:
 * see "Errors" in the SDK's README.
 */
export function errorText(err) {
  switch (err?.code) {
    case 'forbidden':
      return 'You may not see widgets here.';
    case 'unauthorized':
      return 'The console could not sign this page in; retrying…';
    case 'timeout':
      return 'The cluster did not answer in time.';
    default:
      return `Failed to load: ${err?.message ?? err}`;
  }
}

/**
 * When the console could not mint a token (`mint_failed`) it keeps trying: wait for its next
 * token, then draw again. Other failures stay shown.
 */
export async function whenTokenReturns(err, draw) {
  if (err?.code !== 'unauthorized' || err.reason !== 'mint_failed') return;
  for (;;) {
    try {
      await window.fundament.getToken();
      return draw();
    } catch (again) {
      if (again?.reason && again.reason !== 'mint_failed') return;
    }
  }
}
