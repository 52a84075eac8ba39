// The FSCInstallation create form: field checks, reading the form, and building the object.
// checkValue and buildBody are pure (they load and run under Node); the rest work on a form
// element passed in, never on module-level lookups.

import { escapeHtml } from './_shared.js';

const NAME_PATTERN = '[a-z0-9]([a-z0-9\\-]*[a-z0-9])?';
const NAME_ERROR = 'Use lowercase letters, digits and dashes.';

/**
 * The problem with `value` under `rules` ({ required, maxLength, pattern, patternError, integer,
 * min }), or '' when it is fine. Values are trimmed first; an empty optional value is fine.
 * Patterns are anchored, as the HTML `pattern` attribute is.
 */
export function checkValue(value, rules) {
  const text = String(value ?? '').trim();
  if (!text) return rules.required ? 'This field is required.' : '';
  if (rules.maxLength && text.length > rules.maxLength) return `Use at most ${rules.maxLength} characters.`;
  if (rules.pattern && !new RegExp(`^(?:${rules.pattern})$`).test(text)) {
    return rules.patternError || 'Enter a valid value.';
  }
  if (rules.integer) {
    const number = Number(text);
    if (!Number.isInteger(number)) return 'Enter a whole number.';
    if (rules.min !== undefined && number < rules.min) return `Enter a value of at least ${rules.min}.`;
  }
  return '';
}

/** The rules an input declares with its attributes. */
function rulesOf(input) {
  const maxLength = Number(input.getAttribute('maxlength')) || undefined;
  const min = input.getAttribute('min');
  return {
    required: input.required,
    maxLength,
    pattern: input.getAttribute('pattern') || undefined,
    patternError: input.dataset.error,
    integer: input.type === 'number',
    min: min === null ? undefined : Number(min),
  };
}

function showError(input, message) {
  const errorId = `${input.id}-error`;
  input.closest('.plugin-field')?.querySelector(`#${CSS.escape(errorId)}`)?.remove();
  const described = (input.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .filter((id) => id && id !== errorId);
  if (message) {
    const box = `<p class="plugin-error" id="${escapeHtml(errorId)}">${escapeHtml(message)}</p>`;
    input.insertAdjacentHTML('afterend', box);
    described.push(errorId);
    input.setAttribute('aria-invalid', 'true');
  } else {
    input.removeAttribute('aria-invalid');
  }
  if (described.length) input.setAttribute('aria-describedby', described.join(' '));
  else input.removeAttribute('aria-describedby');
}

/** Whether every text input of a gateway row is empty: such a row is ignored, not refused. */
function isBlankRow(row) {
  return [...row.querySelectorAll('input')].every((input) => !input.value.trim());
}

/**
 * Checks every enabled, visible text field of `form`, shows each problem under its field and
 * returns the first invalid input (or null). Inputs of the hidden External fieldset (Self mode)
 * and of blank gateway rows take no part.
 */
export function validateForm(form) {
  let first = null;
  for (const input of form.querySelectorAll('input:not([type="checkbox"]), select')) {
    const row = input.closest('[data-gateway]');
    const skipped = input.matches(':disabled') || input.closest('[hidden]') || (row && isBlankRow(row));
    let message = skipped ? '' : checkValue(input.value, rulesOf(input));
    if (!skipped && !message && input.validity?.badInput) message = 'Enter a whole number.';
    showError(input, message);
    if (message && !first) first = input;
  }
  return first;
}

/** Clears the problem shown under `input`, once its value is fine again. */
export function revalidate(input) {
  if (input.getAttribute('aria-invalid') && !checkValue(input.value, rulesOf(input))) showError(input, '');
}

/** The form's values as a plain object: what buildBody takes. */
export function readValues(form) {
  const value = (name) => form.elements.namedItem(name)?.value ?? '';
  const gateways = (kind) =>
    [...form.querySelectorAll(`[data-gateway="${kind}"]`)].map((row) => ({
      name: row.querySelector('[data-field="name"]')?.value ?? '',
      selfAddress: row.querySelector('[data-field="selfAddress"]')?.value ?? '',
    }));
  return {
    name: value('metadata.name'),
    namespace: value('metadata.namespace'),
    groupID: value('spec.groupID'),
    peerID: value('spec.peerID'),
    mode: value('spec.directory.mode'),
    external: {
      address: value('spec.directory.external.address'),
      peerID: value('spec.directory.external.peerID'),
      trustAnchorName: value('spec.directory.external.trustAnchor.name'),
      trustAnchorKey: value('spec.directory.external.trustAnchor.key'),
    },
    certificate: value('spec.certificate.existingSecret'),
    managerAddress: value('spec.managerAddress'),
    controllerURL: value('spec.controllerURL'),
    autoSignGrants: [...form.querySelectorAll('input[name="spec.autoSignGrants"]:checked')].map((c) => c.value),
    postgres: {
      instances: value('spec.postgres.instances'),
      storageClass: value('spec.postgres.storageClass'),
      storageSize: value('spec.postgres.storageSize'),
      image: value('spec.postgres.image'),
    },
    inways: gateways('inway'),
    outways: gateways('outway'),
  };
}

const trim = (value) => (typeof value === 'string' ? value.trim() : '');

/** Sets `object[key]` only to a non-empty value, so the object carries no empty optionals. */
function setIf(object, key, value) {
  if (value !== '' && value !== undefined && !(Array.isArray(value) && value.length === 0)) object[key] = value;
}

/** The FSCInstallation to create from `values` (as readValues returns them): trimmed, minimal. */
export function buildBody(values) {
  const postgres = { storageClass: trim(values.postgres?.storageClass) };
  const instances = trim(values.postgres?.instances);
  if (instances) postgres.instances = Number(instances);
  setIf(postgres, 'image', trim(values.postgres?.image));
  setIf(postgres, 'storageSize', trim(values.postgres?.storageSize));

  const mode = trim(values.mode) || 'Self';
  const directory = { mode };
  if (mode === 'External') {
    const external = values.external ?? {};
    directory.external = {
      address: trim(external.address),
      peerID: trim(external.peerID),
      trustAnchor: { name: trim(external.trustAnchorName), key: trim(external.trustAnchorKey) || 'ca.crt' },
    };
  }

  const spec = { groupID: trim(values.groupID), peerID: trim(values.peerID), directory, postgres };
  const certificate = trim(values.certificate);
  if (certificate) spec.certificate = { existingSecret: certificate };
  setIf(spec, 'managerAddress', trim(values.managerAddress));
  setIf(spec, 'controllerURL', trim(values.controllerURL));
  setIf(spec, 'autoSignGrants', (values.autoSignGrants ?? []).map(trim).filter(Boolean));
  const gateways = (rows, withAddress) =>
    (rows ?? [])
      .filter((row) => trim(row.name))
      .map((row) => {
        const gateway = { name: trim(row.name) };
        if (withAddress) setIf(gateway, 'selfAddress', trim(row.selfAddress));
        return gateway;
      });
  setIf(spec, 'inways', gateways(values.inways, true));
  setIf(spec, 'outways', gateways(values.outways, false));

  return {
    apiVersion: 'openfsc.fundament.io/v1',
    kind: 'FSCInstallation',
    metadata: { name: trim(values.name), namespace: trim(values.namespace) },
    spec,
  };
}

/** The name checks of a Kubernetes object name (a DNS label), as input attributes. */
const NAME_ATTRIBUTES = `required maxlength="63" pattern="${escapeHtml(NAME_PATTERN)}" data-error="${escapeHtml(NAME_ERROR)}"`;

/** The namespace control: the project's namespaces when the console sent any, else a checked text field. */
export function namespaceFieldHtml(namespaces) {
  const label = '<label class="plugin-label" for="namespace">Namespace</label>';
  if (Array.isArray(namespaces) && namespaces.length > 0) {
    const options = namespaces.map((n) => `<option value="${escapeHtml(n)}">${escapeHtml(n)}</option>`);
    return (
      `${label}<select class="plugin-select" id="namespace" name="metadata.namespace" required>` +
      `${options.join('')}</select>`
    );
  }
  return (
    `${label}<input class="plugin-input" id="namespace" name="metadata.namespace" autocomplete="off" ` +
    `${NAME_ATTRIBUTES} placeholder="my-namespace">`
  );
}

/** One inway (with its public address) or outway row; `seq` keeps ids unique. */
export function gatewayRowHtml(kind, seq) {
  const id = `${kind}-${seq}`;
  const field = (label, name, attributes) =>
    `<div class="plugin-field"><label class="plugin-label" for="${id}-${name}">${label}</label>` +
    `<input class="plugin-input" id="${id}-${name}" data-field="${name}" autocomplete="off" ${attributes}></div>`;
  const address =
    kind === 'inway'
      ? field(
          'Self address',
          'selfAddress',
          'type="url" pattern="https://.+" data-error="Must start with https://" placeholder="https://inway.example.org"',
        )
      : '';
  const remove =
    `<button type="button" class="plugin-button-secondary" data-remove aria-label="Remove ${kind} ${seq}">` +
    'Remove</button>';
  return `<div class="plugin-row" data-gateway="${kind}">${field('Name', 'name', NAME_ATTRIBUTES)}${address}${remove}</div>`;
}
