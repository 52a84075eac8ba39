// Create an FSC installation: fill the form, check it here, create it through the SDK, then open
// the created installation. Back returns to the list.
import { buildBody, gatewayRowHtml, namespaceFieldHtml, readValues, revalidate, validateForm } from './_form.js';
import { GROUP, RESOURCE, VERSION, errorMessage, navigateBack, navigateToDetail, sdk } from './_shared.js';

const form = document.getElementById('form');
const intro = document.getElementById('intro');
const error = document.getElementById('error');
const submit = document.getElementById('submit');
const external = document.getElementById('external');
let rows = 0;

/** External mode shows (and enables) the external directory fields; Self mode leaves them out. */
function applyMode() {
  const isExternal = form.elements.namedItem('spec.directory.mode').value === 'External';
  external.hidden = !isExternal;
  external.disabled = !isExternal;
}

function addGateway(kind) {
  rows += 1;
  document.getElementById(`${kind}s`).insertAdjacentHTML('beforeend', gatewayRowHtml(kind, rows));
  document.getElementById(`${kind}-${rows}-name`).focus();
}

function showError(text) {
  error.textContent = text;
  error.hidden = !text;
}

async function create(event) {
  event.preventDefault();
  showError('');
  const invalid = validateForm(form);
  if (invalid) {
    invalid.focus();
    return;
  }
  const body = buildBody(readValues(form));
  const { name, namespace } = body.metadata;
  submit.disabled = true;
  submit.textContent = 'Creating…';
  try {
    const created = await sdk().k8s.create({ group: GROUP, version: VERSION, resource: RESOURCE, namespace }, body);
    navigateToDetail(created?.metadata?.name ?? name, namespace);
  } catch (err) {
    showError(`Failed to create: ${errorMessage(err)}`);
    submit.disabled = false;
    submit.textContent = 'Create installation';
  }
}

async function main() {
  document.getElementById('back').addEventListener('click', navigateBack);
  document.getElementById('add-inway').addEventListener('click', () => addGateway('inway'));
  document.getElementById('add-outway').addEventListener('click', () => addGateway('outway'));
  form.elements.namedItem('spec.directory.mode').addEventListener('change', applyMode);
  form.addEventListener('click', (event) => event.target.closest('[data-remove]')?.closest('[data-gateway]')?.remove());
  form.addEventListener('input', (event) => revalidate(event.target));
  form.addEventListener('submit', create);
  try {
    const context = await sdk().init;
    if (Array.isArray(context.namespaces) && context.namespaces.length > 0) {
      document.getElementById('namespace-field').innerHTML = namespaceFieldHtml(context.namespaces);
    }
    applyMode();
    intro.textContent =
      'An FSC installation runs a manager, its own directory or a link to another, a database, inways and outways.';
    form.hidden = false;
  } catch (err) {
    intro.textContent = `Failed to load: ${errorMessage(err)}`;
  }
}

main();
